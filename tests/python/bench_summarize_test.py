#!/usr/bin/python3
"""bench/summarize.py's trace input rows and its before/after table, on raw
outputs made up here (no benchmark runs): the trace input rows' rates and
their ratio to zcat, and bench/run's BASELINE table, which matches each row
to the baseline's by target and order and shows "-" where the baseline has
no figure.

  /usr/bin/python3 bench_summarize_test.py --bench-dir DIR
"""

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

BENCH_DIR = None


def ab_run(samples, wall_s, cpu_s):
    """One run as bench/ab_end_to_end.py's run_ab reports it."""
    return {"samples": samples, "wall_s": wall_s, "cpu_s": cpu_s,
            "samples_per_second": samples / wall_s,
            "samples_per_cpu_second": samples / cpu_s,
            "enough_samples": samples >= 10_000_000}


def input_doc(scale):
    """An "input" object: 10 M samples in 20 M lines; plain takes 2 s,
    zst 4 s, gzip 10 s, each twice that with the default policies, all
    times `scale`; zcat reads the 20 M lines in 8 s."""
    rows = {}
    for form, wall in (("plain", 2.0), ("zst", 4.0), ("gzip", 10.0)):
        rows[form] = ab_run(10_000_000, wall * scale, wall * scale)
        rows[form + "_default"] = ab_run(10_000_000, 2 * wall * scale,
                                         2 * wall * scale)
    rows["zcat"] = {"lines": 20_000_000, "wall_s": 8.0,
                    "lines_per_second": 20_000_000 / 8.0}
    return {"input": rows}


def benchmark(name):
    """A Google Benchmark entry carrying every counter summarize.py reads."""
    return {"name": name, "cpu_time": 100.0, "time_unit": "ns",
            "full_ns": 1500.0, "visited_ns": 100.0, "ratio": 15.0,
            "same_llc": 1, "cpus_scanned": 16, "visited_cpus": 16,
            "cpus4096_ns": 110.0, "cpus384_ns": 100.0,
            "samples_per_second": 2e7, "events_per_second": 6e7}


def write_raw(folder, reps, scale):
    """A bench/run raw folder of `reps` repetitions: every file bench/run
    writes, with the fields summarize.py reads."""
    names = ["BM_ScanSideBySide/redis384", "BM_Scan/visited-scan/redis384",
             "BM_Scan/visited-scan/redis4096", "BM_ScanScaling/visited-scan",
             "BM_ScanScaling/full-scan", "BM_Replay/full-scan+visited-scan",
             "BM_Replay/none",
             "BM_ConvertSubbuffers/real"]
    ingest = {"events_per_second": 2e7, "samples_per_second": 6e6,
              "server_cpu_ns_per_sample": 200.0,
              "engine_cpu_ns_per_sample": 70.0, "rejected": 0,
              "server_cores": 1.2, "load_cpu_seconds": 1.5, "seconds": 5}
    memory = {"bytes_per_process": 1500, "rss_after_mib": 160,
              "processes": 100000}
    query = {f"{kind}_{q}_us": 100.0 for kind in ("recommend", "health")
             for q in ("p50", "p99", "p999")}
    ab = {key: ab_run(11_000_000, 4.0 * scale, 4.0 * scale)
          for key in ("redis", "hackbench", "trace")}
    ab.update(input_doc(scale))
    outputs = {"scan": {"benchmarks": [benchmark(n) for n in names]},
               "engine": {"benchmarks": [benchmark(n) for n in names]},
               "trace": {"benchmarks": [benchmark(n) for n in names]},
               "live": {"benchmarks": [benchmark(n) for n in names]},
               "ingest-none": ingest, "ingest-both": ingest,
               "ingest-two": ingest, "query": query, "memory": memory,
               "memory-1m": memory, "startup": {"ready_ms_median": 100.0},
               "ab": ab}
    os.makedirs(folder, exist_ok=True)
    for rep in range(1, reps + 1):
        for name, doc in outputs.items():
            with open(os.path.join(folder, f"{name}.{rep}.json"), "w") as f:
                json.dump(doc, f)


class SummarizeTest(unittest.TestCase):
    def setUp(self):
        sys.path.insert(0, BENCH_DIR)
        import summarize  # pylint: disable=import-outside-toplevel
        self.summarize = summarize

    def rows_of(self, docs):
        rows = []

        def row(target, name, values, unit, goal, ratio_values, ok, digits=1):
            value, spread = self.summarize.fmt(values, unit, digits)
            ratio = sorted(ratio_values)[len(ratio_values) // 2]
            rows.append((target, name, value, spread, goal, f"{ratio:.2f}",
                         "pass" if ok(ratio) else "MISS",
                         sorted(values)[len(values) // 2]))

        self.summarize.input_rows(docs, row, rows)
        return rows

    def test_input_rows_rates_and_zcat_ratio(self):
        rows = self.rows_of([input_doc(1.0), input_doc(1.0), input_doc(1.0)])
        by_name = {r[1].split(":")[0]: r for r in rows}
        # Plain, --policies none: 10 M samples in 2 s = 5.00 M/s, the goal.
        plain = by_name["plain ftrace text, --policies none"]
        self.assertEqual(plain[2], "5.00 M/s")
        self.assertEqual(plain[6], "pass")
        # Zstandard, default policies: 10 M in 8 s = 1.25 M/s of 4: MISS.
        zst = by_name["Zstandard (.zst) ftrace text, default policies"]
        self.assertEqual(zst[2], "1.25 M/s")
        self.assertEqual(zst[6], "MISS")
        # Gzip, --policies none: 20 M lines in 10 s = 2 M lines/s against
        # zcat's 20 M in 8 s = 2.5 M lines/s: 0.80x, under 0.9x.
        gzip = [r for r in rows if r[1].startswith("gzip ftrace text, --policies none")]
        self.assertEqual(len(gzip), 1)
        self.assertEqual(gzip[0][2], "0.80 x")
        self.assertEqual(gzip[0][6], "MISS")
        # The .dat row says why it is not measured and has no figure.
        dat = [r for r in rows if r[1].startswith("trace-cmd .dat")]
        self.assertEqual(len(dat), 1)
        self.assertIsNone(dat[0][7])

    def test_before_after_matches_rows_and_marks_missing_baseline(self):
        after = self.rows_of([input_doc(1.0)] * 3)
        # The baseline is twice as slow: every rate halves, and the gzip
        # ratio to zcat (whose time is the same) halves too.
        before = self.rows_of([input_doc(2.0)] * 3)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.summarize.before_after(after, before, "base")
        lines = out.getvalue().splitlines()
        self.assertIn("before (base)", lines[0])
        plain = next(l for l in lines if "plain ftrace text, --policies none" in l)
        cells = [c.strip() for c in plain.split("|")]
        # cells: '', target, what, before, after, after / before, ...
        self.assertTrue(cells[3].startswith("2.50 M/s"))
        self.assertTrue(cells[4].startswith("5.00 M/s"))
        self.assertEqual(cells[5], "2.00")
        dat = next(l for l in lines if "trace-cmd .dat" in l)
        self.assertEqual([c.strip() for c in dat.split("|")][3:6], ["-", "-", "-"])

        # A baseline whose outputs lack the figures (main() then passes no
        # rows): every before is "-".
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.summarize.before_after(after, [], "base")
        plain = next(l for l in out.getvalue().splitlines()
                     if "plain ftrace text, --policies none" in l)
        self.assertEqual([c.strip() for c in plain.split("|")][3], "-")


class SummarizeCommandTest(unittest.TestCase):
    """summarize.py as bench/run runs it, on complete raw folders."""

    def run_summarize(self, *args):
        return subprocess.run(
            [sys.executable, os.path.join(BENCH_DIR, "summarize.py"), *args],
            capture_output=True, text=True, check=False)

    def test_prints_the_table_alone_and_with_a_baseline(self):
        with tempfile.TemporaryDirectory() as tmp:
            after = os.path.join(tmp, "after")
            before = os.path.join(tmp, "before")
            write_raw(after, 3, 1.0)
            write_raw(before, 3, 2.0)
            alone = self.run_summarize(after, "3", "60")
            self.assertEqual(alone.returncode, 0, alone.stderr)
            self.assertIn("| target | what | value |", alone.stdout)
            self.assertIn("26.1 input", alone.stdout)
            both = self.run_summarize(after, "3", "60", "--baseline", before,
                                      "--baseline-name", "0282aad")
            self.assertEqual(both.returncode, 0, both.stderr)
            self.assertIn("before (0282aad)", both.stdout)
            # The baseline's plain rate is half: after / before 2.00.
            plain = next(l for l in both.stdout.splitlines()
                         if "plain ftrace text, --policies none" in l)
            self.assertEqual([c.strip() for c in plain.split("|")][5], "2.00")

    def test_a_baseline_without_the_input_rows_shows_dashes(self):
        with tempfile.TemporaryDirectory() as tmp:
            after = os.path.join(tmp, "after")
            before = os.path.join(tmp, "before")
            write_raw(after, 1, 1.0)
            write_raw(before, 1, 1.0)
            # An older ab_end_to_end.py: no "input" object.
            path = os.path.join(before, "ab.1.json")
            with open(path) as f:
                ab = json.load(f)
            del ab["input"]
            with open(path, "w") as f:
                json.dump(ab, f)
            both = self.run_summarize(after, "1", "60", "--baseline", before)
            self.assertEqual(both.returncode, 0, both.stderr)
            plain = next(l for l in both.stdout.splitlines()
                         if "plain ftrace text, --policies none" in l)
            self.assertEqual([c.strip() for c in plain.split("|")][3], "-")


def main():
    global BENCH_DIR
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench-dir", required=True)
    args, rest = parser.parse_known_args()
    BENCH_DIR = os.path.abspath(args.bench_dir)
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
