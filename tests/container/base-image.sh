#!/usr/bin/env bash
# tests/container/base-image.sh - make sure a local image named debian:bookworm-slim exists.
#
# The Dockerfile builds FROM debian:bookworm-slim and the container test builds with
# --pull=never (no registry here), so that name must resolve locally. Where it does not, this
# makes a stand-in from `debootstrap --variant=minbase bookworm` (Debian's archive is the only
# network the build may use) and commits it under the real name. The image is kept in buildah's
# storage, so only the first run pays for it (about a minute); later runs find it and return.
# A lock keeps two runs (e.g. two worktrees) from bootstrapping at the same time.
set -euo pipefail

base=docker.io/library/debian:bookworm-slim
mirror=${MEMWALL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
lock=${TMPDIR:-/tmp}/memwall-base-image.lock

exec 9>"$lock"
flock 9

if buildah images --quiet "$base" >/dev/null 2>&1; then
    exit 0
fi

work=$(mktemp -d)
ctr=
cleanup() {
    [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "base-image: no local $base; bootstrapping one from $mirror"
debootstrap --variant=minbase bookworm "$work/root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -20 "$work/debootstrap.log" >&2
    exit 1
}
# Like the published slim image: no apt lists or caches in the layer.
rm -rf "$work/root/var/lib/apt/lists/"* "$work/root/var/cache/apt/"*.bin
tar -C "$work/root" -cf "$work/root.tar" .
ctr=$(buildah from scratch)
buildah add "$ctr" "$work/root.tar" / >/dev/null
buildah config --cmd /bin/bash "$ctr"
buildah commit --quiet "$ctr" "$base" >/dev/null
echo "base-image: committed $base"
