#!/usr/bin/env bash
# Builds the sandbox image without a container registry: a Debian bookworm rootfs from Debian's
# package mirror (debootstrap), torch/triton/numpy installed into it by the HOST's pip (so the
# local CPU torch wheel is used), then `docker import`. Used by `kernelarena sandbox build-image`
# and CI; users with a registry can build sandbox/image/Dockerfile instead.
#
# Usage: build_offline.sh [--force] [--tag TAG]
# Each stage leaves a stamp in $KA_ROOTFS_CACHE (default: <repo>/.sandbox-rootfs), so a rerun after
# a failure, or a --force rebuild, redoes only what is missing. An existing tag is a no-op.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TAG=kernelarena-sandbox:latest
FORCE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --force) FORCE=1 ;;
    --tag) TAG=$2; shift ;;
    *) echo "build_offline: unknown argument $1 (use --force, --tag TAG)" >&2; exit 2 ;;
  esac
  shift
done

CACHE=${KA_ROOTFS_CACHE:-$REPO/.sandbox-rootfs}
ROOTFS=$CACHE/rootfs
PY=${KA_HOST_PYTHON:-$REPO/.venv/bin/python}
SUITE=bookworm
# gcc/g++ and python3-dev: Triton and torch.utils.cpp_extension compile C/C++ against Python.h
# at run time. tini is not needed (docker's own init reaps), procps gives ps/pkill to agents.
PACKAGES=python3,python3-dev,bash,coreutils,procps,gcc,g++,libc6-dev,ca-certificates
UID_=1000

say() { echo "build_offline: $*" >&2; }
die() { say "$*"; exit 1; }

command -v docker >/dev/null || die "docker CLI not found; run: bash scripts/docker_up.sh"
docker info >/dev/null 2>&1 || die "no Docker daemon answers; run: bash scripts/docker_up.sh"

# An image built by an older recipe is rebuilt (from the cached rootfs): a stale image would
# silently lack what a newer checkout expects of it.
RECIPE=$(sha256sum <"$0" | cut -c1-16)
if [ "$FORCE" -eq 0 ] && docker image inspect "$TAG" >/dev/null 2>&1; then
  if [ "$(docker image inspect -f '{{index .Config.Labels "kernelarena.recipe"}}' "$TAG" 2>/dev/null)" = "$RECIPE" ]; then
    say "$TAG already exists (use --force to rebuild)"
    exit 0
  fi
  say "$TAG was built by another recipe; rebuilding"
fi

[ "$(id -u)" -eq 0 ] || die "debootstrap and chroot need root; run as root (sudo) or build sandbox/image/Dockerfile"
[ -x "$PY" ] || die "host Python $PY not found; run: make install (or set KA_HOST_PYTHON)"

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 install -y -qq debootstrap >/dev/null \
    || die "apt-get install debootstrap failed; install it and rerun"
fi

# The mirror this machine's apt is configured with (deb822 or one-line sources), so the build
# goes where the network allows; deb.debian.org is the fallback.
mirror() {
  local m
  m=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  [ -n "$m" ] || m=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null \
        | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
  echo "${KA_DEBIAN_MIRROR:-${m:-http://deb.debian.org/debian}}"
}

mkdir -p "$CACHE"
start=$(date +%s)

# Stage 1: base system. Built in a side folder and renamed, so a half-finished debootstrap is
# never mistaken for a finished one.
if [ ! -f "$CACHE/debootstrap.done" ] || [ "$(cat "$CACHE/debootstrap.done")" != "$PACKAGES" ]; then
  MIRROR=$(mirror)
  say "debootstrap $SUITE from $MIRROR (a few minutes)"
  rm -rf "$ROOTFS" "$ROOTFS.partial" "$CACHE/pydeps.done"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS.partial" "$MIRROR" \
    >"$CACHE/debootstrap.log" 2>&1 \
    || die "debootstrap failed; see $CACHE/debootstrap.log"
  rm -rf "$ROOTFS.partial"/var/cache/apt/archives/*.deb "$ROOTFS.partial"/var/lib/apt/lists/*
  mv "$ROOTFS.partial" "$ROOTFS"
  echo "$PACKAGES" >"$CACHE/debootstrap.done"
fi

# Stage 2: Python packages, at the versions the host venv runs, so a kernel behaves the same
# inside and outside.
PYPKGS=$("$PY" - <<'PY'
from importlib.metadata import version
print(" ".join(f"{n}=={version(n).split('+')[0]}" for n in ("torch", "triton", "numpy", "pyseccomp")))
PY
)
# Byte-compiled here (the host's 3.11 and bookworm's 3.11 share the .pyc format): the root is
# read-only in a sandbox, so without .pyc files every `import torch` would compile from source.
PYSTAMP="$PYPKGS compiled"
if [ ! -f "$CACHE/pydeps.done" ] || [ "$(cat "$CACHE/pydeps.done")" != "$PYSTAMP" ]; then
  say "pip install --target /opt/pydeps $PYPKGS"
  rm -rf "$ROOTFS/opt/pydeps"
  "$PY" -m pip install -q --target "$ROOTFS/opt/pydeps" $PYPKGS \
    >"$CACHE/pip.log" 2>&1 || die "pip install into the rootfs failed; see $CACHE/pip.log"
  echo "$PYSTAMP" >"$CACHE/pydeps.done"
fi

# Stage 3: the unprivileged user and the mount points (cheap, redone every time).
grep -q "^kernelarena:" "$ROOTFS/etc/group" \
  || echo "kernelarena:x:$UID_:" >>"$ROOTFS/etc/group"
grep -q "^kernelarena:" "$ROOTFS/etc/passwd" \
  || echo "kernelarena:x:$UID_:$UID_:KernelArena sandbox:/workspace:/bin/bash" >>"$ROOTFS/etc/passwd"
grep -q "^kernelarena:" "$ROOTFS/etc/shadow" \
  || echo "kernelarena:!:19000:0:99999:7:::" >>"$ROOTFS/etc/shadow"
mkdir -p "$ROOTFS/workspace" "$ROOTFS/opt/kernelarena"
# Agents type `python`; bookworm only ships `python3`.
ln -sf python3 "$ROOTFS/usr/bin/python"
chown "$UID_:$UID_" "$ROOTFS/workspace"

OLD_ID=$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)
say "docker import -> $TAG"
tar --numeric-owner -C "$ROOTFS" -c . | docker import \
  --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV PYTHONPATH=/opt/pydeps" \
  --change "ENV LANG=C.UTF-8" \
  --change "ENV HOME=/workspace" \
  --change "USER $UID_:$UID_" \
  --change "WORKDIR /workspace" \
  --change "LABEL kernelarena.recipe=$RECIPE" \
  --change 'CMD ["/bin/bash"]' \
  - "$TAG" >/dev/null || die "docker import failed"
# The image this tag replaced would linger as <none>; it stays only while a container uses it.
[ -z "$OLD_ID" ] || docker rmi "$OLD_ID" >/dev/null 2>&1 || true
say "built $TAG in $(( $(date +%s) - start ))s"
