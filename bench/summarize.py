#!/usr/bin/env python3
"""Turns the raw outputs of bench/run into the Markdown targets table.

Usage: summarize.py RAW_DIR REPS RUN_SECONDS [--baseline BEFORE_RAW_DIR
[--baseline-name COMMIT]]. Each figure is the median of the repetitions,
with min..max beside it. With --baseline (bench/run's BASELINE=), the same
rows are computed from the baseline's raw outputs and shown beside, as
before | after | after / before; a row the baseline cannot give (its tools
lack the figure) shows "-" before.
"""
import argparse
import json
import os
import platform
import statistics
import sys


def load(raw, name, rep):
    with open(os.path.join(raw, f"{name}.{rep}.json")) as f:
        return json.load(f)


def bench(doc, name, key):
    for b in doc["benchmarks"]:
        if b["name"] == name:
            return b[key]
    raise KeyError(name)


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def fmt(values, unit, digits=1):
    med = statistics.median(values)
    return (f"{med:,.{digits}f} {unit}".strip(),
            f"{min(values):,.{digits}f}..{max(values):,.{digits}f}")


# Where each target's profile is written: what a miss is made of and what
# would close it. bench/run cannot profile on a loaded machine, so the
# profiles are callgrind counts kept with their method in these sections.
PROFILES = {
    "16.1 ab": "\"Performance target 1: ab end to end\"",
    "16.2 engine": "\"Performance target 2: the engine\"",
    "16.3 scan": "\"Performance targets 3a and 5: visited-scan and memory\"",
    "16.4 server": "\"Performance: server\"",
    "16.5 memory": "\"Performance targets 3a and 5: visited-scan and memory\"",
    "16.6 live": "\"Live collector\"",
    "2 ingest": "\"Performance: server\" (the same ingest path)",
    "26.3 workload": "\"Performance: workloads, engine, server\"",
    "26.4 engine": "\"Performance: workloads, engine, server\"",
    "26.5 server": "\"Performance: workloads, engine, server\"",
    "26.2 jobs": "\"Every core: ab --jobs\"",
    "26.1 input": "\"Performance: trace input\"",
}


def input_rows(ab, row, rows):
    """The trace input target (bench/ab_end_to_end.py's "input"): one trace as
    plain, Zstandard and gzip text, with --policies none (the input's cost
    alone) and with the default policies (the issue's end-to-end figure)."""
    if not all("input" in d for d in ab):
        return
    inp = [d["input"] for d in ab]
    policy_sets = (("", "--policies none"), ("_default", "default policies"))
    for key, what, goal in (("plain", "plain ftrace text", 5),
                            ("zst", "Zstandard (.zst) ftrace text", 4)):
        for suffix, policies in policy_sets:
            runs = [d[key + suffix] for d in inp]
            rate = [x["samples_per_second"] / 1e6 for x in runs]
            cpu_rate = statistics.median(x["samples_per_cpu_second"] / 1e6 for x in runs)
            enough = all(x["enough_samples"] for x in runs)
            row("26.1 input", f"{what}, {policies}: {runs[0]['samples'] / 1e6:.1f} M samples, "
                f"{statistics.median(x['wall_s'] for x in runs):.2f} s wall "
                f"({cpu_rate:.2f} M samples per CPU second)",
                rate, "M/s", f">= {goal} M samples/s, >= 10 M samples",
                [x / goal for x in rate], lambda x: x >= 1 and enough, 2)
    rows.append(("26.1 input", "trace-cmd .dat: not measured; Debian's trace-cmd "
                 "3.1.6 cannot write a .dat from text (`convert` reads .dat only), "
                 "and no tool here writes one of >= 10 M samples",
                 "-", "-", ">= 5 M samples/s", "-", "MISS", None))
    # Gzip against zcat on the same file in the same repetition, in lines
    # per second: both read every line of the file (zcat's count).
    for suffix, policies in policy_sets:
        lines = [d["zcat"]["lines"] for d in inp]
        ab_lines = [n / d["gzip" + suffix]["wall_s"] / 1e6 for n, d in zip(lines, inp)]
        zcat = [d["zcat"]["lines_per_second"] / 1e6 for d in inp]
        ratio = [a / z for a, z in zip(ab_lines, zcat)]
        rate = statistics.median(d["gzip" + suffix]["samples_per_second"] / 1e6 for d in inp)
        # Per CPU second as well (zcat's own CPU time, where the outputs
        # have it): on a shared host the wall times move with the load.
        cpu_note = ""
        if all("cpu_s" in d["zcat"] for d in inp):
            cpu_ratio = statistics.median(
                (n / d["gzip" + suffix]["cpu_s"]) / d["zcat"]["lines_per_cpu_second"]
                for n, d in zip(lines, inp))
            cpu_note = f"; per CPU second {cpu_ratio:.2f}x"
        row("26.1 input", f"gzip ftrace text, {policies}: {statistics.median(ab_lines):.2f} M lines/s "
            f"({rate:.2f} M samples/s) vs zcat (into wc -l) {statistics.median(zcat):.2f} M lines/s "
            f"on the same {lines[0] / 1e6:.1f} M lines{cpu_note}",
            ratio, "x", ">= 0.9x zcat", ratio, lambda x: x >= 0.9, 2)


def table(raw, reps):
    """The targets table's rows from the raw outputs in `raw`: (target,
    what, value, spread, goal, ratio, result, median)."""
    r = range(1, reps + 1)
    rows = []

    def row(target, name, values, unit, goal, ratio_values, ok, digits=1):
        value, spread = fmt(values, unit, digits)
        ratio = statistics.median(ratio_values)
        rows.append((target, name, value, spread, goal, f"{ratio:.2f}",
                     "pass" if ok(ratio) else "MISS",
                     statistics.median(values)))

    # Performance target 3, scan. Each ratio comes from one side-by-side
    # benchmark (blocks of the two kinds of scans alternate within a run).
    scan = [load(raw, "scan", i) for i in r]
    side = "BM_ScanSideBySide/redis384"
    full = [bench(d, side, "full_ns") for d in scan]
    visited = [bench(d, side, "visited_ns") for d in scan]
    scan_ratio = [bench(d, side, "ratio") for d in scan]
    same = all(bench(d, side, "same_llc") == 1 for d in scan)
    cpus = bench(scan[0], "BM_Scan/visited-scan/redis384", "cpus_scanned")
    row("16.3 scan", f"visited-scan {statistics.median(visited):.0f} ns vs full-scan "
        f"{statistics.median(full):.0f} ns per scan ({cpus:.0f} vs 384 CPUs, same LLC: {'yes' if same else 'NO'})",
        scan_ratio, "x", ">= 15x, same decisions",
        scan_ratio, lambda x: x >= 15 and same)
    # Visited-scan on 4096 CPUs over 384, same visited set size.
    v4096 = [bench(d, "BM_ScanScaling/visited-scan", "cpus4096_ns") for d in scan]
    v384 = [bench(d, "BM_ScanScaling/visited-scan", "cpus384_ns") for d in scan]
    v_ratio = [bench(d, "BM_ScanScaling/visited-scan", "ratio") for d in scan]
    sizes = [bench(scan[0], f"BM_Scan/visited-scan/{state}", "visited_cpus")
             for state in ("redis4096", "redis384")]
    row("16.3 scan", f"visited-scan on 4096 vs 384 CPUs: {statistics.median(v4096):.0f} vs "
        f"{statistics.median(v384):.0f} ns per scan (visited sets {sizes[0]:.0f} and {sizes[1]:.0f} CPUs)",
        v_ratio, "x", "<= 1.1x, same set size", v_ratio,
        lambda x: x <= 1.1 and sizes[0] == sizes[1], 2)
    # Full-scan's cost per CPU on 4096 over 384: 1 is linear.
    f4096 = [bench(d, "BM_ScanScaling/full-scan", "cpus4096_ns") for d in scan]
    f384 = [bench(d, "BM_ScanScaling/full-scan", "cpus384_ns") for d in scan]
    per_cpu = [bench(d, "BM_ScanScaling/full-scan", "ratio") * 384 / 4096 for d in scan]
    row("16.3 scan", f"full-scan per CPU scanned, 4096 vs 384 CPUs: {statistics.median(f4096):.0f} vs "
        f"{statistics.median(f384):.0f} ns per scan",
        per_cpu, "x", "<= 1.2x (linear)", per_cpu, lambda x: x <= 1.2, 2)

    # Performance target 1: `schedcache ab` as a whole process on one core
    # (bench/ab_end_to_end.py): the report's samples over wall time.
    ab = [load(raw, "ab", i) for i in r]
    for key, what, goal in (("redis", "workload:redis", 10),
                            ("hackbench", "workload:hackbench", 10),
                            ("trace", "gzip ftrace text of workload:redis", 5)):
        rate = [d[key]["samples_per_second"] / 1e6 for d in ab]
        cpu_rate = statistics.median(d[key]["samples_per_cpu_second"] / 1e6 for d in ab)
        enough = all(d[key]["enough_samples"] for d in ab)
        row("16.1 ab", f"{what}: {ab[0][key]['samples'] / 1e6:.1f} M samples, "
            f"{statistics.median(d[key]['wall_s'] for d in ab):.1f} s wall "
            f"({cpu_rate:.2f} M samples per CPU second)",
            rate, "M/s", f">= {goal} M samples/s, >= 10 M samples",
            [x / goal for x in rate], lambda x: x >= 1 and enough, 2)
    input_rows(ab, row, rows)

    # Every core (docs/PERFORMANCE.md): `ab --jobs 2` over `--jobs 1` on two cores, side by
    # side in each repetition (bench/ab_end_to_end.py, run_jobs).
    if all(d.get("jobs") for d in ab):
        for key, what in (("redis", "workload:redis"),
                          ("trace", "gzip ftrace text of workload:redis")):
            ratio = [d["jobs"][key]["ratio"] for d in ab]
            one = statistics.median(d["jobs"][key]["jobs1"]["samples_per_second"] / 1e6 for d in ab)
            two = statistics.median(d["jobs"][key]["jobs2"]["samples_per_second"] / 1e6 for d in ab)
            row("26.2 jobs", f"{what}, 3 policies, 2 cores: --jobs 2 {two:.2f} vs "
                f"--jobs 1 {one:.2f} M samples/s",
                ratio, "x", ">= 1.6x", [x / 1.6 for x in ratio],
                lambda x: x >= 1, 2)

    # 2. Ingest over the Unix socket, 1024-event batches.
    none = [load(raw, "ingest-none", i) for i in r]
    both = [load(raw, "ingest-both", i) for i in r]
    ratio = [b["events_per_second"] / n["events_per_second"] for b, n in zip(both, none)]
    row("2 ingest", f"full+visited vs none: {statistics.median([b['events_per_second'] for b in both])/1e6:.2f} M vs "
        f"{statistics.median([n['events_per_second'] for n in none])/1e6:.2f} M events/s "
        f"({statistics.median([b['samples_per_second'] for b in both])/1e6:.2f} M samples/s)",
        ratio, "x", ">= 0.5x", ratio, lambda x: x >= 0.5, 2)
    samples = [b["samples_per_second"] / 1e6 for b in both]
    row("2 ingest", "absolute, full+visited, samples/s (hand-overs sent beside, not counted)",
        samples, "M/s", ">= 4 M samples/s", [s / 4 for s in samples], lambda x: x >= 1, 2)

    # Performance target 4, server (block of serverperf). Server CPU: utime +
    # stime of schedcached, all threads, over the ingest run, per sample
    # sent (all applied: rejected must be 0); engine: the same stream in
    # the same batches applied in-process by the load tool before the run
    # (thread CPU time, fresh engine per pass).
    per_server = [b["server_cpu_ns_per_sample"] for b in both]
    per_engine = [b["engine_cpu_ns_per_sample"] for b in both]
    cpu_ratio = [s / e for s, e in zip(per_server, per_engine)]
    clean = all(b["rejected"] == 0 for b in both)
    row("16.4 server", f"server CPU per sample over the engine's in process, both policies, one stream: "
        f"{statistics.median(per_server):.0f} vs {statistics.median(per_engine):.0f} ns "
        f"(server {statistics.median([b['server_cores'] for b in both]):.2f} cores; rejected: "
        f"{'none' if clean else 'SOME'})",
        cpu_ratio, "x", "<= 1.3x", cpu_ratio, lambda x: x <= 1.3 and clean, 2)
    # Two streams, two sessions. On 2 vCPUs the load generator shares the
    # server's cores, so the scaling is projected from server CPU alone:
    # with each stream given the cores one stream's server used, two
    # streams run at 2 x (CPU per sample, 1 stream) / (CPU per sample, 2
    # streams) the one-stream rate. The measured rate ratio stands beside.
    two = [load(raw, "ingest-two", i) for i in r]
    scaling = [2 * b["server_cpu_ns_per_sample"] / t["server_cpu_ns_per_sample"]
               for b, t in zip(both, two)]
    measured = [t["samples_per_second"] / b["samples_per_second"] for b, t in zip(both, two)]
    row("16.4 server", f"two streams over one, projected from server CPU per sample "
        f"({statistics.median([t['server_cpu_ns_per_sample'] for t in two]):.0f} vs "
        f"{statistics.median(per_server):.0f} ns; generator excluded); measured on 2 shared vCPUs: "
        f"{statistics.median(measured):.2f}x, server {statistics.median([t['server_cores'] for t in two]):.2f} "
        f"cores + generator {statistics.median([t['load_cpu_seconds'] / t['seconds'] for t in two]):.2f}",
        scaling, "x", ">= 1.7x", scaling, lambda x: x >= 1.7, 2)

    # Performance target 2: in-process engine, both
    # policies, tick scans.
    eng = [bench(load(raw, "engine", i), "BM_Replay/full-scan+visited-scan", "samples_per_second") / 1e6 for i in r]
    ev = [bench(load(raw, "engine", i), "BM_Replay/full-scan+visited-scan", "events_per_second") / 1e6 for i in r]
    row("16.2 engine", f"samples/s on one core, both policies ({statistics.median(ev):.1f} M events/s with hand-overs)",
        eng, "M/s", ">= 20 M samples/s", [e / 20 for e in eng], lambda x: x >= 1)

    # The 26.x rows (block of perf): workloads, engine, server; ratios
    # within one repetition.
    # 26.4: both policies over a `none` replay of the same Redis stream,
    # rep by rep (the two benchmarks of one engine_benchmark process).
    engines = [load(raw, "engine", i) for i in r]
    both_rate = [bench(d, "BM_Replay/full-scan+visited-scan", "samples_per_second") for d in engines]
    none_rate = [bench(d, "BM_Replay/none", "samples_per_second") for d in engines]
    over_none = [b / n for b, n in zip(both_rate, none_rate)]
    row("26.4 engine", f"both policies over a `none` replay of the same Redis stream: "
        f"{statistics.median(both_rate) / 1e6:.1f} M vs {statistics.median(none_rate) / 1e6:.1f} M samples/s",
        over_none, "x", ">= 0.85x, same decisions", [x / 0.85 for x in over_none],
        lambda x: x >= 1, 2)
    # 26.3: `ab` on workload:redis as a whole process (its generation and
    # three policies' replay) over the engine's replay rate, both policies,
    # in the same repetition.
    redis_over = [a["redis"]["samples_per_second"] / e for a, e in zip(ab, both_rate)]
    row("26.3 workload", f"ab on workload:redis over the engine's replay, both policies: "
        f"{statistics.median(a['redis']['samples_per_second'] for a in ab) / 1e6:.2f} M vs "
        f"{statistics.median(both_rate) / 1e6:.1f} M samples/s",
        redis_over, "x", ">= 0.3x", [x / 0.3 for x in redis_over], lambda x: x >= 1, 2)
    hack = [a["hackbench"]["samples_per_second"] / 1e6 for a in ab]
    value, spread = fmt(hack, "M/s", 2)
    rows.append(("26.3 workload", "ab on workload:hackbench, samples/s (the 16.1 ab row's figure); "
                 "the goal is a ratio to the before tree's run", value, spread,
                 ">= 2x the before tree's, stream byte-identical (workload_digest_test)", "-", "-",
                 statistics.median(hack)))
    # 26.5: the 16.4 server row's first figure, against the 1.3x goal.
    row("26.5 server", "server CPU per sample over the engine's in process (the 16.4 server row)",
        cpu_ratio, "x", "<= 1.3x", cpu_ratio, lambda x: x <= 1.3 and clean, 2)

    # Performance target 6: the live collector, recorded sub-buffers through
    # LiveConverter (bench/tracefs_parse_benchmark: root and tracefs).
    live = [next(b for b in load(raw, "live", i)["benchmarks"]
                 if b["name"] == "BM_ConvertSubbuffers/real") for i in r]
    if any(b.get("error_occurred") for b in live):
        rows.append(("16.6 live", "conversion path: not measured, "
                     + live[0].get("error_message", "the benchmark failed"),
                     "-", "-", ">= 2 M events/s per core", "-", "MISS", None))
    else:
        lr = [b["events_per_second"] / 1e6 for b in live]
        row("16.6 live", "events/s on one core through the conversion path "
            "(parse, merge by time, tgid look-ups, state machine)",
            lr, "M/s", ">= 2 M events/s per core", [x / 2 for x in lr],
            lambda x: x >= 1, 2)

    # 4. Query latency at half the ingest maximum.
    q = [load(raw, "query", i) for i in r]
    qr = [x["recommend_p99_us"] / x["health_p99_us"] for x in q]
    row("4 query", f"Recommend p99 {statistics.median([x['recommend_p99_us'] for x in q]):.0f} us vs health p99 "
        f"{statistics.median([x['health_p99_us'] for x in q]):.0f} us (p50 {statistics.median([x['recommend_p50_us'] for x in q]):.0f} / "
        f"{statistics.median([x['health_p50_us'] for x in q]):.0f} us, p999 {statistics.median([x['recommend_p999_us'] for x in q]):.0f} / "
        f"{statistics.median([x['health_p999_us'] for x in q]):.0f} us)",
        qr, "x", "<= 1.5x", qr, lambda x: x <= 1.5, 2)

    # 5. Memory.
    m = [load(raw, "memory", i) for i in r]
    per = [x["bytes_per_process"] / 2 for x in m]
    row("5 memory", "server RSS growth per tracked process, per policy (2 policies; engine share included)",
        per, "B", "<= 2048 B", [p / 2048 for p in per], lambda x: x <= 1, 0)
    rss = [x["rss_after_mib"] for x in m]
    row("5 memory", f"server RSS with {m[0]['processes']:,} processes tracked",
        rss, "MiB", "<= 512 MiB", [x / 512 for x in rss], lambda x: x <= 1)

    # Performance target 5: 1,000,000 processes, each scanned.
    big = [load(raw, "memory-1m", i) for i in r]
    big_per = [x["bytes_per_process"] / 2 for x in big]
    row("16.5 memory", f"server RSS growth per tracked process, per policy, {big[0]['processes']:,} processes "
        "after each one's scan (2 policies; engine share included)",
        big_per, "B", "<= 1024 B", [p / 1024 for p in big_per], lambda x: x <= 1, 0)
    big_rss = [x["rss_after_mib"] / 1024 for x in big]
    row("16.5 memory", f"server RSS with {big[0]['processes']:,} processes tracked, both policies, each scanned",
        big_rss, "GiB", "<= 1.5 GiB", [x / 1.5 for x in big_rss], lambda x: x <= 1, 2)

    # 6. Start-up.
    st = [load(raw, "startup", i)["ready_ms_median"] for i in r]
    row("6 start-up", "exec to first SERVING health check, host topology",
        st, "ms", "<= 300 ms", [x / 300 for x in st], lambda x: x <= 1)
    return rows


def before_after(rows, before, name):
    """Prints the rows with the baseline's beside them, matched by target
    and their order within it."""
    def keyed(table_rows):
        seen = {}
        out = {}
        for t in table_rows:
            n = seen[t[0]] = seen.get(t[0], 0) + 1
            out[(t[0], n)] = t
        return out
    old = keyed(before)
    print(f"| target | what | before ({name}) | after | after / before | goal | ratio | result |")
    print("|---|---|---|---|---|---|---|---|")
    seen = {}
    for t in rows:
        n = seen[t[0]] = seen.get(t[0], 0) + 1
        b = old.get((t[0], n))
        before_text = f"{b[2]} ({b[3]})" if b and b[7] is not None else "-"
        change = (f"{t[7] / b[7]:.2f}" if b and b[7] and t[7] is not None
                  else "-")
        after_text = f"{t[2]} ({t[3]})" if t[7] is not None else "-"
        print(f"| {t[0]} | {t[1]} | {before_text} | {after_text} | {change} "
              f"| {t[4]} | {t[5]} | {t[6]} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("raw")
    parser.add_argument("reps", type=int)
    parser.add_argument("run_seconds")
    parser.add_argument("--baseline")
    parser.add_argument("--baseline-name", default="baseline")
    args = parser.parse_args()
    raw, reps, run_seconds = args.raw, args.reps, args.run_seconds
    r = range(1, reps + 1)
    rows = table(raw, reps)
    before = None
    if args.baseline:
        try:
            before = table(args.baseline, reps)
        except (KeyError, OSError, StopIteration, ValueError) as e:
            print(f"The baseline's outputs lack a figure ({e!r}): before shows '-'.\n")
            before = []

    print(f"Machine: {os.cpu_count()} CPUs, {cpu_model()}; {reps} repetitions, "
          f"{run_seconds} s of runs (build excluded). Value: median; spread: min..max.\n")
    if before is None:
        print("| target | what | value | spread | goal | ratio | result |")
        print("|---|---|---|---|---|---|---|")
        for t in rows:
            print("| " + " | ".join(t[:7]) + " |")
    else:
        before_after(rows, before, args.baseline_name)

    missed = sorted({t[0] for t in rows if t[6] == "MISS"})
    if missed:
        print("\nMissed, with the profile that says why and what would close it "
              "(docs/PERFORMANCE.md, the section each names):")
        for target in missed:
            print(f"- {target}: {PROFILES.get(target, 'no profile written yet')}")
    print("\nOther figures (medians):\n")
    print("| benchmark | CPU time | counters |")
    print("|---|---|---|")
    for name in ("scan", "engine", "trace"):
        docs = [load(raw, name, i) for i in r]
        for b in docs[0]["benchmarks"]:
            t = statistics.median(bench(d, b["name"], "cpu_time") for d in docs)
            counters = ", ".join(
                f"{k}={statistics.median(bench(d, b['name'], k) for d in docs):,.3g}"
                for k in sorted(b) if k.endswith(("per_second", "scanned", "visited_cpus", "_ns", "ratio")))
            print(f"| {b['name']} | {t:,.1f} {b['time_unit']} | {counters} |")


if __name__ == "__main__":
    main()
