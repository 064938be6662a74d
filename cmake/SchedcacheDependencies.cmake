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
# server/'s Prometheus metrics: Debian 12's prometheus-cpp 1.0 (core, and
# pull for the HTTP Exposer).
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.9)
# bpfmaps/, collector/ (kernel decisions) and scx/: Debian 12's libbpf 1.1.
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf>=1.1)
# clang -target bpf builds the BPF programs of bpfmaps/ (a test's probe),
# collector/ (kernel decisions) and scx/, and bpftool embeds the last two
# into their binaries
# (`bpftool gen skeleton`), so both are build tools.
find_program(SCHEDCACHE_BPF_CLANG NAMES clang-14 clang)
find_program(SCHEDCACHE_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
if(NOT SCHEDCACHE_BPF_CLANG OR NOT SCHEDCACHE_BPFTOOL)
  message(FATAL_ERROR "bpfmaps/, collector/ and scx/ build BPF programs with "
                      "clang -target bpf and bpftool gen skeleton: install "
                      "clang and bpftool")
endif()
find_package(ZLIB REQUIRED)
# trace/ reads and writes Zstandard traces with Debian 12's libzstd 1.5.
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd>=1.5)
# collector/: Debian 12's libtracefs 1.6 and libtraceevent 1.7.
pkg_check_modules(TRACEFS REQUIRED IMPORTED_TARGET libtracefs>=1.6)
pkg_check_modules(TRACEEVENT REQUIRED IMPORTED_TARGET libtraceevent>=1.7)
# trace/'s .dat reader: Debian 12's libtracecmd 1.3 (package libtracecmd-dev).
pkg_check_modules(TRACECMD REQUIRED IMPORTED_TARGET libtracecmd>=1.3)
if(SCHEDCACHE_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(SCHEDCACHE_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()
