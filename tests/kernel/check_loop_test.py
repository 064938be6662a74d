#!/usr/bin/python3
"""check_loop.py's measures on a hand-written capture and timeline, with
each expected value derived in a comment (docs/INTEGRATION.md, "The closed
loop in the guest")."""
import gzip
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_loop  # noqa: E402 (after the path)


def switch(cpu, seconds, prev, nxt):
    """One sched_switch line as record writes it."""
    return (f"          <...>-{prev}     (  {prev}) [{cpu:03d}] {seconds}: "
            f"sched_switch: prev_comm=x prev_pid={prev} prev_prio=120 "
            f"prev_state=R ==> next_comm=y next_pid={nxt} next_prio=120\n")


class OverlapTest(unittest.TestCase):
    # No preference before 10, LLC 0 from 10, LLC 1 from 20.
    LINE = ([10, 20], [0, 1])

    def test_runtime_on_each_preference(self):
        # [5, 25) on LLC 1: preferred there only over [20, 25): 5.
        self.assertEqual(
            check_loop.overlap(self.LINE, 5, 25, lambda p: p == 1), 5)
        # On LLC 0: over [10, 20): 10.
        self.assertEqual(
            check_loop.overlap(self.LINE, 5, 25, lambda p: p == 0), 10)
        # Without a preference: [5, 10): 5.
        self.assertEqual(
            check_loop.overlap(self.LINE, 5, 25, lambda p: p is None), 5)

    def test_interval_inside_one_segment(self):
        # [12, 18) lies wholly under LLC 0.
        self.assertEqual(
            check_loop.overlap(self.LINE, 12, 18, lambda p: p == 0), 6)

    def test_no_changes_is_no_preference(self):
        self.assertEqual(check_loop.overlap(([], []), 0, 7, lambda p: p is None), 7)


class ReadRunsTest(unittest.TestCase):
    def test_runs_migrations_and_busy_time(self):
        # CPUs 0, 1 in LLC 0, CPU 2 in LLC 1; thread 101 of process 100.
        llc_of = {0: 0, 1: 0, 2: 1}
        lines = [
            switch(0, "1.000000000", 0, 101),  # 101 in on CPU 0 (LLC 0)
            switch(0, "1.000000500", 101, 0),  # out: a run of 500 ns
            switch(1, "1.000001000", 0, 101),  # in on CPU 1: same LLC
            switch(1, "1.000002000", 101, 7),  # out: 1000 ns; 7 in
            switch(2, "1.000003000", 0, 101),  # in on CPU 2: LLC 1, a move
            switch(2, "1.000003100", 101, 0),  # out: 100 ns
            switch(1, "1.000004000", 7, 0),    # 7 (not workload) out
        ]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "capture.trace.gz")
            with gzip.open(path, "wt", encoding="utf-8") as f:
                f.writelines(lines)
            runs, migrations, busy = check_loop.read_runs(path, {101: 100}, llc_of)
        base = 1_000_000_000
        self.assertEqual(runs, [(100, 0, base, base + 500),
                                (100, 0, base + 1000, base + 2000),
                                (100, 1, base + 3000, base + 3100)])
        # Only the switch-in on CPU 2 changed the LLC.
        self.assertEqual(migrations[100], 1)
        # CPU 1 ran 101 over [1000, 2000) and 7 over [2000, 4000); the idle
        # task's spans are not busy.
        self.assertEqual(busy[1], [(base + 1000, base + 2000),
                                   (base + 2000, base + 4000)])


class CombinedTest(unittest.TestCase):
    def test_runtime_weighted_over_fitting_processes(self):
        processes = {
            1: {"fits": True, "runtime": 3, "full-scan": 1.0},
            2: {"fits": True, "runtime": 1, "full-scan": 0.6},
            3: {"fits": False, "runtime": 8, "full-scan": 0.0},
        }
        # (3 * 1.0 + 1 * 0.6) / (3 + 1) = 0.9; process 3 does not fit.
        self.assertAlmostEqual(check_loop.combined(processes, "full-scan"), 0.9)


if __name__ == "__main__":
    unittest.main()
