#!/usr/bin/python3
"""WatchPreferences' snapshot under concurrent Ingest, from a client nobody
here wrote (Debian's python3-grpcio, stubs generated at test time).

One stream ingests 400 processes in small batches; half way it waits until
a snapshot watch is attached, so the snapshot is taken while the batches
already sent are still being applied, and the rest follows at once. Once
Ingest has ended, the watcher's state per (tgid, policy), built from the
snapshot and the changes after its Synced marker, must equal Recommend's
answers, and the changes after the marker must be numbered consecutively:
no gap, no duplicate. Run by CTest:

  /usr/bin/python3 watch_snapshot_test.py --schedcached PATH --proto-root DIR

Exits 77 (CTest: skipped) when grpcio or grpc_tools is missing.
"""

import argparse
import os
import sys
import tempfile
import threading
import unittest

import schedcache_stubs  # first: exits 77 (skipped) without grpcio
import grpc

ARGS = None
MS = 1_000_000
TIMEOUT = 60
PROCESSES = 400
EVENTS_PER_BATCH = 4



def process_events(k):
    """Two ticks of process 1000 + k (2 threads) 20 ms apart on CPU 0 (LLC
    0) for even k, CPU 2 (LLC 1) for odd k: the second tick crosses two
    epoch boundaries and scans, and only that CPU's LLC has runtime, so
    full-scan and visited-scan each change -1 -> that LLC (docs/MODEL.md)."""
    tgid = 1000 + k
    cpu = 0 if k % 2 == 0 else 2
    t0 = 1000 + 30 * MS * k
    return [
        pb.Event(timestamp_ns=t0, cpu=cpu, tgid=tgid, tid=tgid, delta_ns=MS,
                 tick=True, nr_threads=2),
        pb.Event(timestamp_ns=t0 + 20 * MS, cpu=cpu, tgid=tgid, tid=tgid,
                 delta_ns=MS, tick=True),
    ]


class WatchSnapshotTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="schedcache-py-")
        global pb, pb_grpc
        pb, pb_grpc = schedcache_stubs.load(ARGS.proto_root, cls.tmp.name)
        cls.server = schedcache_stubs.UnixServer(
            ARGS.schedcached, pb_grpc,
            os.path.join(cls.tmp.name, "schedcached.sock"),
            os.path.join(cls.tmp.name, "server.log"))
        cls.stub = cls.server.stub

    @classmethod
    def tearDownClass(cls):
        cls.server.close()
        cls.tmp.cleanup()

    def batches(self, half_sent, attached):
        events = [e for k in range(PROCESSES) for e in process_events(k)]
        for start in range(0, len(events), EVENTS_PER_BATCH):
            if start == len(events) // 2:
                half_sent.set()
                attached.wait(TIMEOUT)
            yield pb.IngestBatch(session="w",
                                 events=events[start:start + EVENTS_PER_BATCH])

    def test_snapshot_then_changes_without_gap_or_duplicate(self):
        self.stub.CreateSession(pb.CreateSessionRequest(
            name="w",
            topology=pb.TopologySource(spec="synthetic:pack:1 l3:2 core:2 pu:1"),
            policies=["full-scan", "visited-scan", "none"]), timeout=TIMEOUT)
        half_sent = threading.Event()
        attached = threading.Event()
        summary = {}
        ingest = threading.Thread(target=lambda: summary.update(
            result=self.stub.Ingest(self.batches(half_sent, attached),
                                    timeout=TIMEOUT)))
        ingest.start()
        self.assertTrue(half_sent.wait(TIMEOUT))
        watch = self.stub.WatchPreferences(
            pb.WatchPreferencesRequest(session="w", snapshot=True),
            timeout=TIMEOUT)
        watch.initial_metadata()  # attached: the snapshot is taken
        attached.set()
        read = []
        ended = {}

        def read_all():
            try:
                for response in watch:
                    read.append(response)
            except grpc.RpcError as error:
                ended.update(code=error.code(), details=error.details())

        reader = threading.Thread(target=read_all)
        reader.start()
        ingest.join(TIMEOUT)
        self.assertEqual(summary["result"].accepted, 2 * PROCESSES)
        self.assertEqual(summary["result"].rejected, 0)

        expected = {}
        for k in range(PROCESSES):
            answer = self.stub.Recommend(
                pb.RecommendRequest(session="w", tgid=1000 + k),
                timeout=TIMEOUT)
            for decision in answer.decisions:
                expected[(answer.tgid, decision.policy)] = \
                    decision.preferred_llc
        # Deleting the session ends the watch once everything is sent.
        self.stub.DeleteSession(pb.DeleteSessionRequest(session="w"),
                                timeout=TIMEOUT)
        reader.join(TIMEOUT)
        self.assertEqual(ended.get("code"), grpc.StatusCode.NOT_FOUND, ended)

        start = read[0].snapshot_start
        self.assertEqual(read[0].WhichOneof("event"), "snapshot_start")
        entries = read[1:1 + start.entries]
        self.assertTrue(all(r.change.snapshot for r in entries))
        synced = read[1 + start.entries]
        self.assertEqual(synced.WhichOneof("event"), "synced")
        # The second half was held back until the watch was attached.
        self.assertLess(synced.synced.sequence, 2 * PROCESSES)
        state = {(r.change.tgid, r.change.policy): r.change.new_llc
                 for r in entries}
        sequences = []
        for response in read[2 + start.entries:]:
            change = response.change
            self.assertFalse(change.snapshot)
            key = (change.tgid, change.policy)
            self.assertEqual(state.get(key, -1), change.old_llc, key)
            state[key] = change.new_llc
            sequences.append(change.sequence)
        first = synced.synced.sequence + 1
        self.assertEqual(sequences, list(range(first, 2 * PROCESSES + 1)))
        # `none` never changes: a process tracked after the snapshot has no
        # entry for it, and Recommend says -1.
        for key, llc in expected.items():
            if key[1] == "none" and key not in state:
                state[key] = -1
        self.assertEqual(state, expected)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedcached", required=True)
    parser.add_argument("--proto-root", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
