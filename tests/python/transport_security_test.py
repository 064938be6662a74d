#!/usr/bin/python3
"""schedcached's transport security and access, from the outside: TLS and
mutual TLS from Python grpcio, from the schedcache CLI (the C++ client
library) and from Python's ssl module; certificate rotation on SIGHUP; the
read-only listener; the refusal of plain TCP off loopback; Unix socket mode
and group; health and its NOT_SERVING drain.

Certificates are made at run time with Debian's openssl CLI: a CA, a
server certificate for 127.0.0.1 and localhost, a client certificate, a
second server certificate (the rotation's), and an unrelated CA. Every
server listens on port 0 or a temporary Unix socket. Run by CTest:

  /usr/bin/python3 transport_security_test.py --schedcached PATH \\
      --schedcache PATH --proto-root DIR

Exits 77 (CTest: skipped) when grpcio, grpc_tools or openssl is missing.
"""

import argparse
import os
import queue
import re
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import schedcache_stubs  # first: exits 77 (skipped) without grpcio
import grpc
if shutil.which("openssl") is None:
    print("skipping: no openssl CLI (install openssl)")
    sys.exit(77)

ARGS = None
TIMEOUT = 10  # seconds: every call and wait has a deadline
SERVICE = "schedcache.v1.SchedCache"
MS = 1_000_000



def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


class Pki:
    """A CA and certificates signed by it, as files in `root`."""

    def __init__(self, root, name):
        self.root = root
        self.name = name
        self.ca = self.path("ca.pem")
        self.ca_key = self.path("ca.key")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-keyout", self.ca_key, "-out", self.ca,
                "-subj", f"/CN={name} CA",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def path(self, leaf):
        return os.path.join(self.root, f"{self.name}-{leaf}")

    def issue(self, leaf, common_name, serial, usage):
        """Returns (cert, key) paths of a certificate with `serial`."""
        cert, key, csr = (self.path(f"{leaf}.pem"), self.path(f"{leaf}.key"),
                          self.path(f"{leaf}.csr"))
        extensions = self.path(f"{leaf}.ext")
        with open(extensions, "w") as out:
            out.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                      f"extendedKeyUsage={usage}\n"
                      "basicConstraints=CA:FALSE\n")
        openssl("req", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", csr, "-subj", f"/CN={common_name}")
        openssl("x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey",
                self.ca_key, "-set_serial", str(serial), "-days", "1",
                "-extfile", extensions, "-out", cert)
        return cert, key


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Server:
    """A schedcached process whose stderr is read line by line."""

    def __init__(self, *flags):
        self.process = subprocess.Popen(
            [ARGS.schedcached, *flags], stderr=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        self.log = []
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self):
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for_line(self, pattern):
        """Returns the first match of `pattern` in a line not read yet."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                line = self.lines.get(
                    timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} within "
                                     f"{TIMEOUT} s; log: {self.log}")
            if line is None:
                raise AssertionError(f"schedcached exited before a line "
                                     f"matching {pattern!r}; log: {self.log}")
            self.log.append(line)
            match = re.search(pattern, line)
            if match:
                return match

    def started(self):
        """Waits for start-up; returns the --listen addresses."""
        addresses = self.wait_for_line(r"listening on (.*)$").group(1)
        return addresses.split(", ")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stderr.close()
        return self.process.returncode


class TransportSecurityTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="schedcache-tls-")
        global pb, pb_grpc
        pb, pb_grpc = schedcache_stubs.load(ARGS.proto_root, cls.tmp.name)
        cls.pki = Pki(cls.tmp.name, "good")
        cls.other = Pki(cls.tmp.name, "other")
        cls.server_cert, cls.server_key = cls.pki.issue(
            "server", "localhost", 1001, "serverAuth")
        cls.rotated_cert, cls.rotated_key = cls.pki.issue(
            "rotated", "localhost", 1002, "serverAuth")
        cls.client_cert, cls.client_key = cls.pki.issue(
            "client", "py-client", 2001, "clientAuth")
        cls.stranger_cert, cls.stranger_key = cls.other.issue(
            "stranger", "localhost", 3001, "serverAuth,clientAuth")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def start(self, *flags):
        server = Server(*flags)
        self.addCleanup(server.stop)
        return server

    def start_tls(self, *extra, cert=None, key=None):
        return self.start("--listen=127.0.0.1:0",
                          f"--tls_cert_file={cert or self.server_cert}",
                          f"--tls_key_file={key or self.server_key}", *extra)

    def channel(self, address, root=None, cert=None, key=None):
        credentials = grpc.ssl_channel_credentials(
            root_certificates=read(root or self.pki.ca),
            private_key=read(key) if key else None,
            certificate_chain=read(cert) if cert else None)
        channel = grpc.secure_channel(address, credentials)
        self.addCleanup(channel.close)
        return channel

    def stub(self, channel):
        return pb_grpc.SchedCacheStub(channel)

    def cli(self, *args):
        return subprocess.run([ARGS.schedcache, *args], capture_output=True,
                              text=True, timeout=TIMEOUT * 3)

    def assert_refused(self, call):
        """A failed handshake: UNAVAILABLE, within the deadline."""
        with self.assertRaises(grpc.RpcError) as refused:
            call()
        self.assertEqual(refused.exception.code(),
                         grpc.StatusCode.UNAVAILABLE, refused.exception)

    # TLS and mutual TLS.

    def test_tls_from_python(self):
        (address,) = self.start_tls().started()
        topology = self.stub(self.channel(address)).GetTopology(
            pb.GetTopologyRequest(), timeout=TIMEOUT)
        self.assertGreater(topology.topology.total_cpus, 0)

    def test_tls_from_cli_by_ip_and_by_server_name(self):
        (address,) = self.start_tls().started()
        port = address.rsplit(":", 1)[1]
        by_ip = self.cli("topology", "--server", address,
                         "--tls-ca", self.pki.ca, "--format", "json")
        self.assertEqual(by_ip.returncode, 0, by_ip.stderr)
        self.assertIn("totalCpus", by_ip.stdout)
        # Dialled by address, checked against the name given (the
        # certificate's DNS name): no name resolution, which a minimal
        # root without /etc/hosts cannot do for "localhost".
        by_name = self.cli("policies", "--server", f"127.0.0.1:{port}",
                           "--tls-ca", self.pki.ca,
                           "--tls-server-name", "localhost")
        self.assertEqual(by_name.returncode, 0, by_name.stderr)
        self.assertIn("full-scan", by_name.stdout)

    def test_cli_names_an_unreadable_tls_file(self):
        missing = os.path.join(self.tmp.name, "no-such-ca.pem")
        result = self.cli("topology", "--server", "127.0.0.1:1",
                          "--tls-ca", missing)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"--tls-ca {missing}: cannot read", result.stderr)

    def test_mutual_tls_requires_a_client_certificate_of_the_ca(self):
        (address,) = self.start_tls(
            f"--tls_client_ca_file={self.pki.ca}").started()
        request = pb.ListSessionsRequest()
        answered = self.stub(self.channel(
            address, cert=self.client_cert, key=self.client_key))
        self.assertIn("default", [s.name for s in answered.ListSessions(
            request, timeout=TIMEOUT).sessions])
        anonymous = self.stub(self.channel(address))
        self.assert_refused(
            lambda: anonymous.ListSessions(request, timeout=TIMEOUT))
        # A certificate from another CA is no better than none.
        stranger = self.stub(self.channel(
            address, cert=self.stranger_cert, key=self.stranger_key))
        self.assert_refused(
            lambda: stranger.ListSessions(request, timeout=TIMEOUT))

        cli = ["session", "list", "--server",
               address, "--tls-ca", self.pki.ca]
        with_cert = self.cli(*cli, "--tls-cert", self.client_cert,
                             "--tls-key", self.client_key)
        self.assertEqual(with_cert.returncode, 0, with_cert.stderr)
        self.assertIn("default", with_cert.stdout)
        without = self.cli(*cli)
        self.assertEqual(without.returncode, 1, without.stdout)
        self.assertIn("UNAVAILABLE", without.stderr)

    def test_a_client_trusting_another_ca_is_refused(self):
        (address,) = self.start_tls().started()
        stub = self.stub(self.channel(address, root=self.other.ca))
        self.assert_refused(lambda: stub.GetTopology(
            pb.GetTopologyRequest(), timeout=TIMEOUT))
        result = self.cli("topology", "--server", address,
                          "--tls-ca", self.other.ca)
        self.assertEqual(result.returncode, 1)

    def test_plain_tcp_to_a_tls_port_fails_within_its_deadline(self):
        (address,) = self.start_tls().started()
        channel = grpc.insecure_channel(address)
        self.addCleanup(channel.close)
        began = time.monotonic()
        with self.assertRaises(grpc.RpcError) as failed:
            self.stub(channel).GetTopology(pb.GetTopologyRequest(), timeout=3)
        self.assertIn(failed.exception.code(),
                      (grpc.StatusCode.UNAVAILABLE,
                       grpc.StatusCode.DEADLINE_EXCEEDED))
        self.assertLess(time.monotonic() - began, TIMEOUT)

    # Rotation.

    def served_serial(self, address):
        host, port = address.rsplit(":", 1)
        context = ssl.create_default_context(cafile=self.pki.ca)
        context.set_alpn_protocols(["h2"])
        with socket.create_connection((host, int(port)),
                                      timeout=TIMEOUT) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                return int(tls.getpeercert()["serialNumber"], 16)

    def wait_for_serial(self, address, serial):
        # gRPC's watcher looks at the server's copies once a second
        # (server/tls_credentials.h): handshake until it has, each
        # handshake a fresh look, with a deadline.
        deadline = time.monotonic() + TIMEOUT
        while self.served_serial(address) != serial:
            self.assertLess(time.monotonic(), deadline,
                            f"serial {serial} not served within {TIMEOUT} s")

    def test_sighup_serves_the_rotated_certificate_and_keeps_it_on_bad_files(
            self):
        cert = os.path.join(self.tmp.name, "live-cert.pem")
        key = os.path.join(self.tmp.name, "live-key.pem")
        shutil.copy(self.server_cert, cert)
        shutil.copy(self.server_key, key)
        server = self.start_tls(cert=cert, key=key)
        (address,) = server.started()
        self.assertEqual(self.served_serial(address), 1001)

        shutil.copy(self.rotated_cert, cert)
        shutil.copy(self.rotated_key, key)
        server.process.send_signal(signal.SIGHUP)
        server.wait_for_line(r"SIGHUP: certificates reloaded")
        self.wait_for_serial(address, 1002)
        stub = self.stub(self.channel(address))
        self.assertGreater(stub.GetTopology(
            pb.GetTopologyRequest(), timeout=TIMEOUT).topology.total_cpus, 0)

        # A key that is not the certificate's: reported, old pair kept.
        shutil.copy(self.server_key, key)
        server.process.send_signal(signal.SIGHUP)
        line = server.wait_for_line(r"SIGHUP: keeping the served .*")
        self.assertIn(f"--tls_key_file={key}", line.group(0))
        self.assertEqual(self.served_serial(address), 1002)

    # Start-up refusals.

    def run_server(self, *flags):
        return subprocess.run([ARGS.schedcached, *flags], capture_output=True,
                              text=True, timeout=TIMEOUT * 3)

    def test_plain_tcp_off_loopback_is_refused_unless_allowed(self):
        for flag in ("--listen=0.0.0.0:0", "--read_only_listen=0.0.0.0:0"):
            extra = [] if flag.startswith("--listen") else [
                f"--listen=unix:{self.tmp.name}/refused.sock"]
            refused = self.run_server(flag, *extra)
            self.assertEqual(refused.returncode, 2, refused.stderr)
            self.assertIn("refusing to listen on 0.0.0.0:0 without TLS",
                          refused.stderr)
            self.assertIn("--allow_insecure_tcp", refused.stderr)
        allowed = self.start("--listen=0.0.0.0:0", "--allow_insecure_tcp")
        (address,) = allowed.started()
        self.assertTrue(address.startswith("0.0.0.0:"), address)
        loopback = self.start("--listen=127.0.0.1:0")
        loopback.wait_for_line(r"127\.0\.0\.1:\d+ serves plain TCP")

    def test_bad_tls_files_exit_2_naming_flag_and_path(self):
        missing = os.path.join(self.tmp.name, "missing.pem")
        cases = [
            ([f"--tls_cert_file={missing}", f"--tls_key_file={self.server_key}"],
             f"--tls_cert_file={missing}: cannot read"),
            ([f"--tls_cert_file={self.server_cert}",
              f"--tls_key_file={self.client_key}"],
             f"--tls_key_file={self.client_key}: not the key of the "
             f"certificate in --tls_cert_file={self.server_cert}"),
            ([f"--tls_cert_file={self.server_key}",
              f"--tls_key_file={self.server_key}"],
             f"--tls_cert_file={self.server_key}: no PEM certificate"),
            ([f"--tls_cert_file={self.server_cert}"],
             "TLS needs both --tls_cert_file and --tls_key_file"),
            ([f"--tls_cert_file={self.server_cert}",
              f"--tls_key_file={self.server_key}",
              f"--tls_client_ca_file={missing}"],
             f"--tls_client_ca_file={missing}: cannot read"),
        ]
        for flags, message in cases:
            result = self.run_server("--listen=127.0.0.1:0", *flags)
            self.assertEqual(result.returncode, 2, (flags, result.stderr))
            self.assertIn(message, result.stderr)

    # The read-only listener.

    def test_read_only_listener_serves_reads_and_refuses_writes(self):
        socket_path = os.path.join(self.tmp.name, "ro", "full.sock")
        server = self.start(f"--listen=unix:{socket_path}",
                            "--read_only_listen=127.0.0.1:0")
        server.started()
        read_only = server.wait_for_line(
            r"listening read-only on (.*)$").group(1)
        full = grpc.insecure_channel(f"unix:{socket_path}")
        self.addCleanup(full.close)
        grpc.channel_ready_future(full).result(timeout=TIMEOUT)
        # Through the full listener: process 100 runs two ticks on CPU 0,
        # so the default session tracks it and Recommend has an answer.
        summary = self.stub(full).Ingest(iter([pb.IngestBatch(events=[
            pb.Event(timestamp_ns=1000, cpu=0, tgid=100, tid=101,
                     delta_ns=MS, tick=True, nr_threads=2),
            pb.Event(timestamp_ns=1000 + 20 * MS, cpu=0, tgid=100, tid=101,
                     delta_ns=MS, tick=True)])]), timeout=TIMEOUT)
        self.assertEqual(summary.accepted, 2)

        channel = grpc.insecure_channel(read_only)
        self.addCleanup(channel.close)
        stub = self.stub(channel)
        self.assertGreater(stub.GetTopology(
            pb.GetTopologyRequest(), timeout=TIMEOUT).topology.total_cpus, 0)
        self.assertTrue(stub.ListPolicies(pb.ListPoliciesRequest(),
                                          timeout=TIMEOUT).policies)
        self.assertEqual(stub.GetSession(pb.GetSessionRequest(
            session="default"), timeout=TIMEOUT).name, "default")
        self.assertIn("default", [s.name for s in stub.ListSessions(
            pb.ListSessionsRequest(), timeout=TIMEOUT).sessions])
        self.assertTrue(stub.Recommend(pb.RecommendRequest(
            session="default", tgid=100), timeout=TIMEOUT).decisions)
        self.assertEqual(stub.GetReport(pb.GetReportRequest(
            session="default"), timeout=TIMEOUT).samples_applied, 2)
        watch = stub.WatchPreferences(
            pb.WatchPreferencesRequest(session="default"), timeout=TIMEOUT)
        watch.initial_metadata()  # attached: the server answered
        watch.cancel()
        self.assertEqual(watch.code(), grpc.StatusCode.CANCELLED)

        writes = {
            "CreateSession": lambda: stub.CreateSession(
                pb.CreateSessionRequest(name="ro"), timeout=TIMEOUT),
            "DeleteSession": lambda: stub.DeleteSession(
                pb.DeleteSessionRequest(session="default"), timeout=TIMEOUT),
            "Ingest": lambda: stub.Ingest(
                iter([pb.IngestBatch(events=[])]), timeout=TIMEOUT),
            "Recommend with scan": lambda: stub.Recommend(
                pb.RecommendRequest(session="default", tgid=100, scan=True),
                timeout=TIMEOUT),
        }
        for name, call in writes.items():
            with self.assertRaises(grpc.RpcError, msg=name) as denied:
                call()
            self.assertEqual(denied.exception.code(),
                             grpc.StatusCode.PERMISSION_DENIED, name)
            self.assertIn(f"{name} is not served on the read-only listener "
                          f"{read_only}", denied.exception.details())
        # Nothing was written: default is still there, unchanged.
        self.assertEqual(self.stub(full).GetReport(pb.GetReportRequest(
            session="default"), timeout=TIMEOUT).samples_applied, 2)

    # Unix sockets.

    def test_socket_mode_and_group_are_applied(self):
        default_path = os.path.join(self.tmp.name, "mode", "default.sock")
        self.start(f"--listen=unix:{default_path}").started()
        self.assertEqual(stat.S_IMODE(os.stat(default_path).st_mode), 0o600)

        group = os.getgroups()[-1] if os.getgroups() else os.getgid()
        shared = os.path.join(self.tmp.name, "mode", "shared.sock")
        self.start(f"--listen=unix:{shared}", "--socket_mode=0660",
                   f"--socket_group={group}").started()
        info = os.stat(shared)
        self.assertEqual(stat.S_IMODE(info.st_mode), 0o660)
        self.assertEqual(info.st_gid, group)

        for flags, message in [
                (["--socket_mode=0999"], "--socket_mode=0999 is not an octal"),
                (["--socket_mode=01777"], "--socket_mode=01777 is not an octal"),
                (["--socket_group=no-such-group-here"],
                 "--socket_group=no-such-group-here: no such group")]:
            result = self.run_server(
                f"--listen=unix:{self.tmp.name}/mode/bad.sock", *flags)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(message, result.stderr)

    # Health.

    def test_health_serves_both_names_and_drains_not_serving(self):
        server = self.start("--listen=127.0.0.1:0",
                            "--shutdown_grace_seconds=5")
        (address,) = server.started()
        channel = grpc.insecure_channel(address)
        self.addCleanup(channel.close)
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        # HealthCheckRequest{service: NAME}: field 1, length, bytes;
        # HealthCheckResponse{status}: SERVING 1 -> 08 01, NOT_SERVING 2 ->
        # 08 02.
        def request(name):
            return b"\x0a" + bytes([len(name)]) + name.encode()
        self.assertEqual(check(b"", timeout=TIMEOUT), b"\x08\x01")
        self.assertEqual(check(request(SERVICE), timeout=TIMEOUT),
                         b"\x08\x01")
        with self.assertRaises(grpc.RpcError) as unknown:
            check(request("no.such.Service"), timeout=TIMEOUT)
        self.assertEqual(unknown.exception.code(), grpc.StatusCode.NOT_FOUND)

        watch = channel.unary_stream("/grpc.health.v1.Health/Watch")(
            request(SERVICE), timeout=TIMEOUT)
        self.assertEqual(next(watch), b"\x08\x01")
        server.process.send_signal(signal.SIGTERM)
        self.assertEqual(next(watch), b"\x08\x02")
        self.assertEqual(server.stop(), 0)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedcached", required=True)
    parser.add_argument("--schedcache", required=True)
    parser.add_argument("--proto-root", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
