# Every external dependency, found once. All come from Debian 12 packages
# (see .ci/install-deps).
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)
# Protobuf 3.21 on Debian ships no CMake config: use CMake's FindProtobuf.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.9)
find_package(ZLIB REQUIRED)
# host/'s live collector: Debian 12's libtracefs 1.6 and libtraceevent 1.7.
pkg_check_modules(TRACEFS REQUIRED IMPORTED_TARGET libtracefs>=1.6)
pkg_check_modules(TRACEEVENT REQUIRED IMPORTED_TARGET libtraceevent>=1.7)
if(SCHEDCACHE_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(SCHEDCACHE_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()
