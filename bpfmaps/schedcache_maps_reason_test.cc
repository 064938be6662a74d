// The reason codes of the pinned maps (bpfmaps/schedcache_maps.h) are the
// API's NoPreferenceReason numbers: a BPF reader and a gRPC client must
// decode one code the same way. Each pair is checked at compile time; the
// test checks that the API has no reason the header lacks.
#include "gtest/gtest.h"
#include "bpfmaps/schedcache_maps.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {
namespace {

// SameCode compares the two enums' numbers (comparing the enums directly
// is a deprecated conversion in C++20).
constexpr bool SameCode(int map_code, int api_code) {
  return map_code == api_code;
}

static_assert(SameCode(SCHEDCACHE_REASON_NONE, v1::NO_PREFERENCE_REASON_UNSPECIFIED));
static_assert(SameCode(SCHEDCACHE_REASON_NO_DATA,
                       v1::NO_PREFERENCE_REASON_NO_DATA));
static_assert(SameCode(SCHEDCACHE_REASON_SINGLE_THREAD,
                       v1::NO_PREFERENCE_REASON_SINGLE_THREAD));
static_assert(SameCode(SCHEDCACHE_REASON_TOO_MANY_THREADS,
                       v1::NO_PREFERENCE_REASON_TOO_MANY_THREADS));
static_assert(SameCode(SCHEDCACHE_REASON_FOOTPRINT_TOO_LARGE,
                       v1::NO_PREFERENCE_REASON_FOOTPRINT_TOO_LARGE));
static_assert(SameCode(SCHEDCACHE_REASON_TIMED_OUT,
                       v1::NO_PREFERENCE_REASON_TIMED_OUT));
static_assert(SameCode(SCHEDCACHE_REASON_DISABLED,
                       v1::NO_PREFERENCE_REASON_DISABLED));
static_assert(SameCode(SCHEDCACHE_REASON_NOT_CACHE_AWARE,
                       v1::NO_PREFERENCE_REASON_NOT_CACHE_AWARE));
static_assert(SameCode(SCHEDCACHE_REASON_OTHER_NUMA_NODE,
                       v1::NO_PREFERENCE_REASON_OTHER_NUMA_NODE));
static_assert(SameCode(SCHEDCACHE_REASON_EXITED,
                       v1::NO_PREFERENCE_REASON_EXITED));
static_assert(SameCode(SCHEDCACHE_REASON_EVICTED,
                       v1::NO_PREFERENCE_REASON_EVICTED));
static_assert(SameCode(SCHEDCACHE_REASON_KERNEL_NONE,
                       v1::NO_PREFERENCE_REASON_KERNEL_NONE));

TEST(SchedcacheMapsReason, TheApiHasNoReasonTheHeaderLacks) {
  // The header's codes are 0..SCHEDCACHE_REASON_KERNEL_NONE, every one paired
  // above; so is every API value when the API's are the same range.
  const google::protobuf::EnumDescriptor* reasons =
      v1::NoPreferenceReason_descriptor();
  EXPECT_EQ(reasons->value_count(), SCHEDCACHE_REASON_KERNEL_NONE + 1);
  for (int i = 0; i < reasons->value_count(); ++i) {
    EXPECT_GE(reasons->value(i)->number(), SCHEDCACHE_REASON_NONE)
        << reasons->value(i)->name();
    EXPECT_LE(reasons->value(i)->number(), SCHEDCACHE_REASON_KERNEL_NONE)
        << reasons->value(i)->name();
  }
}

}  // namespace
}  // namespace schedcache
