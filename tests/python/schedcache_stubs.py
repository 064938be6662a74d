"""The Python gRPC stubs of schedcache's .proto, for the Python tests.

Importing this module exits 77 (CTest: skipped) when Debian's grpcio or
grpc_tools is missing, so a test imports it before `grpc`. The stubs are
generated at test time from the .proto files, never checked in.
"""

import subprocess
import sys

try:
    import grpc  # noqa: F401 (presence check)
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
