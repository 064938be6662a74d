// PrefProbeRunner loads pref_probe.bpf.o with its `prefs` and `llcs` maps
// replaced by pinned ones (as a scheduler reuses the mirror's maps) and
// runs it through BPF_PROG_TEST_RUN: what a BPF program, through the
// layout header's helper, gets for a tgid.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_BPFMAPS_TESTING_PREF_PROBE_RUNNER_H_
#define SCHEDCACHE_BPFMAPS_TESTING_PREF_PROBE_RUNNER_H_

#include <bpf/libbpf.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "bpfmaps/testing/pref_probe.h"

namespace schedcache::test_support {

class PrefProbeRunner {
 public:
  // Load opens the BPF object file `object_path`, points its maps at
  // `pin_dir`/prefs and `pin_dir`/llcs, and loads it into the kernel.
  // Errors name the step, the path and errno's text.
  static absl::StatusOr<PrefProbeRunner> Load(const std::string& object_path,
                                              const std::string& pin_dir);

  // Run runs the program for `tgid` and returns its context as the kernel
  // copied it back.
  absl::StatusOr<pref_probe_ctx> Run(uint32_t tgid) const;

 private:
  struct ObjectCloser {
    void operator()(bpf_object* object) const { bpf_object__close(object); }
  };
  explicit PrefProbeRunner(std::unique_ptr<bpf_object, ObjectCloser> object)
      : object_(std::move(object)) {}

  std::unique_ptr<bpf_object, ObjectCloser> object_;
};

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_BPFMAPS_TESTING_PREF_PROBE_RUNNER_H_
