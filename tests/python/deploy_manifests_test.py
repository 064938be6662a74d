#!/usr/bin/python3
"""The deployment files under deploy/, checked without a cluster.

Kubernetes manifests are parsed (Debian's python3-yaml) and checked for what
the API server and the kubelet would refuse or what docs/OPERATIONS.md
("Deploying") requires:
every object has apiVersion, kind and metadata; every container an image
and a command; every volume mount names a declared volume; each container
has exactly the capabilities docs/OPERATIONS.md gives it; the DaemonSet
shares the host's PID namespace, mounts tracefs and bpffs and carries the
Prometheus scrape annotations; the Indexed Job's completions equal the N
of its --shard and of the merge's file list. The systemd unit goes through
`systemd-analyze verify` where that tool exists.

The command lines checked: the containers' (and readiness probes'), the
unit's ExecStart and the Dockerfile's ENTRYPOINT + CMD.

Every flag the files pass to schedcached or to a schedcache verb must be
one its --help lists, and every verb they run must be one of the
schedcache binary.

  /usr/bin/python3 deploy_manifests_test.py --deploy-dir DIR \\
      --schedcached PATH --schedcache PATH

Exits 77 (CTest: skipped) without python3-yaml.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import yaml
except ImportError as error:
    print(f"skipping: {error} (install python3-yaml)")
    sys.exit(77)

ARGS = None

# The capabilities each container may add (all others dropped), with the
# reason in docs/OPERATIONS.md.
CAPABILITIES = {
    "schedcached": [],
    "record": [],        # uid 0 owns tracefs; no mount needed
    "mirror": ["BPF"],   # bpf() map create/update, unprivileged BPF is off
    "state-owner": ["CHOWN"],
    "ab": [],
    "ab-merge": [],
}

FLAG_RE = re.compile(r"^--([A-Za-z0-9_-]+)")


def load_documents(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def manifests():
    """Yields (file name, document) of every YAML file in kubernetes/."""
    folder = os.path.join(ARGS.deploy_dir, "kubernetes")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".yaml"):
            for doc in load_documents(os.path.join(folder, name)):
                yield name, doc


def pod_spec(doc):
    kind = doc.get("kind")
    if kind in ("DaemonSet", "Job", "Deployment", "StatefulSet"):
        return doc["spec"]["template"]["spec"]
    return None


def containers_of(spec):
    return spec.get("initContainers", []) + spec.get("containers", [])


def help_text(binary, *args):
    """The --help of `binary args`, or None when it has none (an unknown
    verb exits 2 with no flag list). Abseil's --help (schedcached) exits 1
    after printing, so the text decides, not the exit code."""
    result = subprocess.run([binary, *args, "--help"], capture_output=True,
                            text=True, timeout=60)
    text = result.stdout + result.stderr
    if result.returncode == 2 or "--" not in text:
        return None
    return text


def flag_names(args):
    names = []
    for arg in args:
        match = FLAG_RE.match(arg)
        if match:
            names.append(match.group(1))
    return names


def server_flag_known(help, name):
    # Abseil's --help lists "--name (...)"; flags are spelled with _ there,
    # and schedcached accepts - for _.
    return re.search(r"--" + re.escape(name.replace("-", "_")) + r"\b",
                     help) is not None


def cli_flag_known(help, name):
    return re.search(r"--" + re.escape(name) + r"\b", help) is not None


class Invocations:
    """Collects every schedcached / schedcache command line in deploy/."""

    def __init__(self):
        self.lines = []  # (where, argv)

    def add(self, where, argv):
        if argv and os.path.basename(argv[0]) in ("schedcached", "schedcache"):
            self.lines.append((where, argv))


def collect_invocations():
    found = Invocations()
    for name, doc in manifests():
        spec = pod_spec(doc)
        if spec is None:
            continue
        for c in containers_of(spec):
            where = f"{name}: {doc['metadata']['name']}/{c['name']}"
            found.add(where, c.get("command", []) + c.get("args", []))
            probe = c.get("readinessProbe", {}).get("exec", {})
            found.add(where + " readinessProbe", probe.get("command", []))
    unit = os.path.join(ARGS.deploy_dir, "systemd", "schedcached.service")
    found.add("schedcached.service ExecStart", exec_start(unit))
    dockerfile = os.path.join(ARGS.deploy_dir, os.pardir, "Dockerfile")
    found.add("Dockerfile ENTRYPOINT + CMD", dockerfile_command(dockerfile))
    return found


def dockerfile_command(path):
    """The runtime stage's ENTRYPOINT followed by its CMD (exec forms)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parts = {}
    for key in ("ENTRYPOINT", "CMD"):
        forms = re.findall(r"^" + key + r" (\[.*\])$", text, re.MULTILINE)
        parts[key] = json.loads(forms[-1]) if forms else []
    return parts["ENTRYPOINT"] + parts["CMD"]


def exec_start(unit_path):
    with open(unit_path, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    match = re.search(r"^ExecStart=(.*)$", text, re.MULTILINE)
    return match.group(1).split() if match else []


class ManifestShapeTest(unittest.TestCase):
    def test_every_object_has_api_version_kind_and_metadata(self):
        count = 0
        for name, doc in manifests():
            count += 1
            for field in ("apiVersion", "kind", "metadata"):
                self.assertIn(field, doc, f"{name}: {doc.get('kind')}")
            self.assertTrue(doc["metadata"].get("name"), name)
            if doc["kind"] != "Namespace":
                self.assertEqual(doc["metadata"].get("namespace"),
                                 "schedcache", f"{name}: {doc['kind']}")
        self.assertGreaterEqual(count, 5)

    def test_containers_have_image_and_command_and_mount_declared_volumes(self):
        for name, doc in manifests():
            spec = pod_spec(doc)
            if spec is None:
                continue
            volumes = {v["name"] for v in spec.get("volumes", [])}
            for c in containers_of(spec):
                where = f"{name}: {doc['metadata']['name']}/{c.get('name')}"
                self.assertTrue(c.get("image"), where)
                self.assertTrue(c.get("command") or c.get("args"), where)
                for mount in c.get("volumeMounts", []):
                    self.assertIn(mount["name"], volumes,
                                  f"{where}: mount {mount['name']}")

    def test_each_container_has_exactly_its_documented_capabilities(self):
        seen = set()
        for name, doc in manifests():
            spec = pod_spec(doc)
            if spec is None:
                continue
            for c in containers_of(spec):
                where = f"{name}: {c['name']}"
                self.assertIn(c["name"], CAPABILITIES, where)
                seen.add(c["name"])
                sc = c.get("securityContext", {})
                self.assertFalse(sc.get("privileged", False), where)
                self.assertIs(sc.get("allowPrivilegeEscalation"), False, where)
                caps = sc.get("capabilities", {})
                self.assertEqual(caps.get("drop"), ["ALL"], where)
                self.assertEqual(sorted(caps.get("add", [])),
                                 sorted(CAPABILITIES[c["name"]]), where)
        self.assertEqual(seen, set(CAPABILITIES))

    def daemonset(self):
        for _, doc in manifests():
            if doc["kind"] == "DaemonSet":
                return doc
        self.fail("no DaemonSet in deploy/kubernetes")

    def test_daemonset_runs_server_record_and_mirror_on_the_host(self):
        ds = self.daemonset()
        spec = pod_spec(ds)
        self.assertIs(spec.get("hostPID"), True)
        by_name = {c["name"]: c for c in spec["containers"]}
        self.assertEqual(set(by_name), {"schedcached", "record", "mirror"})
        self.assertEqual(by_name["record"]["args"][0], "record")
        self.assertEqual(by_name["mirror"]["args"][0], "mirror")
        host_paths = {v["name"]: v["hostPath"]["path"]
                      for v in spec["volumes"] if "hostPath" in v}
        for container, path in (("record", "/sys/kernel/tracing"),
                                ("mirror", "/sys/fs/bpf")):
            volumes = [m["name"]
                       for m in by_name[container].get("volumeMounts", [])
                       if m["mountPath"] == path]
            self.assertEqual(len(volumes), 1,
                             f"{container}: no volume mounted at {path}")
            self.assertEqual(host_paths.get(volumes[0]), path,
                             f"{container}: {path} is not the host's")

    def test_daemonset_scrape_annotations_match_the_metrics_listener(self):
        ds = self.daemonset()
        notes = ds["spec"]["template"]["metadata"]["annotations"]
        self.assertEqual(notes.get("prometheus.io/scrape"), "true")
        server = next(c for c in pod_spec(ds)["containers"]
                      if c["name"] == "schedcached")
        listen = [a for a in server["args"]
                  if a.startswith("--metrics_listen=")]
        self.assertEqual(len(listen), 1, server["args"])
        port = listen[0].rsplit(":", 1)[1]
        self.assertEqual(notes.get("prometheus.io/port"), port)
        self.assertIn(int(port),
                      [p["containerPort"] for p in server.get("ports", [])])

    def test_indexed_job_completions_match_the_shard_count(self):
        jobs = {doc["metadata"]["name"]: doc
                for _, doc in manifests() if doc["kind"] == "Job"}
        shards = jobs["schedcache-ab"]
        self.assertEqual(shards["spec"]["completionMode"], "Indexed")
        completions = shards["spec"]["completions"]
        self.assertLessEqual(shards["spec"]["parallelism"], completions)
        ab = pod_spec(shards)["containers"][0]
        shard_args = [a for a in ab["args"] if a.startswith("--shard=")]
        self.assertEqual(shard_args, [f"--shard=$(SHARD)/{completions}"])
        index_env = {e["name"]: e for e in ab["env"]}["SHARD"]
        self.assertEqual(
            index_env["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.annotations['batch.kubernetes.io/job-completion-index']")
        json_arg = next(a for a in ab["args"] if a.startswith("--json="))
        pattern = json_arg.split("=", 1)[1]
        merge = pod_spec(jobs["schedcache-ab-merge"])["containers"][0]
        self.assertEqual(merge["args"][0], "ab-merge")
        files = [a for a in merge["args"][1:] if not a.startswith("--")]
        self.assertEqual(files, [pattern.replace("$(SHARD)", str(k))
                                 for k in range(completions)])


class FlagsExistTest(unittest.TestCase):
    def test_every_flag_in_deploy_is_a_flag_of_its_binary(self):
        binaries = {"schedcached": ARGS.schedcached,
                    "schedcache": ARGS.schedcache}
        helps = {}
        missing = []
        checked = 0
        for where, argv in collect_invocations().lines:
            program = os.path.basename(argv[0])
            if program == "schedcached":
                key = ("schedcached",)
                flags = flag_names(argv[1:])
            else:
                key = ("schedcache", argv[1])
                flags = flag_names(argv[2:])
            if key not in helps:
                helps[key] = help_text(binaries[program], *key[1:])
            help = helps[key]
            self.assertIsNotNone(
                help, f"{where}: `{' '.join(key)} --help` lists no flags "
                "(not a verb of this build?)")
            for name in flags:
                if program == "schedcached":
                    known = server_flag_known(help, name)
                else:
                    known = cli_flag_known(help, name)
                if not known:
                    missing.append(f"{where}: {' '.join(key)} has no --{name}")
                checked += 1
        self.assertEqual(missing, [])
        self.assertGreater(checked, 10)


class SystemdUnitTest(unittest.TestCase):
    def test_unit_passes_systemd_analyze_verify(self):
        analyze = shutil.which("systemd-analyze")
        if analyze is None:
            self.skipTest("systemd-analyze is not installed")
        unit = os.path.join(ARGS.deploy_dir, "systemd", "schedcached.service")
        with open(unit, encoding="utf-8") as f:
            text = f.read()
        # verify checks that ExecStart's binary exists: point it at the
        # one just built instead of the installed path.
        text = text.replace("/usr/local/bin/schedcached", ARGS.schedcached)
        with tempfile.TemporaryDirectory() as folder:
            copy = os.path.join(folder, "schedcached.service")
            with open(copy, "w", encoding="utf-8") as f:
                f.write(text)
            result = subprocess.run([analyze, "verify", copy],
                                    capture_output=True, text=True, timeout=60)
        problems = [line for line in (result.stdout + result.stderr).splitlines()
                    if "schedcached.service" in line]
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(problems, [])


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--deploy-dir", required=True)
    parser.add_argument("--schedcached", required=True)
    parser.add_argument("--schedcache", required=True)
    ARGS, rest = parser.parse_known_args()
    ARGS.schedcached = os.path.abspath(ARGS.schedcached)
    ARGS.schedcache = os.path.abspath(ARGS.schedcache)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
