#!/usr/bin/python3
"""Tests of .ci/check-layering on tiny fake trees: each writes a layering
file, a few sources and a README with a layout table into a temporary
folder, runs the script and checks its exit status and output."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "check-layering")


class CheckLayeringTest(unittest.TestCase):

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.root = self._dir.name
        self.records = []
        self.folders = set()

    def tearDown(self):
        self._dir.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))

    def target(self, kind, name, folder, sources="", deps="", include_dirs=""):
        self.folders.add(folder.split("/")[0])
        self.records.append("\t".join(
            [kind, name, os.path.join(self.root, folder), sources, deps,
             include_dirs]))

    def layout(self, rows):
        """Writes README.md with a layout table: rows maps a top-level folder
        to its ("may depend on", "its tests also") cells."""
        table = "".join(f"| `{folder}/` | fake | {deps} | {tests} |\n"
                        for folder, (deps, tests) in rows.items())
        self.write("README.md",
                   "# fake\n\n## Layout\n\n"
                   "| folder | what | may depend on | its tests also |\n"
                   "|---|---|---|---|\n" + table + "\nAfter the table.\n")

    def run_check(self, first_line=None):
        if not os.path.exists(os.path.join(self.root, "README.md")):
            # No folder rule under test: every folder may use anything.
            self.layout({f: ("anything", "anything")
                         for f in sorted(self.folders)})
        layering = os.path.join(self.root, "layering.txt")
        with open(layering, "w", encoding="utf-8") as f:
            f.write((first_line or f"root\t{self.root}") + "\n")
            f.write("\n".join(self.records) + "\n")
        return subprocess.run([sys.executable, SCRIPT, layering],
                              capture_output=True, text=True, timeout=60)

    def assert_violations(self, *lines):
        """Runs the check: it must exit 1 and print exactly `lines`."""
        result = self.run_check()
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(result.stdout, "".join(line + "\n" for line in lines))

    # b/b.h (library schedcache::b) and a/a.cc (schedcache::a) including it.
    def two_libraries(self, a_deps):
        self.write("b/b.h", "int B();\n")
        self.write("b/b.cc", '#include "b/b.h"\nint B() { return 1; }\n')
        self.write("a/a.h", "int A();\n")
        self.write("a/a.cc", '#include "a/a.h"\n\n#include "b/b.h"\n'
                   '#include "absl/status/status.h"\n')
        self.target("library", "schedcache::b", "b", "b.cc")
        self.target("library", "schedcache::a", "a", "a.cc", a_deps)

    # pair/ declares schedcache::left and schedcache::right, neither named
    # after the folder; pair/shared.h has no source of the same name.
    def shared_folder(self, left_sources):
        self.write("pair/left.cc", "int Left() { return 1; }\n")
        self.write("pair/right.cc", "int Right() { return 2; }\n")
        self.write("pair/shared.h", "#pragma once\n")
        self.target("library", "schedcache::left", "pair", left_sources)
        self.target("library", "schedcache::right", "pair", "right.cc")

    def test_undeclared_library_is_reported_with_file_line_and_names(self):
        self.two_libraries(a_deps="")
        # a.cc line 3 includes b/b.h, which b.cc's library owns; a's own
        # a/a.h (line 1) and absl (no project file) are not reported.
        self.assert_violations(
            "a/a.cc:3: includes b/b.h (library schedcache::b) but target "
            "schedcache::a does not depend on it")

    def test_declared_library_passes(self):
        self.two_libraries(a_deps="schedcache::b")
        result = self.run_check()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")

    def test_header_without_source_is_scanned_for_its_folders_library(self):
        self.two_libraries(a_deps="")
        self.write("a/types.h", '#pragma once\n#include "b/b.h"\n')
        self.assert_violations(
            "a/a.cc:3: includes b/b.h (library schedcache::b) but target "
            "schedcache::a does not depend on it",
            "a/types.h:2: includes b/b.h (library schedcache::b) but target "
            "schedcache::a does not depend on it")

    def test_test_target_must_declare_what_it_includes(self):
        self.two_libraries(a_deps="schedcache::b")
        self.write("a/a_test.cc", '#include "a/a.h"\n#include "b/b.h"\n')
        self.target("test", "a_test", "a", "a_test.cc", "schedcache::a")
        # Declared only transitively (a depends on b): still a violation.
        self.assert_violations(
            "a/a_test.cc:2: includes b/b.h (library schedcache::b) but "
            "target a_test does not depend on it")

    def test_include_dir_headers_are_scanned_and_proto_headers_have_owners(self):
        self.write("proto/api/v1/api.proto", 'syntax = "proto3";\n')
        self.target("library", "schedcache::proto", "proto", "api/v1/api.proto")
        # The public header is scanned too: it includes the proto's header,
        # which its library declares.
        self.write("client/include/lib/client.h",
                   '#pragma once\n#include "api/v1/api.pb.h"\n')
        self.write("client/lib/client.cc", '#include "lib/client.h"\n')
        self.target("library", "schedcache::client", "client/lib", "client.cc",
                    "", os.path.join(self.root, "client/include"))
        self.write("tool/main.cc", '#include "lib/client.h"\n'
                   '#include "api/v1/api.grpc.pb.h"\n')
        self.target("executable", "tool", "tool", "main.cc")
        self.assert_violations(
            "client/include/lib/client.h:2: includes api/v1/api.pb.h (library "
            "schedcache::proto) but target schedcache::client does not depend "
            "on it",
            "tool/main.cc:1: includes lib/client.h (library "
            "schedcache::client) but target tool does not depend on it",
            "tool/main.cc:2: includes api/v1/api.grpc.pb.h (library "
            "schedcache::proto) but target tool does not depend on it")

    def test_server_include_under_cli_fails_even_when_declared(self):
        self.write("server/server.h", "#pragma once\n")
        self.write("server/server.cc", '#include "server/server.h"\n')
        self.target("library", "schedcache::server", "server", "server.cc")
        self.write("cli/cli.cc", "// uses the server\n"
                   '#include "server/server.h"\n')
        self.target("library", "schedcache::cli", "cli", "cli.cc",
                    "schedcache::server")
        # An orphan file no target lists is scanned too.
        self.write("cli/old/orphan.h", '#include "server/server.h"\n')
        self.layout({"server": ("nothing", "nothing"),
                     "cli": ("`client/`", "nothing")})
        self.assert_violations(
            "cli/CMakeLists.txt: library schedcache::cli declares "
            "schedcache::server (in server/), but README.md's layout table "
            "does not let cli/ depend on server/",
            "cli/cli.cc:2: includes server/server.h, but nothing "
            "under cli/ may include server/",
            "cli/old/orphan.h:1: includes server/server.h, but nothing "
            "under cli/ may include server/")

    def test_library_of_a_folder_its_row_does_not_list_is_reported(self):
        # a declares b, and every include is declared: only the folder rule,
        # which lets a/ use c/ but not b/, is broken.
        self.two_libraries(a_deps="schedcache::b")
        self.layout({"a": ("`c/`", "nothing"), "b": ("nothing", "nothing")})
        self.assert_violations(
            "a/CMakeLists.txt: library schedcache::a declares schedcache::b "
            "(in b/), but README.md's layout table does not let a/ depend "
            "on b/")

    def test_tests_column_lets_tests_but_not_libraries_use_a_folder(self):
        self.two_libraries(a_deps="schedcache::b")
        self.write("a/a_test.cc", '#include "b/b.h"\n')
        self.target("test", "a_test", "a", "a_test.cc", "schedcache::b")
        self.write("a/a_fuzzer.cc", '#include "b/b.h"\n')
        self.target("fuzzer", "a_fuzzer", "a", "a_fuzzer.cc", "schedcache::b")
        self.layout({"a": ("nothing", "`b/`"), "b": ("nothing", "nothing")})
        self.assert_violations(
            "a/CMakeLists.txt: library schedcache::a declares schedcache::b "
            "(in b/), but README.md's layout table does not let a/ depend "
            "on b/")

    def test_test_beyond_both_columns_is_reported_as_a_tests_rule(self):
        self.two_libraries(a_deps="")
        self.write("a/a_test.cc", '#include "b/b.h"\n')
        self.target("test", "a_test", "a", "a_test.cc", "schedcache::b")
        self.write("a/a.cc", '#include "a/a.h"\n')
        self.layout({"a": ("nothing", "nothing"), "b": ("nothing", "nothing")})
        self.assert_violations(
            "a/CMakeLists.txt: test a_test declares schedcache::b (in b/), "
            "but README.md's layout table does not let a/'s tests depend "
            "on b/")

    def test_declared_arrows_within_the_rules_pass(self):
        self.two_libraries(a_deps="schedcache::b")
        self.layout({"a": ("`b/`, `c/`", "nothing"),
                     "b": ("nothing", "nothing")})
        result = self.run_check()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")

    def test_folder_with_targets_but_no_row_is_reported(self):
        self.two_libraries(a_deps="schedcache::b")
        self.layout({"b": ("nothing", "nothing")})
        self.assert_violations(
            "a/CMakeLists.txt: declares schedcache::a, but README.md's layout "
            "table has no row for a/")

    def test_rule_cell_that_is_not_a_folder_list_exits_2(self):
        self.two_libraries(a_deps="schedcache::b")
        self.layout({"a": ("`b/`; never `server/`", "nothing"),
                     "b": ("nothing", "nothing")})
        result = self.run_check()
        self.assertEqual(result.returncode, 2)
        # README line 7: the heading, a blank line, the header, the rule.
        self.assertIn(os.path.join(self.root, "README.md") + ":7: expected "
                      "`folder/`, ... or nothing or anything, got "
                      "'`b/`; never `server/`'", result.stderr)

    def test_layout_heading_without_a_table_exits_2(self):
        self.two_libraries(a_deps="schedcache::b")
        self.write("README.md", "# fake\n\n## Layout\n\nNo table.\n")
        result = self.run_check()
        self.assertEqual(result.returncode, 2)
        self.assertIn("README.md:3: no table after '## Layout'", result.stderr)

    def test_readme_without_the_rule_column_exits_2(self):
        self.two_libraries(a_deps="schedcache::b")
        self.write("README.md", "## Layout\n\n| folder | what |\n|---|---|\n"
                   "| `a/` | fake |\n")
        result = self.run_check()
        self.assertEqual(result.returncode, 2)
        self.assertIn("README.md:3: the layout table has no column "
                      "'may depend on', 'its tests also'", result.stderr)

    def test_header_of_a_folder_with_two_libraries_and_no_rule_is_reported(self):
        self.shared_folder(left_sources="left.cc")
        self.write("user/user.cc", '#include "pair/shared.h"\n')
        self.target("executable", "user", "user", "user.cc",
                    "schedcache::left schedcache::right")
        self.assert_violations(
            "user/user.cc:1: includes pair/shared.h, which no library owns: "
            "its folder declares several and none has a source of the same "
            "name or the folder's name")

    def test_listed_headers_settle_ownership_in_a_shared_folder(self):
        self.shared_folder(left_sources="left.cc shared.h")
        self.write("pair/probe.h", "#pragma once\n")
        # probe.h is the test's own: it lists it.
        self.write("pair/left_test.cc", '#include "pair/shared.h"\n'
                   '#include "pair/probe.h"\n')
        self.target("test", "left_test", "pair", "left_test.cc probe.h",
                    "schedcache::right")
        self.assert_violations(
            "pair/left_test.cc:1: includes pair/shared.h (library "
            "schedcache::left) but target left_test does not depend on it")

    def test_malformed_layering_line_is_named_and_exits_2(self):
        self.two_libraries(a_deps="")
        self.records.insert(1, "library\tschedcache::x")
        result = self.run_check()
        self.assertEqual(result.returncode, 2)
        # Line 1 is the root line, so the second record is line 3.
        self.assertIn("layering.txt:3: expected 6 tab-separated fields",
                      result.stderr)
        self.assertIn("'library\\tschedcache::x'", result.stderr)

    def test_listed_source_that_does_not_exist_is_named_and_exits_2(self):
        self.two_libraries(a_deps="schedcache::b")
        self.target("test", "gone_test", "a", "gone_test.cc", "schedcache::a")
        result = self.run_check()
        self.assertEqual(result.returncode, 2)
        self.assertIn("cannot read " + os.path.join(self.root, "a/gone_test.cc")
                      + ": No such file or directory", result.stderr)

    def test_missing_root_line_exits_2(self):
        self.two_libraries(a_deps="")
        result = self.run_check(first_line="roots\t")
        self.assertEqual(result.returncode, 2)
        self.assertIn("layering.txt:1: expected \"root<TAB>SOURCE_ROOT\", "
                      "got 'roots\\t'", result.stderr)


if __name__ == "__main__":
    unittest.main()
