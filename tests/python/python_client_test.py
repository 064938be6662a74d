#!/usr/bin/python3
"""A schedcache client nobody here wrote: Debian's python3-grpcio, with
stubs generated from the .proto at test time by python3-grpc-tools.

It starts the built schedcached on a temporary Unix socket, checks gRPC
health and reflection, reads the topology, creates a session, ingests, and
reads a Recommend and a Report. Run by CTest:

  /usr/bin/python3 python_client_test.py --schedcached PATH --proto-root DIR

Exits 77 (CTest: skipped) when grpcio or grpc_tools is missing.
"""

import argparse
import os
import signal
import sys
import tempfile
import unittest

import schedcache_stubs  # first: exits 77 (skipped) without grpcio
import grpc

ARGS = None
MS = 1_000_000



class PythonClientTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="schedcache-py-")
        global pb, pb_grpc
        pb, pb_grpc = schedcache_stubs.load(ARGS.proto_root, cls.tmp.name)
        # The socket's folder does not exist yet: schedcached makes it.
        cls.server = schedcache_stubs.UnixServer(
            ARGS.schedcached, pb_grpc,
            os.path.join(cls.tmp.name, "run", "schedcached.sock"),
            os.path.join(cls.tmp.name, "server.log"))
        cls.channel = cls.server.channel
        cls.stub = cls.server.stub

    @classmethod
    def tearDownClass(cls):
        cls.server.close()
        cls.tmp.cleanup()

    def test_health_check_serving(self):
        # grpc.health.v1.HealthCheckRequest{} is empty; the response
        # {status: SERVING (1)} encodes as field 1, varint 1.
        check = self.channel.unary_unary("/grpc.health.v1.Health/Check")
        self.assertEqual(check(b"", timeout=10), b"\x08\x01")

    def test_reflection_lists_service(self):
        # ServerReflectionRequest{list_services: ""}: field 7, length 0.
        info = self.channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        responses = info(iter([b"\x3a\x00"]), timeout=10)
        self.assertIn(b"schedcache.v1.SchedCache", next(responses))

    def test_topology_session_ingest_recommend(self):
        host = self.stub.GetTopology(pb.GetTopologyRequest(), timeout=10)
        self.assertGreater(host.topology.total_cpus, 0)

        session = self.stub.CreateSession(pb.CreateSessionRequest(
            name="py",
            topology=pb.TopologySource(spec="synthetic:pack:1 l3:2 core:2 pu:1"),
            policies=["full-scan", "visited-scan", "none"],
            trigger=pb.SCAN_TRIGGER_TICK), timeout=10)
        self.assertEqual(list(session.policies),
                         ["full-scan", "visited-scan", "none"])

        # Two ticks of process 100 (2 threads) on CPU 0, 20 ms apart: the
        # second crosses two epoch boundaries and scans; only LLC 0 has
        # runtime, so it becomes preferred (docs/MODEL.md: tick and scan). The
        # third event names a CPU the topology lacks and is rejected.
        events = [
            pb.Event(timestamp_ns=1000, cpu=0, tgid=100, tid=101,
                     delta_ns=MS, tick=True, nr_threads=2, comm="py-worker"),
            pb.Event(timestamp_ns=1000 + 20 * MS, cpu=0, tgid=100, tid=101,
                     delta_ns=MS, tick=True),
            pb.Event(timestamp_ns=1000 + 20 * MS, cpu=64, tgid=100, tid=101,
                     delta_ns=MS, tick=True),
        ]
        summary = self.stub.Ingest(
            iter([pb.IngestBatch(session="py", events=events[:2]),
                  pb.IngestBatch(events=events[2:])]), timeout=10)
        self.assertEqual(summary.accepted, 2)
        self.assertEqual(summary.rejected, 1)
        self.assertIn("cpu 64", summary.first_rejections[0].reason)

        answer = self.stub.Recommend(
            pb.RecommendRequest(session="py", tgid=100), timeout=10)
        by_policy = {d.policy: d for d in answer.decisions}
        self.assertEqual(by_policy["full-scan"].preferred_llc, 0)
        self.assertEqual(by_policy["full-scan"].cost.cpus_scanned, 4)
        self.assertEqual(by_policy["visited-scan"].preferred_llc, 0)
        self.assertEqual(by_policy["visited-scan"].cost.cpus_scanned, 1)
        self.assertEqual(by_policy["none"].preferred_llc, -1)

        with self.assertRaises(grpc.RpcError) as missing:
            self.stub.Recommend(pb.RecommendRequest(session="py", tgid=999),
                                timeout=10)
        self.assertEqual(missing.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertIn("999", missing.exception.details())

        report = self.stub.GetReport(pb.GetReportRequest(session="py"),
                                     timeout=10)
        self.assertEqual(report.samples_applied, 2)
        self.assertEqual(report.policies[0].policy, "full-scan")

    def test_zz_sigterm_exits_zero(self):
        # Runs last (unittest sorts by name).
        self.server.process.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.process.wait(timeout=5), 0)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedcached", required=True)
    parser.add_argument("--proto-root", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
