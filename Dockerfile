# schedcached in a container. Build stage: the repository's own install step
# (.ci/install-deps build) on Debian 12, so the image builds with exactly what the
# quick start and CI use. Runtime stage: the two binaries, the Debian
# packages that hold their shared libraries (found with ldd at build time:
# libbpf, libtracefs, libtraceevent and libtracecmd come along as soon as
# the binaries link them), and bpftool to inspect the pinned maps.
# deploy/ runs this image as schedcached, `schedcache record`, `schedcache
# mirror` and `schedcache ab` (docs/OPERATIONS.md, "Deploying").
FROM debian:bookworm AS build
# pipefail: a library dpkg cannot place must fail the build, not vanish.
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY . /src
WORKDIR /src
# The runtime package list: each shared library ldd names, looked up by
# "*/<multiarch dir>/<file>" because merged-/usr packages register some
# libraries under /lib and others under /usr/lib.
RUN .ci/install-deps build \
 && cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DSCHEDCACHE_BUILD_TESTS=OFF -DSCHEDCACHE_BUILD_BENCHMARKS=OFF \
 && cmake --build /build --target schedcached schedcache \
 && mkdir -p /out/bin \
 && cp /build/bin/schedcached /build/bin/schedcache /out/bin/ \
 && ldd /out/bin/* | awk '/=> \//{n = split($3, p, "/"); print "*/" p[n-1] "/" p[n]}' \
      | sort -u | xargs -r -d '\n' dpkg -S | cut -d: -f1 | sort -u \
      | { grep -v -E '^(libc6|libgcc-s1|libstdc\+\+6)$' || true; } > /out/runtime-packages \
 && grep -q '^libgrpc++' /out/runtime-packages

FROM debian:bookworm-slim
COPY --from=build /out/runtime-packages /tmp/runtime-packages
# bpftool: `bpftool map dump pinned /sys/fs/bpf/schedcache/default/prefs`
# next to `schedcache recommend` (docs/INTEGRATION.md).
RUN apt-get update \
 && { cat /tmp/runtime-packages; echo bpftool; } \
      | xargs apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages
COPY --from=build /out/bin/ /usr/local/bin/
# The server runs unprivileged (uid 65532, as deploy/ runs it) with its
# socket and state where the systemd unit keeps them.
RUN install -d -o 65532 -g 65532 -m 0750 /run/schedcache \
 && install -d -o 65532 -g 65532 -m 0700 /var/lib/schedcache
USER 65532:65532
# A Unix socket, shared with the node's agents through a volume: TCP off
# loopback would need TLS (--tls_cert_file) or --allow_insecure_tcp.
ENTRYPOINT ["schedcached"]
CMD ["--listen=unix:/run/schedcache/schedcached.sock", "--socket_mode=0660"]
