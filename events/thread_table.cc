#include "events/thread_table.h"

namespace schedcache {

std::string_view ExecComm(std::string_view filename) {
  const size_t slash = filename.rfind('/');
  return slash == std::string_view::npos ? filename
                                         : filename.substr(slash + 1);
}

ThreadInfo& ThreadTable::Learn(int32_t tid, int32_t tgid,
                               std::string_view comm) {
  auto [it, inserted] = threads_.try_emplace(tid);
  ThreadInfo& info = it->second;
  if (inserted) {
    info.tgid = tgid > 0 ? tgid : tid;
    info.tgid_known = tgid > 0;
    Count(info.tgid, +1);
  } else if (tgid > 0 && (!info.tgid_known || info.tgid != tgid)) {
    if (!info.exited) {
      Count(info.tgid, -1);
      Count(tgid, +1);
    }
    info.tgid = tgid;
    info.tgid_known = true;
  }
  // Most events repeat the stored comm; comparing is cheaper than copying.
  if (!comm.empty() && info.comm.view() != comm) info.comm.Assign(comm);
  return info;
}

ThreadInfo& ThreadTable::LearnNewTask(int32_t tid, uint64_t clone_flags,
                                      int32_t creator_tgid,
                                      std::string_view comm) {
  return Learn(tid, NewTaskTgid(tid, clone_flags, creator_tgid), comm);
}

void ThreadTable::MarkExited(int32_t tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end() || it->second.exited) return;
  it->second.exited = true;
  Count(it->second.tgid, -1);
}

void ThreadTable::Forget(int32_t tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) return;
  if (!it->second.exited) Count(it->second.tgid, -1);
  threads_.erase(it);
}

ThreadInfo* ThreadTable::Find(int32_t tid) {
  auto it = threads_.find(tid);
  return it == threads_.end() ? nullptr : &it->second;
}

int32_t ThreadTable::LiveThreads(int32_t tgid) const {
  auto it = live_.find(tgid);
  return it == live_.end() ? 0 : it->second;
}

void ThreadTable::Count(int32_t tgid, int32_t delta) {
  int32_t& n = live_[tgid];
  n += delta;
  if (n <= 0) live_.erase(tgid);
}

}  // namespace schedcache
