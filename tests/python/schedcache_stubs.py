"""The Python gRPC stubs of schedcache's .proto, for the Python tests.

Importing this module exits 77 (CTest: skipped) when Debian's grpcio or
grpc_tools is missing, so a test imports it before `grpc`. The stubs are
generated at test time from the .proto files, never checked in.
"""

import os
import subprocess
import sys

try:
    import grpc
    import grpc_tools  # noqa: F401 (presence check)
except ImportError as error:
    print(f"skipping: {error} (install python3-grpcio python3-grpc-tools)")
    sys.exit(77)


def load(proto_root, out_dir):
    """Generates the stubs of `proto_root`'s schedcache/v1 files into
    `out_dir` and returns the modules (schedcache_pb2, schedcache_pb2_grpc).
    """
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{proto_root}",
         f"--python_out={out_dir}", f"--grpc_python_out={out_dir}",
         "schedcache/v1/topology.proto", "schedcache/v1/schedcache.proto"],
        check=True)
    sys.path.insert(0, out_dir)
    from schedcache.v1 import schedcache_pb2, schedcache_pb2_grpc
    return schedcache_pb2, schedcache_pb2_grpc


class UnixServer:
    """schedcached listening on the Unix socket `socket_path` (its folder is
    created by schedcached), logging to `log_path`, with an open channel
    and a SchedCache stub once the server answers."""

    def __init__(self, schedcached, pb_grpc, socket_path, log_path):
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(
            [schedcached, f"--listen=unix:{socket_path}"], stderr=self.log)
        self.channel = grpc.insecure_channel(f"unix:{socket_path}")
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.stub = pb_grpc.SchedCacheStub(self.channel)

    def close(self):
        """Closes the channel and kills the server if it still runs."""
        self.channel.close()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()
