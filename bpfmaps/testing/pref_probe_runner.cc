#include "bpfmaps/testing/pref_probe_runner.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bpfmaps/pinned_maps.h"
#include "bpfmaps/schedcache_maps.h"

namespace schedcache::test_support {

absl::StatusOr<PrefProbeRunner> PrefProbeRunner::Load(
    const std::string& object_path, const std::string& pin_dir) {
  std::unique_ptr<bpf_object, ObjectCloser> object(
      bpf_object__open_file(object_path.c_str(), nullptr));
  if (!object) {
    return absl::InternalError(
        absl::StrCat("open ", object_path, ": ", std::strerror(errno)));
  }
  for (const char* name :
       {SCHEDCACHE_PREFS_MAP_NAME, SCHEDCACHE_LLCS_MAP_NAME}) {
    const std::string path = absl::StrCat(pin_dir, "/", name);
    bpf_map* map = bpf_object__find_map_by_name(object.get(), name);
    const MapFd pinned(bpf_obj_get(path.c_str()));
    if (map == nullptr || pinned.get() < 0 ||
        bpf_map__reuse_fd(map, pinned.get()) != 0) {
      return absl::InternalError(
          absl::StrCat("reusing ", path, ": ", std::strerror(errno)));
    }
  }
  if (bpf_object__load(object.get()) != 0) {
    return absl::InternalError(
        absl::StrCat("loading ", object_path, ": ", std::strerror(errno)));
  }
  return PrefProbeRunner(std::move(object));
}

absl::StatusOr<pref_probe_ctx> PrefProbeRunner::Run(uint32_t tgid) const {
  // Outputs start at values the program never writes, so an output it
  // failed to set shows.
  pref_probe_ctx ctx{
      .tgid = tgid, .llc = -2, .cpu = -2, .in_mask = 2, .now_ns = 0};
  bpf_program* program =
      bpf_object__find_program_by_name(object_.get(), "pref_probe");
  if (program == nullptr) {
    return absl::InternalError("the object has no program pref_probe");
  }
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &ctx,
              .ctx_size_in = sizeof(ctx));
  if (bpf_prog_test_run_opts(bpf_program__fd(program), &opts) != 0) {
    return absl::InternalError(absl::StrCat(
        "BPF_PROG_TEST_RUN of pref_probe: ", std::strerror(errno)));
  }
  if (opts.retval != 0) {
    return absl::InternalError(
        absl::StrCat("pref_probe returned ", opts.retval));
  }
  return ctx;
}

}  // namespace schedcache::test_support
