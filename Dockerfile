# memwall container image.
#
# Two stages from debian:bookworm-slim. The build stage installs the Debian build dependencies,
# builds a Release binary and runs the core and API suites (ctest -R, not the contract suite,
# which needs node and npm); a failing suite fails the image build. The runtime stage holds only
# the two runtime libraries and the stripped binary, and runs as uid 65532 (non-root). Nothing
# is fetched but Debian packages from the archive the base image points at.
#
#   buildah bud --isolation chroot --pull=never -t memwall .     (or: docker build -t memwall .)
#   docker run --rm -p 8080:8080 memwall

FROM debian:bookworm-slim AS build
ARG MEMWALL_JOBS=2
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config libmicrohttpd-dev libjansson-dev \
      libcurl4-openssl-dev check \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DMEMWALL_WERROR=ON \
 && cmake --build /build -j "$MEMWALL_JOBS" \
 && ctest --test-dir /build --output-on-failure --no-tests=error -R '^(core_|api|server_cli)' \
 && cmake --install /build --prefix /opt/memwall --strip

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libjansson4 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log
COPY --from=build /opt/memwall/bin/memwall /usr/local/bin/memwall
# A numeric user, so Kubernetes' runAsNonRoot can check it without an /etc/passwd entry.
USER 65532:65532
ENV MEMWALL_BIND=0.0.0.0 \
    MEMWALL_PORT=8080
EXPOSE 8080
ENTRYPOINT ["memwall", "serve"]
