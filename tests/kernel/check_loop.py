#!/usr/bin/python3
"""The closed loop's measures and targets (docs/KERNEL.md, "The closed loop";
docs/INTEGRATION.md, "The closed loop in the guest").

  check_loop.py SHAPE_DIR
      SHAPE_DIR holds shape.txt and one directory per configuration,
      loop-fair-off, loop-fair-cache, loop-scx-empty, loop-scx-full-scan and
      loop-scx-kernel, each with its capture, expect, record.json and ab.json
      (the capture replayed with --policies full-scan,kernel on the guest's
      topology and the model's default tunables, as the live server's
      session has them), and for the scx ones the scheduler's summary
      scx.json. Prints a Markdown table of the measures per workload process
      and configuration, then each of the issue's targets as "target met" or
      "TARGET MISSED" with its figures (also on stderr), which are reported,
      not asserted; exit 1 with the reasons on stderr when one of the
      assertions fails: what schedcache-scx guarantees (guarantee_failures).

The measures come from each capture's sched_switch lines and the replay's
preference timelines:
  - a workload thread runs on a CPU from its switch-in to the next switch on
    that CPU; its runtime counts for the LLC of that CPU;
  - "on preferred" is the share of a process's runtime during which its
    preferred LLC under a policy (the replay's preferredLlcOverTime: what
    the server, fed the same stream, saw at that moment) was the LLC it ran
    on; runtime while it had no preference is not on it;
  - in the live configurations, "live" is the same share with the
    preferences the server streamed as it made them (`schedcache watch` of
    the mirrored policy, watch.txt), the timeline the mirror wrote;
  - "under a preference" is the share of its runtime during which full-scan
    gave it any LLC;
  - a cross-LLC migration is a switch-in of a thread on another LLC than the
    one of its previous switch-in; per second of the process's life (its
    first switch-in to its last switch-out);
  - a CPU's busy share is the share of the workload's window (the first
    workload switch-in to the last workload switch-out) it ran anything but
    the idle task.
"""
import bisect
import collections
import gzip
import json
import os
import re
import sys

from check_guest import check_capture, fail

CONFIGURATIONS = (
    ("loop-fair-off", "1 fair, llc_balancing off"),
    ("loop-fair-cache", "2 fair, cache-aware"),
    ("loop-scx-empty", "3 schedcache-scx, empty maps"),
    ("loop-scx-full-scan", "4 schedcache-scx, mirror of full-scan"),
    ("loop-scx-kernel", "4k schedcache-scx, mirror of kernel"),
)
POLICIES = ("full-scan", "kernel")
# The targets of docs/INTEGRATION.md, "What is reported". The fitting
# processes' share in configuration 4:
TARGET_SHARE = 0.90
# "Has no preference", measured: the model (and the kernel, for 0.2-3.6% of
# the runtime in fair-class runs) may prefer an LLC for the non-fitting
# process at its first scans, before its running-thread average has grown
# past an LLC's CPUs.
MOST_UNDER_PREFERENCE = 0.05
# "Spread": at least half an even share of its runtime on every LLC.
# "No LLC starved", asserted (docs/INTEGRATION.md, "What is asserted"):
# each LLC's CPUs busy at least this share of the window
# (the fair class keeps them 78-98% busy under TCG with this workload,
# whose threads sleep 1 ms in 5).
LEAST_LLC_BUSY = 0.80

SWITCH = re.compile(r"\[(\d+)\] (\d+)\.(\d{9}): sched_switch: .* prev_pid=(\d+) "
                    r".* ==> next_comm=.* next_pid=(\d+) ")


def read_llcs(shape_txt):
    """CPU -> dense LLC id (LLCs numbered by their lowest CPU, as
    GetTopology numbers them), and each LLC's CPU count."""
    cpus_of = collections.defaultdict(list)
    with open(shape_txt, encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            facts = dict(zip(fields[0::2], fields[1::2]))
            cpus_of[facts["llc"]].append(int(facts["cpu"]))
    llc_of, sizes = {}, []
    for dense, cpus in enumerate(sorted(cpus_of.values(), key=min)):
        for cpu in cpus:
            llc_of[cpu] = dense
        sizes.append(len(cpus))
    return llc_of, sizes


def read_runs(capture, tgid_of, llc_of):
    """From the sched_switch lines: the workload threads' runs as
    (tgid, llc, start_ns, end_ns), cross-LLC migrations per tgid, and per
    CPU its busy intervals."""
    runs, busy = [], collections.defaultdict(list)
    migrations = collections.Counter()
    current = {}  # cpu -> (tid, since)
    last_llc = {}
    with gzip.open(capture, "rt", encoding="utf-8") as f:
        for line in f:
            match = SWITCH.search(line)
            if not match:
                continue
            cpu, sec, nsec, prev, nxt = (int(g) for g in match.groups())
            now = sec * 1_000_000_000 + nsec
            if cpu in current:
                tid, since = current[cpu]
                if tid != 0:
                    busy[cpu].append((since, now))
                if tid in tgid_of:
                    runs.append((tgid_of[tid], llc_of[cpu], since, now))
            current[cpu] = (nxt, now)
            if nxt in tgid_of:
                if nxt in last_llc and last_llc[nxt] != llc_of[cpu]:
                    migrations[tgid_of[nxt]] += 1
                last_llc[nxt] = llc_of[cpu]
    return runs, migrations, busy


def timeline(ab, tgid, policy):
    """The replay's preferred LLC of TGID under POLICY as (change times,
    LLCs; None for no LLC); before the first change there is none. `ab` is
    an AbReport in protobuf's JSON mapping (64-bit integers as strings,
    -1 for no LLC, per-policy lists in the order of its policies)."""
    names = [p["report"]["policy"] for p in ab["policies"]]
    if policy not in names:
        return None
    for process in ab["processes"]:
        if process["tgid"] == tgid:
            timelines = process["preferredLlcOverTime"]
            if not timelines:
                return None
            changes = timelines[names.index(policy)]["changes"]
            return ([int(c["timestampNs"]) for c in changes],
                    [None if c["llc"] == -1 else c["llc"] for c in changes])
    return None


def read_watch(path):
    """The live timelines of `schedcache watch` (after its header, table
    rows TIMESTAMP_NS TGID POLICY OLD NEW CPU SEQ ...; LLC "-" is none):
    tgid -> (times, LLCs)."""
    lines = collections.defaultdict(lambda: ([], []))
    with open(path, encoding="utf-8") as f:
        for row in f:
            fields = row.split()
            if not fields or row.startswith("#") or fields[0] == "TIMESTAMP_NS":
                continue
            times, llcs = lines[int(fields[1])]
            times.append(int(fields[0]))
            llcs.append(None if fields[4] == "-" else int(fields[4]))
    return lines


def overlap(line, start, end, wanted):
    """Nanoseconds of [start, end) during which LINE's LLC satisfies
    WANTED."""
    times, llcs = line
    total = 0
    i = bisect.bisect_right(times, start) - 1
    t = start
    while t < end:
        llc = llcs[i] if i >= 0 else None
        nxt = times[i + 1] if i + 1 < len(times) else end
        upto = min(nxt, end)
        if wanted(llc):
            total += upto - t
        t = upto
        i += 1
    return total


def measure(directory, llc_of, sizes):
    """One configuration's measures per workload process, its CPUs' busy
    shares, and the reasons its capture fails the common checks."""
    reasons, _, ab, pids, threads = check_capture(
        directory, os.path.join(directory, "ab.json"))
    tgid_of = {tid: tgid for tgid, tid in threads}
    runs, migrations, busy = read_runs(
        os.path.join(directory, "capture.trace.gz"), tgid_of, llc_of)
    if not runs:
        return reasons + [f"{directory}: no workload thread ran"], {}, {}
    window = (min(r[2] for r in runs), max(r[3] for r in runs))
    thread_count = collections.Counter(tgid for tgid, _ in threads)
    watch = os.path.join(directory, "watch.txt")
    live = read_watch(watch) if os.path.exists(watch) else None
    processes = {}
    for tgid in pids:
        mine = [r for r in runs if r[0] == tgid]
        runtime = sum(end - start for _, _, start, end in mine)
        if runtime == 0:
            continue
        measures = {"threads": thread_count[tgid], "runtime": runtime,
                    "fits": thread_count[tgid] <= min(sizes)}
        per_llc = collections.Counter()
        for _, llc, start, end in mine:
            per_llc[llc] += end - start
        measures["llc_share"] = [per_llc[i] / runtime for i in range(len(sizes))]
        for policy in POLICIES:
            line = timeline(ab, tgid, policy)
            if line is None:
                reasons.append(f"{directory}: the replay has no {policy} "
                               f"timeline for process {tgid}")
                continue
            measures[policy] = sum(
                overlap(line, start, end, lambda p, llc=llc: p == llc)
                for _, llc, start, end in mine) / runtime
            if policy == "full-scan":
                measures["under"] = sum(
                    overlap(line, start, end, lambda p: p is not None)
                    for _, _, start, end in mine) / runtime
        if live is not None:
            line = live.get(tgid, ([], []))
            measures["live"] = sum(
                overlap(line, start, end, lambda p, llc=llc: p == llc)
                for _, llc, start, end in mine) / runtime
        life = (max(r[3] for r in mine) - min(r[2] for r in mine)) / 1e9
        measures["migrations"] = migrations[tgid] / life
        processes[tgid] = measures
    cpu_busy = {}
    for cpu in sorted(llc_of):
        spans = [(max(a, window[0]), min(b, window[1])) for a, b in busy[cpu]]
        cpu_busy[cpu] = sum(max(0, b - a) for a, b in spans) / (window[1] - window[0])
    return reasons, processes, cpu_busy


def combined(processes, policy):
    """The fitting processes' runtime on preferred under POLICY, as a share
    of their runtime together."""
    fitting = [m for m in processes.values() if m["fits"] and policy in m]
    total = sum(m["runtime"] for m in fitting)
    return sum(m[policy] * m["runtime"] for m in fitting) / total if total else 0.0


def kernel_decisions(directory):
    """The kernel's cache-aware decisions record captured."""
    with open(os.path.join(directory, "record.json"), encoding="utf-8") as f:
        return json.load(f)["kernelDecisions"]


def read_summary(directory):
    path = os.path.join(directory, "scx.json")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    with open(path, encoding="utf-8") as f:
        return json.loads(f.read().strip().splitlines()[-1])


def pct(value):
    return "-" if value is None else f"{100 * value:.1f}%"


def print_table(results):
    print("| configuration | process (threads) | runtime s | on preferred LLC "
          "(full-scan) | (kernel) | (live) | under a preference | per LLC | "
          "cross-LLC migrations/s |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|")
    for name, label in CONFIGURATIONS:
        if name not in results:
            continue
        processes, cpu_busy, summary, decisions = results[name]
        for tgid, m in sorted(processes.items(),
                              key=lambda item: (not item[1]["fits"], item[0])):
            split = "/".join(f"{100 * s:.0f}" for s in m["llc_share"])
            print(f"| {label} | {tgid} ({m['threads']}) | "
                  f"{m['runtime'] / 1e9:.2f} | {pct(m.get('full-scan'))} | "
                  f"{pct(m.get('kernel'))} | {pct(m.get('live'))} | "
                  f"{pct(m.get('under'))} | {split} | "
                  f"{m['migrations']:.1f} |")
        busy = " ".join(f"{100 * b:.0f}%" for b in cpu_busy.values())
        latency = ""
        if summary is not None:
            lat = summary.get("pref_latency_ns", {})
            latency = (f"; scheduler: placed preferred "
                       f"{summary.get('placed_preferred')}, steals "
                       f"{summary.get('steals')}, preference to placement "
                       f"p50 {lat.get('p50', 0) / 1e3:.0f} us p99 "
                       f"{lat.get('p99', 0) / 1e3:.0f} us over "
                       f"{lat.get('count')}")
        print(f"| {label} | fitting processes together: "
              f"{pct(combined(processes, 'full-scan'))} on preferred LLC; CPUs "
              f"busy {busy}; kernel decisions {decisions}{latency} "
              f"| | | | | | | |")


def llc_busy(cpu_busy, llc_of):
    """Each LLC's CPUs' mean busy share."""
    shares = collections.defaultdict(list)
    for cpu, share in cpu_busy.items():
        shares[llc_of[cpu]].append(share)
    return [sum(v) / len(v) for _, v in sorted(shares.items())]


def guarantee_failures(results, llc_of, shape_dir):
    """What schedcache-scx guarantees, which the stage asserts
    (docs/INTEGRATION.md, "What is asserted"): each scheduler registered
    (the guest's set-up waited for it), unregistered cleanly at the end and
    wrote its summary; in (4) it placed tasks by their preferences and
    measured the latency of a changed preference; no LLC was starved."""
    reasons = []
    for name in ("loop-scx-empty", "loop-scx-full-scan", "loop-scx-kernel"):
        if name not in results:
            continue
        if results[name][2] is None:
            reasons.append(f"{name}: no scheduler summary (scx.json)")
        with open(os.path.join(shape_dir, name, "scx.stderr"),
                  encoding="utf-8") as f:
            stderr = f.read()
        if "schedcache-scx: unregistered" not in stderr:
            reasons.append(f"{name}: the scheduler did not unregister "
                           f"cleanly (scx.stderr: {stderr.strip()[-200:]!r})")
    processes, cpu_busy, summary, _ = results.get(
        "loop-scx-full-scan", ({}, {}, None, 0))
    if summary is not None:
        if summary.get("placed_preferred", 0) == 0:
            reasons.append("loop-scx-full-scan: the scheduler placed no task "
                           "on its preferred LLC (placed_preferred 0)")
        if summary.get("pref_latency_ns", {}).get("count", 0) == 0:
            reasons.append("loop-scx-full-scan: the scheduler placed no task "
                           "by a changed preference (pref_latency_ns.count 0)")
    for llc, share in enumerate(llc_busy(cpu_busy, llc_of)):
        if share < LEAST_LLC_BUSY:
            reasons.append(f"loop-scx-full-scan: LLC {llc}'s CPUs busy "
                           f"{pct(share)} of the workload's window, want >= "
                           f"{pct(LEAST_LLC_BUSY)}")
    return reasons


def evaluate_targets(results):
    """The issue's comparative targets (docs/INTEGRATION.md, "What is
    reported"), as (met, text) pairs: reported, not asserted."""
    targets = []
    loop, fair_off, fair_cache, empty = (
        results.get(name, ({}, {}, None, 0))[0] for name in
        ("loop-scx-full-scan", "loop-fair-off", "loop-fair-cache",
         "loop-scx-empty"))
    for tgid, m in sorted(loop.items()):
        if m["fits"]:
            for view in ("full-scan", "live"):
                share = m.get(view, 0)
                targets.append((share >= TARGET_SHARE,
                                f"(4) process {tgid} ({m['threads']} threads) "
                                f"on its preferred LLC ({view}): {pct(share)}, "
                                f"want >= {pct(TARGET_SHARE)}"))
            continue
        targets.append((m.get("under", 1) <= MOST_UNDER_PREFERENCE,
                        f"(4) process {tgid} ({m['threads']} threads, does not "
                        f"fit) under a preference: {pct(m.get('under'))}, "
                        f"want <= {pct(MOST_UNDER_PREFERENCE)}"))
        spread = 0.5 / len(m["llc_share"])
        targets.append((min(m["llc_share"]) >= spread,
                        f"(4) process {tgid} ({m['threads']} threads) spread: "
                        f"{'/'.join(pct(s) for s in m['llc_share'])} per LLC, "
                        f"want >= {pct(spread)} on each"))
    mine = combined(loop, "full-scan")
    for label, other, at_least in (("(2) fair, cache-aware", fair_cache, True),
                                   ("(1) fair, off", fair_off, False),
                                   ("(3) scx, empty maps", empty, False)):
        theirs = combined(other, "full-scan")
        met = mine >= theirs if at_least else mine > theirs
        targets.append((met, f"(4) fitting processes together {pct(mine)} "
                             f"{'>=' if at_least else '>'} {label} {pct(theirs)}"))
    return targets


def report_targets(targets):
    """Each target on stdout (out/loop.md) and stderr, met or missed."""
    print()
    for met, text in targets:
        line = f"{'target met' if met else 'TARGET MISSED'}: {text}"
        print(f"- {line}")
        print(f"check_loop: {line}", file=sys.stderr)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    shape_dir = argv[1]
    llc_of, sizes = read_llcs(os.path.join(shape_dir, "shape.txt"))
    reasons, results = [], {}
    for name, _ in CONFIGURATIONS:
        directory = os.path.join(shape_dir, name)
        if not os.path.isdir(directory):
            reasons.append(f"{directory}: the configuration did not run")
            continue
        with open(os.path.join(directory, "status"), encoding="utf-8") as f:
            status = f.read().strip()
        if status != "ok":
            reasons.append(f"{name}: in the guest: {status}")
            continue
        found, processes, cpu_busy = measure(directory, llc_of, sizes)
        reasons += found
        results[name] = (processes, cpu_busy, read_summary(directory),
                         kernel_decisions(directory))
    print_table(results)
    report_targets(evaluate_targets(results))
    reasons += guarantee_failures(results, llc_of, shape_dir)
    if reasons:
        fail(reasons)
    print("\nclosed loop: every assertion holds")


if __name__ == "__main__":
    main(sys.argv)
