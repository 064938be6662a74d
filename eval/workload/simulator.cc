#include "eval/workload/simulator.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "common/status_macros.h"

namespace schedcache {

Simulator::Simulator(const Topology& topology, const Params& params,
                     PreferredLlcFn preferred_llc, DeterministicRandom& random,
                     EventSink& sink)
    : topology_(topology),
      params_(params),
      preferred_llc_(std::move(preferred_llc)),
      random_(random),
      machine_(params.hz, sink),
      cpus_(topology.max_cpu() + 1),
      now_ns_(params.start_ns) {
  for (const Llc& llc : topology.llcs()) {
    llc_cpus_.push_back(llc.cpus.ToVector());
  }
  queued_in_llc_.assign(llc_cpus_.size(), 0);
  position_in_llc_.assign(topology.max_cpu() + 1, 0);
  for (const std::vector<int>& cpus : llc_cpus_) {
    for (size_t i = 0; i < cpus.size(); ++i) position_in_llc_[cpus[i]] = i;
  }
  core_cpus_.resize(topology.num_cores());
  for (const schedcache::Cpu& cpu : topology.cpus()) {
    core_cpus_[cpu.core].push_back(cpu.os_index);
  }
}

int Simulator::AddThread(int32_t tgid, int32_t tid, std::string comm) {
  const bool known = std::any_of(start_llc_.begin(), start_llc_.end(),
                                 [&](const auto& p) { return p.first == tgid; });
  if (!known) {
    start_llc_.emplace_back(
        tgid, static_cast<int>(random_.UniformInt(
                  0, static_cast<int64_t>(llc_cpus_.size()) - 1)));
  }
  machine_.threads().Learn(tid, tgid, comm);
  threads_.push_back(Thread{tgid, tid, std::move(comm)});
  return static_cast<int>(threads_.size()) - 1;
}

absl::Status Simulator::Run(Behavior& behavior) {
  while (!events_.empty() && events_.Top().time_ns <= params_.end_ns) {
    const BurstEnd e = events_.Top();
    Thread& t = threads_[e.thread];
    if (e.seq != t.burst_seq) {  // stale
      events_.Pop();
      continue;
    }
    now_ns_ = e.time_ns;
    t.burst_left_ns = 0;
    t.burst_seq = kNoBurst;
    top_handled_ = true;
    RETURN_IF_ERROR(behavior.OnBurstEnd(*this, e.thread));
    if (top_handled_) {  // no burst started: the top still has to go
      top_handled_ = false;
      events_.Pop();
    }
  }
  now_ns_ = params_.end_ns;
  return machine_.Finish(params_.end_ns);
}

absl::Status Simulator::Wake(int thread, int waker, int64_t burst_ns) {
  Thread& t = threads_[thread];
  if (t.state != State::kAsleep) return absl::OkStatus();
  ++counters_.wakeups;
  const int waker_cpu = waker >= 0 ? threads_[waker].cpu : -1;
  const int cpu = SelectCpu(t, waker_cpu);
  t.burst_left_ns = burst_ns;
  t.cpu = cpu;
  if (cpus_[cpu].current < 0) return SwitchTo(cpu, thread);
  t.state = State::kQueued;
  cpus_[cpu].queue.push_back(thread);
  ++queued_in_llc_[topology_.LlcOf(cpu)];
  return absl::OkStatus();
}

absl::Status Simulator::Continue(int thread, int64_t burst_ns) {
  Thread& t = threads_[thread];
  t.burst_left_ns = burst_ns;
  Cpu& cpu = cpus_[t.cpu];
  if (now_ns_ - t.on_cpu_since_ns >= params_.slice_ns && !cpu.queue.empty()) {
    ++counters_.preemptions;
    const int next = cpu.queue.front();
    cpu.queue.pop_front();
    t.state = State::kQueued;
    cpu.queue.push_back(thread);
    return SwitchTo(t.cpu, next);
  }
  StartBurst(thread);
  return absl::OkStatus();
}

absl::Status Simulator::Block(int thread) {
  Thread& t = threads_[thread];
  t.state = State::kAsleep;
  t.burst_seq = kNoBurst;  // no burst is pending; make sure of it
  return SwitchTo(t.cpu, PickNext(t.cpu));
}

absl::Status Simulator::SwitchTo(int cpu, int next) {
  Cpu& c = cpus_[cpu];
  SwitchEvent event;
  event.timestamp_ns = now_ns_;
  event.cpu = cpu;
  if (c.current >= 0) {
    const Thread& prev = threads_[c.current];
    event.prev_tid = prev.tid;
    event.prev_tgid = prev.tgid;
    event.prev_comm = prev.comm;
  }
  c.current = next;
  if (next >= 0) {
    Thread& t = threads_[next];
    t.state = State::kRunning;
    t.cpu = cpu;
    t.on_cpu_since_ns = now_ns_;
    event.next_tid = t.tid;
    event.next_tgid = t.tgid;
    event.next_comm = t.comm;
    StartBurst(next);
  }
  return machine_.Switch(event);
}

int Simulator::PickNext(int cpu) {
  Cpu& c = cpus_[cpu];
  const int llc = topology_.LlcOf(cpu);
  if (!c.queue.empty()) {
    const int next = c.queue.front();
    c.queue.pop_front();
    --queued_in_llc_[llc];
    return next;
  }
  // Most wake-ups find an idle CPU, so most LLCs have nothing queued.
  if (queued_in_llc_[llc] == 0) return -1;
  int busiest = -1;
  size_t longest = 0;
  for (int other : llc_cpus_[llc]) {
    if (cpus_[other].queue.size() > longest) {
      longest = cpus_[other].queue.size();
      busiest = other;
    }
  }
  if (busiest < 0) return -1;
  ++counters_.steals;
  const int next = cpus_[busiest].queue.back();
  cpus_[busiest].queue.pop_back();
  --queued_in_llc_[llc];
  return next;
}

void Simulator::StartBurst(int thread) {
  Thread& t = threads_[thread];
  const BurstEnd burst{now_ns_ + t.burst_left_ns, next_seq_++, thread};
  t.burst_seq = burst.seq;
  if (top_handled_) {
    top_handled_ = false;
    events_.ReplaceTop(burst);
  } else {
    events_.Push(burst);
  }
}

Simulator::Target Simulator::TargetLlc(const Thread& t, int waker_cpu) {
  const int n = static_cast<int>(llc_cpus_.size());
  const int pref = preferred_llc_ ? preferred_llc_(t.tgid) : -1;
  if (pref >= 0 && pref < n) {
    if (!random_.Bernoulli(params_.spill_probability)) return {pref, true};
    ++counters_.spills;  // placed as if the process had no preference
  }
  if (waker_cpu >= 0) return {topology_.LlcOf(waker_cpu), false};
  if (t.cpu >= 0) return {topology_.LlcOf(t.cpu), false};
  for (const auto& [tgid, llc] : start_llc_) {
    if (tgid == t.tgid) return {llc, false};
  }
  return {0, false};
}

int Simulator::TargetCpu(int llc, const Thread& t, int waker_cpu) const {
  if (waker_cpu >= 0 && topology_.LlcOf(waker_cpu) == llc) return waker_cpu;
  if (t.cpu >= 0 && topology_.LlcOf(t.cpu) == llc) return t.cpu;
  return llc_cpus_[llc].front();
}

size_t Simulator::WrapFrom(const std::vector<int>& cpus, int target) const {
  if (target < 0) return 0;
  // A CPU is listed in its own LLC only: elsewhere its position names
  // another CPU, or none.
  const size_t at = position_in_llc_[target];
  if (at >= cpus.size() || cpus[at] != target) return 0;
  return (at + 1) % cpus.size();
}

int Simulator::IdleCoreIn(const std::vector<int>& cpus, int target) const {
  const size_t start = WrapFrom(cpus, target);
  for (size_t i = 0; i < cpus.size(); ++i) {
    const int cpu = cpus[(start + i) % cpus.size()];
    const std::vector<int>& core = core_cpus_[topology_.cpu(cpu).core];
    if (std::all_of(core.begin(), core.end(),
                    [this](int sibling) { return Idle(sibling); })) {
      return cpu;
    }
  }
  return -1;
}

int Simulator::IdleSiblingOf(int cpu) const {
  for (int sibling : core_cpus_[topology_.cpu(cpu).core]) {
    if (sibling != cpu && Idle(sibling)) return sibling;
  }
  return -1;
}

int Simulator::IdleCpuIn(const std::vector<int>& cpus, int target) const {
  const size_t start = WrapFrom(cpus, target);
  for (size_t i = 0; i < cpus.size(); ++i) {
    const int cpu = cpus[(start + i) % cpus.size()];
    if (Idle(cpu)) return cpu;
  }
  return -1;
}

int Simulator::ShortestQueueIn(const std::vector<int>& cpus,
                               int target) const {
  const size_t start = WrapFrom(cpus, target);
  int best = -1;
  size_t best_load = SIZE_MAX;
  for (size_t i = 0; i < cpus.size(); ++i) {
    const int cpu = cpus[(start + i) % cpus.size()];
    if (cpus_[cpu].queue.size() < best_load) {
      best_load = cpus_[cpu].queue.size();
      best = cpu;
    }
  }
  return best;
}

// SelectCpu follows select_idle_sibling() inside the target LLC; simulator.h
// says which of its rules are modelled.
int Simulator::SelectCpu(const Thread& t, int waker_cpu) {
  const auto [llc, preferred] = TargetLlc(t, waker_cpu);
  const std::vector<int>& cpus = llc_cpus_[llc];
  const int target = TargetCpu(llc, t, waker_cpu);
  if (Idle(target)) return target;
  const bool prev_here = t.cpu >= 0 && topology_.LlcOf(t.cpu) == llc;
  if (prev_here && Idle(t.cpu)) return t.cpu;
  if (const int core = IdleCoreIn(cpus, target); core >= 0) return core;
  if (prev_here) {
    if (const int sibling = IdleSiblingOf(t.cpu); sibling >= 0) return sibling;
  }
  if (const int idle = IdleCpuIn(cpus, target); idle >= 0) return idle;
  if (!preferred) {
    const int node = topology_.cpu(cpus.front()).numa_node;
    for (const std::vector<int>& other : llc_cpus_) {
      if (topology_.cpu(other.front()).numa_node != node) continue;
      if (const int idle = IdleCpuIn(other, -1); idle >= 0) return idle;
    }
  }
  return ShortestQueueIn(cpus, target);
}

}  // namespace schedcache
