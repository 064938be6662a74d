#!/usr/bin/env python3
"""Turns the raw outputs of bench/run into the Markdown targets table.

Usage: summarize.py RAW_DIR REPS RUN_SECONDS. Each figure is the median of
the repetitions, with min..max beside it.
"""
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


def main():
    raw, reps, run_seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    r = range(1, reps + 1)
    rows = []

    def row(target, name, values, unit, goal, ratio_values, ok, digits=1):
        value, spread = fmt(values, unit, digits)
        ratio = statistics.median(ratio_values)
        rows.append((target, name, value, spread, goal, f"{ratio:.2f}",
                     "pass" if ok(ratio) else "MISS"))

    # Issue 16 target 3, scan. Each ratio comes from one side-by-side
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

    # Issue 16 target 2 (issue 6 target 3): in-process engine, both
    # policies, tick scans.
    eng = [bench(load(raw, "engine", i), "BM_Replay/full-scan+visited-scan", "samples_per_second") / 1e6 for i in r]
    ev = [bench(load(raw, "engine", i), "BM_Replay/full-scan+visited-scan", "events_per_second") / 1e6 for i in r]
    row("16.2 engine", f"samples/s on one core, both policies ({statistics.median(ev):.1f} M events/s with hand-overs)",
        eng, "M/s", ">= 20 M samples/s", [e / 20 for e in eng], lambda x: x >= 1)

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

    # --- policymem: issue 16 target 5, 1,000,000 processes, each scanned ---
    big = [load(raw, "memory-1m", i) for i in r]
    big_per = [x["bytes_per_process"] / 2 for x in big]
    row("16.5 memory", f"server RSS growth per tracked process, per policy, {big[0]['processes']:,} processes "
        "after each one's scan (2 policies; engine share included)",
        big_per, "B", "<= 1024 B", [p / 1024 for p in big_per], lambda x: x <= 1, 0)
    big_rss = [x["rss_after_mib"] / 1024 for x in big]
    row("16.5 memory", f"server RSS with {big[0]['processes']:,} processes tracked, both policies, each scanned",
        big_rss, "GiB", "<= 1.5 GiB", [x / 1.5 for x in big_rss], lambda x: x <= 1, 2)
    # --- end policymem ---

    # 6. Start-up.
    st = [load(raw, "startup", i)["ready_ms_median"] for i in r]
    row("6 start-up", "exec to first SERVING health check, host topology",
        st, "ms", "<= 300 ms", [x / 300 for x in st], lambda x: x <= 1)

    print(f"Machine: {os.cpu_count()} CPUs, {cpu_model()}; {reps} repetitions, "
          f"{run_seconds} s of runs (build excluded). Value: median; spread: min..max.\n")
    print("| target | what | value | spread | goal | ratio | result |")
    print("|---|---|---|---|---|---|---|")
    for t in rows:
        print("| " + " | ".join(t) + " |")

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
