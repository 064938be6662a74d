#!/usr/bin/env python3
"""docs/PERFORMANCE.md, ab end to end: `schedcache ab` as a whole process.

Runs the Release `schedcache ab` pinned to one core (taskset -c 0) with its
default policies on three inputs of at least 10 M samples each and prints
one JSON object: per input the report's sample count, the process's wall
and CPU time (user + system, from wait4) and samples per second of each.

  workload:redis      the generator's Redis shape on the 384-CPU EPYC shape
  workload:hackbench  hackbench -T -g 4 -f 10 on the same shape
  trace               a gzip ftrace text trace of workload:redis written by
                      bench/'s workload_trace (made once, then reused)

and, under "jobs", workload:redis and the trace again on two cores with
--jobs 1 and --jobs 2 (run_jobs). The one-core runs pass no --jobs: its
default, the CPUs the process may run on, is 1 under taskset -c 0.

Under "input" (docs/PERFORMANCE.md, the trace input target), the same trace as
plain text, as Zstandard (`zstd -3`) and as gzip, each with
`--policies none` (the input's cost alone: reading, parsing, the switch
state machine and an engine that only accounts) and with the default
policies, plus the reference `zcat FILE | wc -l` on the gzip file (zcat on
core 0, wc on core 1, so zcat has the core to itself). The plain and
Zstandard files are made once, beside the gzip one (the plain text from
it, the Zstandard file from the plain text).

Usage: ab_end_to_end.py --schedcache BIN [--workload-trace BIN]
                        [--trace FILE.gz] [--scale X] [--no-input-rows]
--workload-trace defaults to workload_trace beside --schedcache; pass
another build's to time an older `schedcache` on the same trace. --scale
multiplies every duration (a quick look: 0.1; the figures need 1).
--no-input-rows leaves out the "input" rows.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TOPOLOGY = "synthetic:pack:2 numa:1 l3:12 core:8 pu:2"  # kEpyc9654Shape
# Simulated milliseconds per input, each giving at least 10 M samples on
# TOPOLOGY (counted on 91ce10b: the generator's stream of a seed is fixed).
REDIS_MS = 30000
HACKBENCH_MS = 16000
TRACE_MS = 30000
MIN_SAMPLES = 10_000_000


def run_ab(schedcache, ab_args, cpus="0"):
    """Runs one `schedcache ab` pinned to `cpus`; returns its samples and times."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "ab.json")
        command = ["taskset", "-c", cpus, schedcache, "ab", "--topology",
                   TOPOLOGY, "--json", report] + ab_args
        start = time.monotonic()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
        stderr = child.stderr.read().decode(errors="replace")
        child.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"ab_end_to_end: {' '.join(command)} failed:\n{stderr}")
        with open(report) as f:
            # protobuf's JSON mapping writes a 64-bit count as a string.
            samples = int(json.load(f)["input"]["samples"])
    cpu = usage.ru_utime + usage.ru_stime
    return {"samples": samples, "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3),
            "samples_per_second": samples / wall,
            "samples_per_cpu_second": samples / cpu,
            "enough_samples": samples >= MIN_SAMPLES}


def make_trace(tool, path, duration_ms):
    if os.path.exists(path):
        return
    partial = path + ".partial.gz"
    subprocess.run([tool, f"--output={partial}", "--workload=redis",
                    f"--duration_ms={duration_ms}", f"--topology={TOPOLOGY}"],
                   check=True, stdout=subprocess.DEVNULL)
    os.replace(partial, path)


def run_jobs(schedcache, redis_ms, trace):
    """Every core, docs/PERFORMANCE.md (the `26.2 jobs` rows): each of workload:redis and
    the trace on two cores (taskset -c 0,1), as `--jobs 1` (one thread) and
    `--jobs 2` (the session on a thread of its own), one after the other;
    `ratio` is the second's samples per second over the first's. None for a
    `schedcache` without --jobs."""
    usage = subprocess.run([schedcache, "ab", "--help"], capture_output=True,
                           text=True).stdout
    if "--jobs" not in usage:
        return None
    rows = {}
    for key, ab_args in (("redis", ["--input", "workload:redis",
                                    "--duration-ms", redis_ms]),
                         ("trace", ["--input", f"trace:{trace}"])):
        one = run_ab(schedcache, ab_args + ["--jobs", "1"], cpus="0,1")
        two = run_ab(schedcache, ab_args + ["--jobs", "2"], cpus="0,1")
        rows[key] = {"jobs1": one, "jobs2": two,
                     "ratio": two["samples_per_second"] /
                     one["samples_per_second"]}
    return rows


def derive_trace(source, path, command):
    """Writes `path` once from `source` with `command` (the source appended,
    its output read from stdout); returns `path`."""
    if not os.path.exists(path):
        partial = path + ".partial"
        with open(partial, "wb") as out:
            subprocess.run(command + [source], check=True, stdout=out)
        os.replace(partial, path)
    return path


def run_zcat(path):
    """Times `zcat PATH | wc -l` (zcat on core 0, wc on core 1); the CPU
    time is zcat's (user + system, from wait4)."""
    start = time.monotonic()
    zcat = subprocess.Popen(["taskset", "-c", "0", "zcat", path],
                            stdout=subprocess.PIPE)
    count = subprocess.run(["taskset", "-c", "1", "wc", "-l"],
                           stdin=zcat.stdout, check=True,
                           capture_output=True, text=True)
    zcat.stdout.close()
    _, status, usage = os.wait4(zcat.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"ab_end_to_end: zcat {path} failed")
    wall = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime
    lines = int(count.stdout.split()[0])
    return {"lines": lines, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "lines_per_second": lines / wall,
            "lines_per_cpu_second": lines / cpu}


def input_rows(schedcache, gzip_trace):
    """The trace input target, docs/PERFORMANCE.md: one trace in three forms, input cost alone and
    with the default policies, and zcat's rate on the gzip form."""
    plain = derive_trace(gzip_trace, gzip_trace.removesuffix(".gz"), ["zcat"])
    forms = {
        "plain": plain,
        "zst": derive_trace(plain, plain + ".zst", ["zstd", "-q", "-3", "-c"]),
        "gzip": gzip_trace,
    }
    rows = {}
    for name, path in forms.items():
        rows[name] = run_ab(schedcache, ["--input", f"trace:{path}",
                                         "--policies", "none"])
        rows[name + "_default"] = run_ab(schedcache,
                                         ["--input", f"trace:{path}"])
    rows["zcat"] = run_zcat(gzip_trace)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--schedcache", required=True)
    parser.add_argument("--workload-trace")
    parser.add_argument("--trace", default="ab-redis.trace.gz")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--no-input-rows", action="store_true")
    args = parser.parse_args()
    tool = args.workload_trace or os.path.join(
        os.path.dirname(args.schedcache), "workload_trace")

    def ms(base):
        return str(max(1, int(base * args.scale)))

    make_trace(tool, args.trace, ms(TRACE_MS))
    result = {
        "redis": run_ab(args.schedcache, ["--input", "workload:redis",
                                          "--duration-ms", ms(REDIS_MS)]),
        "hackbench": run_ab(args.schedcache,
                            ["--input", "workload:hackbench",
                             "--duration-ms", ms(HACKBENCH_MS)]),
        "trace": run_ab(args.schedcache, ["--input", f"trace:{args.trace}"]),
    }
    result["jobs"] = run_jobs(args.schedcache, ms(REDIS_MS), args.trace)
    if not args.no_input_rows:
        result["input"] = input_rows(args.schedcache, args.trace)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
