# Helper functions that declare every target of the project, so that all of
# them get the same language level, warnings and sanitizer flags.

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
# Every binary (tools, tests, benchmarks) lands in build/bin.
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

if(SCHEDCACHE_ASAN AND SCHEDCACHE_TSAN)
  message(FATAL_ERROR "SCHEDCACHE_ASAN and SCHEDCACHE_TSAN cannot be combined")
endif()
if(SCHEDCACHE_ASAN)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(SCHEDCACHE_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
# Fuzzing: every target gets libFuzzer's coverage instrumentation, so the
# one sanitizer build that runs the tests also links the fuzz targets.
if(SCHEDCACHE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR
      "SCHEDCACHE_FUZZ needs clang's libFuzzer (CC=clang CXX=clang++), "
      "not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
if(SCHEDCACHE_THREAD_SAFETY AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "SCHEDCACHE_THREAD_SAFETY needs clang (CXX=clang++)")
endif()

# Warnings for the project's own code; generated protobuf code does not use
# this function and so is exempt.
# GCC 12 at -O3 (Release) reports false -Wrestrict overlaps inside inlined
# std::string copies (GCC bug 105329: `"x" + std::string`, gtest's printer
# of protobuf messages, protobuf's add_X(const char*)), so a Release build
# of correct code fails. Only GCC before 13 (Debian 12's is 12.2) turns
# the warning off; clang and newer GCCs keep it.
function(schedcache_apply_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(SCHEDCACHE_THREAD_SAFETY)
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
endfunction()

# The layering check (.ci/check-layering) reads build/layering.txt, one line
# per target: kind, name, source folder, sources, the schedcache:: libraries
# it declares, extra include folders (tab-separated; lists space-separated),
# after a first line naming the source root.
# A target is recorded even when this configuration does not build it
# (tests, fuzzers), so that every configuration checks every file.
function(schedcache_record_layering kind name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;INCLUDE_DIRS" ${ARGN})
  set(project_deps "")
  foreach(dep IN LISTS ARG_DEPS)
    if(dep MATCHES "^schedcache::")
      list(APPEND project_deps ${dep})
    endif()
  endforeach()
  string(JOIN " " srcs ${ARG_SRCS})
  string(JOIN " " deps ${project_deps})
  string(JOIN " " include_dirs ${ARG_INCLUDE_DIRS})
  set_property(GLOBAL APPEND PROPERTY SCHEDCACHE_LAYERING
    "${kind}\t${name}\t${CMAKE_CURRENT_SOURCE_DIR}\t${srcs}\t${deps}\t${include_dirs}")
endfunction()

# schedcache_write_layering(): writes build/layering.txt; called once, at the
# end of the top-level CMakeLists.txt, after every target is recorded.
function(schedcache_write_layering)
  get_property(records GLOBAL PROPERTY SCHEDCACHE_LAYERING)
  list(JOIN records "\n" text)
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/layering.txt
    CONTENT "root\t${PROJECT_SOURCE_DIR}\n${text}\n")
endfunction()

# schedcache_library(NAME SRCS ... DEPS ... [PUBLIC_DEPS ...] [HEADER_ONLY]
#                    [INCLUDE_DIR DIR] [HDRS ...])
# Declares schedcache_NAME with the alias schedcache::NAME. Headers are
# included as "folder/file.h" from the source root, or relative to DIR (a
# public header folder such as client/include) when given. HDRS names the
# headers without a source of the same name in a folder that declares
# several libraries, so the layering check knows whose they are.
function(schedcache_library name)
  cmake_parse_arguments(ARG "HEADER_ONLY" "INCLUDE_DIR" "SRCS;HDRS;DEPS;PUBLIC_DEPS" ${ARGN})
  set(target schedcache_${name})
  schedcache_record_layering(library schedcache::${name} SRCS ${ARG_SRCS} ${ARG_HDRS}
    DEPS ${ARG_PUBLIC_DEPS} ${ARG_DEPS} INCLUDE_DIRS ${ARG_INCLUDE_DIR})
  if(ARG_HEADER_ONLY)
    set(scope INTERFACE)
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${ARG_PUBLIC_DEPS} ${ARG_DEPS})
  else()
    set(scope PUBLIC)
    add_library(${target} STATIC ${ARG_SRCS})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_DEPS})
    schedcache_apply_warnings(${target})
  endif()
  if(ARG_INCLUDE_DIR)
    target_include_directories(${target} ${scope} ${ARG_INCLUDE_DIR})
  endif()
  add_library(schedcache::${name} ALIAS ${target})
endfunction()

# schedcache_binary(KIND NAME BUILT SRCS ... DEPS ...): what every binary
# target shares. It is recorded for the layering check whether or not this
# configuration builds it (BUILT false: tests without SCHEDCACHE_BUILD_TESTS,
# fuzz targets without SCHEDCACHE_FUZZ), so the check sees every target.
function(schedcache_binary kind name built)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  schedcache_record_layering(${kind} ${name} SRCS ${ARG_SRCS} DEPS ${ARG_DEPS})
  if(built)
    add_executable(${name} ${ARG_SRCS})
    target_link_libraries(${name} PRIVATE ${ARG_DEPS})
    schedcache_apply_warnings(${name})
  endif()
endfunction()

# schedcache_executable(NAME SRCS ... DEPS ...)
function(schedcache_executable name)
  schedcache_binary(executable ${name} TRUE ${ARGN})
endfunction()

# schedcache_test(NAME SRCS ... DEPS ... [LABELS ...])
# A GoogleTest binary registered with CTest, one CTest entry per test case.
function(schedcache_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;LABELS" ${ARGN})
  schedcache_binary(test ${name} "${SCHEDCACHE_BUILD_TESTS}" SRCS ${ARG_SRCS}
    DEPS ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  if(NOT SCHEDCACHE_BUILD_TESTS)
    return()
  endif()
  target_compile_definitions(${name} PRIVATE
    SCHEDCACHE_SHARED_DATA_DIR="${PROJECT_SOURCE_DIR}/../shared/data"
    SCHEDCACHE_BINARY_DIR="${PROJECT_BINARY_DIR}")
  include(GoogleTest)
  # Tests labelled `kernel` record or change the real kernel's state
  # machine-wide (tracepoints of every CPU, BPF maps): they run alone, so
  # that the rest of a parallel ctest neither overruns their ring buffers
  # nor shows up in what they record.
  # Only set properties that have a value: an empty LABELS would swallow
  # the next property's name as its label.
  set(properties "")
  if(ARG_LABELS)
    list(APPEND properties LABELS "${ARG_LABELS}")
  endif()
  if("kernel" IN_LIST ARG_LABELS)
    list(APPEND properties RUN_SERIAL TRUE)
  endif()
  if(properties)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${properties})
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# bpf_skeleton(NAME DEPENDS FILE...), for collector/ and scx/: compiles
# NAME.bpf.c with clang -target bpf into ${CMAKE_CURRENT_BINARY_DIR}/NAME/
# and embeds it with `bpftool gen skeleton` as NAME.skel.h there (skeleton
# name NAME_bpf), so a binary needs no object file beside it; target
# NAME_skeleton builds both.
function(bpf_skeleton name)
  cmake_parse_arguments(ARG "" "" "DEPENDS" ${ARGN})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name})
  add_custom_command(OUTPUT ${dir}/${name}.bpf.o ${dir}/${name}.skel.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${SCHEDCACHE_BPF_CLANG} -target bpf -O2 -g -Wall -Werror
            # asm/types.h, which linux/types.h includes, is in the
            # multiarch directory clang -target bpf does not search.
            -I/usr/include/${CMAKE_LIBRARY_ARCHITECTURE}
            -I${PROJECT_SOURCE_DIR}
            -c ${CMAKE_CURRENT_SOURCE_DIR}/${name}.bpf.c
            -o ${dir}/${name}.bpf.o
    COMMAND ${SCHEDCACHE_BPFTOOL} gen skeleton ${dir}/${name}.bpf.o
            name ${name}_bpf > ${dir}/${name}.skel.h
    DEPENDS ${name}.bpf.c ${ARG_DEPENDS}
    COMMENT "clang -target bpf + bpftool gen skeleton: ${name}"
    VERBATIM)
  add_custom_target(${name}_skeleton DEPENDS ${dir}/${name}.skel.h)
endfunction()

# schedcache_fuzzer(NAME SRCS ... DEPS ... [DICT FILE])
# A libFuzzer target, built only with SCHEDCACHE_FUZZ; NAME ends in _fuzzer,
# which is how .ci/fuzz finds it in build/bin. DICT, a libFuzzer dictionary
# beside the sources, is copied to bin/NAME.dict, where .ci/fuzz looks.
function(schedcache_fuzzer name)
  cmake_parse_arguments(ARG "" "DICT" "SRCS;DEPS" ${ARGN})
  if(NOT name MATCHES "_fuzzer$")
    message(FATAL_ERROR "fuzz target ${name}: the name must end in _fuzzer")
  endif()
  schedcache_binary(fuzzer ${name} "${SCHEDCACHE_FUZZ}" SRCS ${ARG_SRCS}
    DEPS ${ARG_DEPS})
  if(NOT SCHEDCACHE_FUZZ)
    return()
  endif()
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  if(ARG_DICT)
    configure_file(${ARG_DICT} ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${name}.dict
                   COPYONLY)
  endif()
endfunction()
