#!/usr/bin/python3
"""Host-side checks of the guest harness's results (docs/KERNEL.md).

  check_guest.py shape SHAPE_TXT NODES LLCS_PER_NODE
      the guest's sysfs facts (guest/scenarios writes shape.txt) have NODES
      NUMA nodes with LLCS_PER_NODE LLCs each, and no LLC spans two nodes.
  check_guest.py scenario DIR AB_JSON
      one scenario's capture and its replay: the capture is non-empty and
      recorded with no loss, the replay read it with 0 malformed lines, and
      every process of DIR/expect ran in the replay, and the capture's last
      cgroup line of each process DIR/expect gives a cgroup names it. With kernel decisions
      in the capture (record --kernel-decisions) and the `kernel` policy in
      the replay, also: the kernel scanned every workload process of two or
      more threads, and `kernel` agrees with itself at every kernel scan (the
      decisions reached the engine whole). Prints one summary line with each
      policy's agreement with the kernel at the kernel's scans and its own
      scan count (docs/MODEL.md, "Agreement with the kernel"); those are
      figures, not pass marks. A workload thread the replay took for a
      process of its own fails it (record names each new task's process
      from task_newtask, docs/LIVE.md).
  check_guest.py table OUT_DIR
      a Markdown table of every scenario's replay under OUT_DIR
      (SHAPE/SCENARIO/ab.json, the closed loop's loop-* left to
      check_loop.py): the kernel's scans and each model policy's
      agreement with it at those scans, and its own scans, in all and for
      the workload process that differs most (docs/MODEL.md).
Exit 1 with the reasons on stderr when a check fails.
"""
import collections
import gzip
import json
import os
import sys


def fail(reasons):
    for reason in reasons:
        print(f"check_guest: FAIL: {reason}", file=sys.stderr)
    sys.exit(1)


def check_shape(path, nodes, llcs_per_node):
    llcs_of_node = collections.defaultdict(set)
    nodes_of_llc = collections.defaultdict(set)
    with open(path, encoding="utf-8") as f:
        for line in f:
            # cpu N node X package P llc LIST
            fields = line.split()
            facts = dict(zip(fields[0::2], fields[1::2]))
            llcs_of_node[facts["node"]].add(facts["llc"])
            nodes_of_llc[facts["llc"]].add(facts["node"])
    reasons = []
    if len(llcs_of_node) != nodes:
        reasons.append(f"{path}: {len(llcs_of_node)} NUMA nodes, want {nodes}")
    for node, llcs in sorted(llcs_of_node.items()):
        if len(llcs) != llcs_per_node:
            reasons.append(f"{path}: node {node} has LLCs {sorted(llcs)}, "
                           f"want {llcs_per_node}")
    for llc, in_nodes in sorted(nodes_of_llc.items()):
        if len(in_nodes) != 1:
            reasons.append(f"{path}: LLC {llc} spans nodes {sorted(in_nodes)}")
    if reasons:
        fail(reasons)
    print(f"shape {path}: {nodes} NUMA nodes of {llcs_per_node} LLCs each")


def read_expect(path):
    """The `pid TGID`, `thread TGID TID` and `cgroup TGID PATH` lines
    guest/scenarios wrote: (pids, threads, {tgid: path})."""
    pids, threads, cgroups = [], [], {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if fields[:1] == ["cgroup"] and len(fields) == 3 and \
                    fields[1].isdigit():
                cgroups[int(fields[1])] = fields[2]
                continue
            if not all(field.isdigit() for field in fields[1:]):
                fields = []
            if len(fields) == 2 and fields[0] == "pid":
                pids.append(int(fields[1]))
            elif len(fields) == 3 and fields[0] == "thread":
                threads.append((int(fields[1]), int(fields[2])))
            else:
                fail([f"{path}:{number}: not `pid TGID`, `thread TGID TID` "
                      f"or `cgroup TGID PATH`: {line.strip()!r}"])
    return pids, threads, cgroups


def captured_cgroups(capture):
    """Per tgid, the path of the last `# schedcache_cgroup: TGID PATH` line
    of `capture` (gzip ftrace text from record, docs/LIVE.md)."""
    last = {}
    with gzip.open(capture, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("# schedcache_cgroup: "):
                fields = line.split()
                if len(fields) == 4 and fields[2].isdigit():
                    last[int(fields[2])] = fields[3]
    return last


def check_scenario(directory, ab_json):
    name = os.path.basename(os.path.normpath(directory))
    reasons, record, ab, pids, threads = check_capture(directory, ab_json)
    reasons += check_kernel(name, ab, pids, threads)
    if reasons:
        fail(reasons)
    replay = ab["input"]
    policies = ", ".join(describe_policy(p) for p in policies_of(ab))
    print(f"scenario {name}: {record['traceLines']} lines, "
          f"{replay['samples']} samples, {replay['handovers']} hand-overs, "
          f"0 malformed, 0 lost; {len(pids)} workload processes with runtime, "
          f"{len(ab['processes'])} in all; {policies}")


def check_capture(directory, ab_json):
    """The checks of every capture: returns (reasons, record.json, ab.json,
    the expected pids, the expected threads)."""
    name = os.path.basename(os.path.normpath(directory))
    reasons = []
    with open(os.path.join(directory, "status"), encoding="utf-8") as f:
        status = f.read().strip()
    if status != "ok":
        fail([f"{name}: in the guest: {status}"])
    with open(os.path.join(directory, "record.json"), encoding="utf-8") as f:
        record = json.load(f)
    with open(ab_json, encoding="utf-8") as f:
        ab = json.load(f)
    if record["traceLines"] <= 0:
        reasons.append(f"{name}: the capture has no lines")
    lost = record["losses"]
    if any(lost.values()):
        reasons.append(f"{name}: record lost events: {lost}")
    replay = ab["input"]
    if int(replay["malformedLines"]) != 0:
        reasons.append(f"{name}: replay: {replay['malformedLines']} malformed "
                       f"lines, e.g. {replay['malformedExamples'][:3]}")
    if int(replay["samples"]) == 0:
        reasons.append(f"{name}: replay: no samples")
    runtime = {p["tgid"]: int(p["runtimeNs"]) for p in ab["processes"]}
    pids, threads, cgroups = read_expect(os.path.join(directory, "expect"))
    if cgroups:
        captured = captured_cgroups(os.path.join(directory, "capture.trace.gz"))
        for tgid, path in sorted(cgroups.items()):
            if captured.get(tgid) != path:
                reasons.append(f"{name}: the capture names cgroup "
                               f"{captured.get(tgid)!r} for process {tgid}, "
                               f"not {path!r}")
    if not pids:
        reasons.append(f"{name}: the guest named no workload process")
    for pid in pids:
        if runtime.get(pid, 0) <= 0:
            reasons.append(f"{name}: workload process {pid} has no runtime in "
                           f"the replay")
    split = [tid for tgid, tid in threads if tid != tgid and tid in runtime]
    if split:
        reasons.append(f"{name}: workload threads {split} replayed as processes "
                       f"of their own (record filed them under their own pid)")
    return reasons, record, ab, pids, threads


def check_kernel(name, ab, pids, threads):
    """The kernel decisions' checks; none when the replay had no `kernel`."""
    kernel = next((p for p in policies_of(ab) if p["policy"] == "kernel"), None)
    if kernel is None:
        return []
    reasons = []
    if int(ab["input"]["kernelDecisions"]) == 0:
        reasons.append(f"{name}: the capture has no kernel decisions")
    if int(kernel["kernelAgreements"]) != int(kernel["kernelScans"]):
        reasons.append(f"{name}: kernel agrees with itself at "
                       f"{kernel['kernelAgreements']} of its "
                       f"{kernel['kernelScans']} scans")
    scans = {p["tgid"]: int((kernel_counts(ab, p, "kernel") or {}).get(
                 "kernelScans", 0))
             for p in ab["processes"]}
    thread_count = collections.Counter(tgid for tgid, _ in threads)
    for pid in pids:
        if thread_count[pid] >= 2 and scans.get(pid, 0) == 0:
            reasons.append(f"{name}: the kernel never scanned workload "
                           f"process {pid} ({thread_count[pid]} threads)")
    return reasons


def policies_of(ab):
    """The policies' reports (schedcache.v1.PolicyReport) of `ab`, an
    AbReport in protobuf's JSON mapping: 64-bit integers are strings, and
    a ratio with nothing to divide by is absent."""
    return [p["report"] for p in ab["policies"]]


def kernel_counts(ab, process, policy):
    """PROCESS's agreement with the kernel under POLICY (AbKernelCounts),
    or None when the kernel made no decision for it."""
    names = [p["policy"] for p in policies_of(ab)]
    if policy not in names or not process["kernel"]:
        return None
    return process["kernel"][names.index(policy)]


def describe_policy(policy):
    """`NAME D decisions A% agree`, and with kernel scans `at kernel scans
    K/O A%`: the kernel's scans, the policy's own, the agreement there."""
    text = f"{policy['policy']} {policy['decisions']} decisions"
    if "agreement" in policy:
        text += f" {100 * policy['agreement']:.1f}% agree"
    if int(policy["kernelScans"]):
        text += (f"; at kernel scans {policy['kernelScans']}/"
                 f"{policy['kernelProcessScans']} "
                 f"{100 * policy['kernelAgreement']:.2f}%")
    return text


def scan_deviation(ab, policy, pids):
    """The largest |own - kernel| / kernel scans over the workload processes
    the kernel scanned, as a percentage; None when it scanned none."""
    worst = None
    for process in ab["processes"]:
        counts = kernel_counts(ab, process, policy)
        if process["tgid"] not in pids or not counts or not int(counts["kernelScans"]):
            continue
        own, kernel = int(counts["scans"]), int(counts["kernelScans"])
        deviation = abs(own - kernel) / kernel
        worst = deviation if worst is None else max(worst, deviation)
    return None if worst is None else 100 * worst


def print_table(out_dir):
    models = ("full-scan", "visited-scan")
    print("| scenario | kernel scans | " + " | ".join(
        f"{m}: agree at kernel scans | {m}: own scans (worst process)"
        for m in models) + " |")
    print("|---|---:|" + "---:|---:|" * len(models))
    for shape in ("4cpu", "8cpu"):
        shape_dir = os.path.join(out_dir, shape)
        if not os.path.isdir(shape_dir):
            continue
        for name in sorted(os.listdir(shape_dir)):
            ab_json = os.path.join(shape_dir, name, "ab.json")
            # The closed loop's replays (loop-*) have no visited-scan and a
            # table of their own (check_loop.py).
            if name.startswith("loop-") or not os.path.exists(ab_json):
                continue
            with open(ab_json, encoding="utf-8") as f:
                ab = json.load(f)
            pids, _, _ = read_expect(os.path.join(shape_dir, name, "expect"))
            by_name = {p["policy"]: p for p in policies_of(ab)}
            kernel_scans = by_name[models[0]]["kernelScans"]
            cells = []
            for model in models:
                policy = by_name[model]
                agree = policy.get("kernelAgreement")
                worst = scan_deviation(ab, model, pids)
                cells.append("-" if agree is None else f"{100 * agree:.2f}%")
                cells.append(f"{policy['kernelProcessScans']} "
                             f"({'-' if worst is None else f'{worst:+.0f}%'.lstrip('+')})")
            print(f"| {shape} {name} | {kernel_scans} | " + " | ".join(cells) + " |")


def main(argv):
    if len(argv) == 3 and argv[1] == "table":
        print_table(argv[2])
    elif len(argv) == 5 and argv[1] == "shape":
        check_shape(argv[2], int(argv[3]), int(argv[4]))
    elif len(argv) == 4 and argv[1] == "scenario":
        check_scenario(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv)
