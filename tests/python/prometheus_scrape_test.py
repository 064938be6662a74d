#!/usr/bin/python3
"""schedcached's metrics scraped by a real Prometheus server (Debian's
`prometheus`): schedcached serves --metrics_listen=127.0.0.1:0 (the port
it picked is read from its log), Prometheus scrapes it every 200 ms from a
generated config, the schedcache CLI creates a session and feeds it a
known CSV stream, and once Prometheus has scraped after the feed, its HTTP
query API (/api/v1/query) must give the feed's IngestSummary and the
session's GetReport, counter for counter. Prometheus's own listener gets a
free port (bound to port 0, read, released). Every wait is a bounded poll.
Run by CTest:

  /usr/bin/python3 prometheus_scrape_test.py --schedcached PATH \\
      --schedcache PATH

Exits 77 (CTest: skipped) when the prometheus binary is missing.
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

PROMETHEUS = shutil.which("prometheus")
if PROMETHEUS is None:
    print("skipping: no `prometheus` binary on PATH "
          "(install Debian's prometheus package)")
    sys.exit(77)

ARGS = None
TIMEOUT = 60  # seconds: Prometheus's start-up and first scrapes included
TOPOLOGY = "synthetic:pack:1 l3:2 core:4 pu:2"  # 16 CPUs, 2 L3s

# The stream of docs/SERVICE.md's short session: 7 samples and 3
# hand-overs accepted, the sample on CPU 99 rejected (reason "cpu").
SAMPLES = """\
timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,footprint_pages,comm
0,0,4242,4242,,,,,,
0,1,4242,4243,,,,,,
4000000,0,4242,4242,4000000,1,2,,,redis-server
4000000,1,4242,4243,4000000,1,,,,redis-server
12000000,0,4242,4242,8000000,1,,,,redis-server
12000000,1,4242,4243,8000000,1,,,,redis-server
20000000,0,4242,4242,8000000,1,,,,redis-server
20000000,1,4242,4243,8000000,0,,,,redis-server
20000000,1,0,0,,,,,,
24000000,0,4242,4242,4000000,1,,,,redis-server
24000000,99,4242,4242,4000000,1,,,,redis-server
"""


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(what, condition, timeout=TIMEOUT):
    """Polls `condition` until it returns a true value, for `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for "
                                 f"{what}")
        time.sleep(0.1)


class Prometheus:
    """A Prometheus server scraping `target` every 200 ms."""

    def __init__(self, root, target):
        self.address = f"127.0.0.1:{free_port()}"
        config = os.path.join(root, "prometheus.yml")
        with open(config, "w") as out:
            out.write("global:\n"
                      "  scrape_interval: 200ms\n"
                      "  scrape_timeout: 200ms\n"
                      "scrape_configs:\n"
                      "  - job_name: schedcached\n"
                      "    static_configs:\n"
                      f"      - targets: ['{target}']\n")
        self.log = open(os.path.join(root, "prometheus.log"), "w")
        self.process = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}",
             f"--storage.tsdb.path={os.path.join(root, 'tsdb')}",
             f"--web.listen-address={self.address}"],
            stdout=self.log, stderr=subprocess.STDOUT)
        wait_for("Prometheus to be ready", self.ready)

    def ready(self):
        if self.process.poll() is not None:
            raise AssertionError(
                f"prometheus exited {self.process.returncode}; see "
                f"{self.log.name}")
        try:
            with urllib.request.urlopen(
                    f"http://{self.address}/-/ready", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def query(self, promql):
        """The instant vector of `promql`: {frozen labels: value}."""
        url = (f"http://{self.address}/api/v1/query?" +
               urllib.parse.urlencode({"query": promql}))
        with urllib.request.urlopen(url, timeout=10) as answer:
            body = json.load(answer)
        assert body["status"] == "success", body
        return {frozenset((k, v) for k, v in sample["metric"].items()
                          if k not in ("instance", "job")):
                float(sample["value"][1])
                for sample in body["data"]["result"]}

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=TIMEOUT)
        self.log.close()


def labels(**pairs):
    return frozenset(pairs.items())


class PrometheusScrapeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="schedcache-prom-")
        cls.socket = f"unix:{os.path.join(cls.root, 'schedcached.sock')}"
        cls.server = subprocess.Popen(
            [ARGS.schedcached, f"--listen={cls.socket}",
             "--metrics_listen=127.0.0.1:0"],
            stderr=subprocess.PIPE, text=True)
        cls.metrics = cls.read_metrics_address()
        cls.prometheus = Prometheus(cls.root, cls.metrics)

    @classmethod
    def read_metrics_address(cls):
        # The metrics line comes once the server listens; a reader thread
        # keeps the wait bounded even if schedcached logs nothing.
        found = {}

        def read():
            for line in cls.server.stderr:
                match = re.search(r"metrics on http://(\S+)/metrics", line)
                if match:
                    found["address"] = match.group(1)
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(TIMEOUT)
        if "address" not in found:
            raise AssertionError("schedcached logged no metrics address")
        return found["address"]

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.stop()
        cls.server.terminate()
        cls.server.wait(timeout=TIMEOUT)
        shutil.rmtree(cls.root, ignore_errors=True)

    def cli(self, *args, stdin=None):
        result = subprocess.run(
            [ARGS.schedcache, *args, f"--server={self.socket}"],
            input=stdin, capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def scraped_since(self, when):
        """True once Prometheus holds a sample scraped after `when`."""
        times = self.prometheus.query("timestamp(schedcache_sessions)")
        return times and min(times.values()) > when

    def test_counters_equal_the_ingest_summary_and_the_report(self):
        self.cli("session", "create", "--name", "demo", "--topology",
                 TOPOLOGY, "--policies", "full-scan,visited-scan,none")
        summary = json.loads(self.cli("feed", "--session", "demo",
                                      "--format", "json", "-",
                                      stdin=SAMPLES))
        report = json.loads(self.cli("report", "--session", "demo",
                                     "--format", "json"))
        fed = time.time()
        wait_for("a scrape after the feed", lambda: self.scraped_since(fed))

        events = self.prometheus.query(
            'schedcache_ingest_events_total{session="demo"}')
        self.assertEqual(events, {
            labels(__name__="schedcache_ingest_events_total", session="demo",
                   result="accepted"): float(summary["accepted"]),
            labels(__name__="schedcache_ingest_events_total", session="demo",
                   result="rejected"): float(summary["rejected"]),
        })
        # By hand: 7 samples + 3 hand-overs accepted, CPU 99 rejected.
        self.assertEqual((summary["accepted"], summary["rejected"]),
                         ("10", "1"))
        self.assertEqual(
            int(report["samplesApplied"]) + int(report["handoversApplied"]),
            10)
        rejections = self.prometheus.query(
            'sum by (reason) (schedcache_ingest_rejections_total'
            '{session="demo"}) > 0')
        self.assertEqual(rejections, {labels(reason="cpu"): 1.0})

        scans = self.prometheus.query(
            'sum by (policy, outcome) (schedcache_scans_total'
            '{session="demo"})')
        changes = self.prometheus.query(
            'sum by (policy) (schedcache_preference_changes_total'
            '{session="demo"})')
        for policy in report["policies"]:
            name = policy["policy"]
            for outcome, field in (("executed", "scans"),
                                   ("skipped", "scansSkipped"),
                                   ("aborted", "scansAborted")):
                self.assertEqual(
                    scans[labels(policy=name, outcome=outcome)],
                    float(policy.get(field, 0)), f"{name} {outcome}")
            self.assertEqual(changes[labels(policy=name)],
                             float(policy.get("preferredLlcChanges", 0)),
                             name)
        # By hand (docs/SERVICE.md): full-scan scanned twice, 16 CPUs each.
        cpus = self.prometheus.query(
            'schedcache_scan_cpus_sum{session="demo",policy="full-scan"}')
        self.assertEqual(list(cpus.values()), [32.0])
        tracked = self.prometheus.query(
            'schedcache_processes_tracked{session="demo"}')
        self.assertEqual(list(tracked.values()),
                         [float(report["processesTracked"])])
        sessions = self.prometheus.query("schedcache_sessions")
        self.assertEqual(list(sessions.values()), [2.0])  # default, demo


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedcached", required=True)
    parser.add_argument("--schedcache", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
