#include "bench/scan_state.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"

namespace schedcache {

ScanState::ScanState(std::shared_ptr<const Topology> topology)
    : context_(std::move(topology), ModelTunables{}),
      full_(context_, ScanScope::kAllCpus),
      visited_(context_, ScanScope::kVisitedCpus) {}

void ScanState::Run(int32_t tgid, int32_t tid, int cpu, int64_t delta_ns,
                    bool tick, int64_t now) {
  now_ = now;
  context_.Advance(cpu, now);
  RqState& rq = context_.mutable_rq(cpu);
  rq.curr_group = GroupOf(tgid);
  rq.curr_tid = tid;
  if (tgid == process_.tgid) {
    thread_ = ThreadRef{tid, -1, cpu};
    if (!started_) process_.epoch = rq.cpu_epoch;
    started_ = true;
  }
  if (delta_ns > 0) {
    if (tgid == process_.tgid) {
      for (PolicyState* p : {&full_, &visited_}) {
        p->model.Account(p->mm, process_, cpu, delta_ns);
      }
    }
    rq.cpu_runtime += static_cast<uint64_t>(delta_ns);
  }
  if (tick && tgid == process_.tgid &&
      TickScans(process_.epoch, rq.cpu_epoch)) {
    process_.epoch = rq.cpu_epoch;
    for (PolicyState* p : {&full_, &visited_}) {
      p->model.Scan(p->mm, process_, thread_, now);
    }
  }
  if (!tick) {
    rq.curr_group = RqState::kNoGroup;
    rq.curr_tid = 0;
  }
}

absl::StatusOr<std::unique_ptr<ScanState>> ScanState::FromStream(
    const RecordedStream& stream, int32_t tgid) {
  std::unique_ptr<ScanState> state(new ScanState(stream.topology));
  state->process_ = ProcessRef{0, tgid, 0, 0};
  if (stream.events.empty()) {
    return absl::FailedPreconditionError("the stream has no events");
  }
  state->context_.Start(stream.first_timestamp_ns);
  for (const RecordingSink::Event& event : stream.events) {
    if (const Sample* s = std::get_if<Sample>(&event)) {
      if (s->tgid == tgid && s->nr_threads != kUnchangedNrThreads) {
        state->process_.nr_threads = s->nr_threads;
      }
      state->Run(s->tgid, s->tid, s->cpu, s->delta_ns, s->tick,
                 s->timestamp_ns);
    } else {
      const HandOver& h = std::get<HandOver>(event);
      RqState& rq = state->context_.mutable_rq(h.cpu);
      rq.curr_group = h.tgid == 0 ? RqState::kNoGroup : state->GroupOf(h.tgid);
      rq.curr_tid = h.tid;
      state->now_ = h.timestamp_ns;
    }
  }
  if (!state->started_) {
    return absl::FailedPreconditionError(
        absl::StrCat("process tgid ", tgid, " never ran in the stream"));
  }
  return state;
}

absl::StatusOr<std::unique_ptr<ScanState>> ScanState::Spread(
    std::shared_ptr<const Topology> topology, int stride) {
  if (stride < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("stride ", stride, " must be at least 1"));
  }
  std::unique_ptr<ScanState> state(new ScanState(std::move(topology)));
  constexpr int32_t kTgid = 4000;
  constexpr int32_t kOther = 5000;
  constexpr int64_t kStart = 1'000'000'000;
  constexpr int64_t kRunNs = 1'000'000;
  state->context_.Start(kStart);
  std::vector<int> cpus;
  state->context_.online().ForEach([&](int cpu) {
    if (cpu % stride == 0) cpus.push_back(cpu);
  });
  state->process_ =
      ProcessRef{0, kTgid, static_cast<int32_t>(cpus.size()), 0};
  int64_t now = kStart;
  for (size_t i = 0; i < cpus.size(); ++i) {
    // Every thread ran, then went to sleep (not current: a process with
    // 100+ running threads would fail invalid_nr and abort its scans).
    now += 1000;
    state->Run(kTgid, kTgid + static_cast<int32_t>(i), cpus[i], kRunNs,
               /*tick=*/false, now);
    state->Run(kOther, kOther, cpus[i], kRunNs, /*tick=*/false, now);
  }
  state->thread_ = ThreadRef{kTgid, -1, cpus.front()};
  return state;
}

ScanOutcome ScanState::Scan(ScanScope scope) {
  PolicyState& p = state(scope);
  p.mm.next_scan = now_;
  context_.Advance(thread_.cpu, now_);
  process_.epoch = std::max(process_.epoch, context_.rq(thread_.cpu).cpu_epoch);
  return p.model.Scan(p.mm, process_, thread_, now_);
}

int ScanState::PreferredLlc(ScanScope scope) const {
  const PolicyState& p = state(scope);
  return p.model.PreferredLlc(p.mm);
}

}  // namespace schedcache
