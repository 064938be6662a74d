# Every external dependency, found once. All come from Debian 12 packages
# (see .ci/install-deps).
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)
# Protobuf 3.21 on Debian ships no CMake config: use CMake's FindProtobuf.
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
# server/tls_credentials checks a certificate and its key before gRPC
# serves them (Debian 12's OpenSSL 3, which gRPC links too).
find_package(OpenSSL REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.9)
# host/'s pinned BPF maps: Debian 12's libbpf 1.1.
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf>=1.1)
# clang -target bpf builds the BPF program of host/'s real-kernel test;
# without it that one test is left out, and configure says so.
find_program(SCHEDCACHE_BPF_CLANG NAMES clang-14 clang)
if(NOT SCHEDCACHE_BPF_CLANG)
  message(STATUS "clang not found: host/pinned_maps_kernel_test (which "
                 "needs clang -target bpf) is not built; install clang")
endif()
find_package(ZLIB REQUIRED)
# eval/ab reads back the shard results of `ab --shard` (`ab-merge`) with
# Debian 12's nlohmann-json 3.11: exact 64-bit integers, which a parser into
# doubles would round.
find_package(nlohmann_json 3.11 CONFIG REQUIRED)
# host/'s live collector: Debian 12's libtracefs 1.6 and libtraceevent 1.7.
pkg_check_modules(TRACEFS REQUIRED IMPORTED_TARGET libtracefs>=1.6)
pkg_check_modules(TRACEEVENT REQUIRED IMPORTED_TARGET libtraceevent>=1.7)
if(SCHEDCACHE_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(SCHEDCACHE_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()
