#!/usr/bin/env bash
# Builds the agents image: the sandbox image plus the Claude Code and Codex CLIs, pinned, from
# the npm registry. No pulls and no Dockerfile builder: npm installs on the host into a cache,
# the CLIs' native binaries are copied into a container of the base image, and `docker commit`
# makes the image (one layer on top of the base, so only the CLIs are new bytes).
# Both packages ship native linux-x64 binaries (Claude Code's Bun build, Codex's Rust build)
# as optional dependencies; their Node launchers only pick the binary, so no Node is installed.
#
# Usage: build_agents.sh [--force] [--tag TAG] [--base TAG] [--with claude-code,codex]
# The image is labelled with this script's hash, the CLIs chosen and the base image's id; a
# rerun with all three unchanged is a no-op.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
TAG=kernelarena-agents:latest
BASE=kernelarena-sandbox:latest
WITH=claude-code,codex
FORCE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --force) FORCE=1 ;;
    --tag) TAG=$2; shift ;;
    --base) BASE=$2; shift ;;
    --with) WITH=$2; shift ;;
    *) echo "build_agents: unknown argument $1 (use --force, --tag, --base, --with)" >&2; exit 2 ;;
  esac
  shift
done

say() { echo "build_agents: $*" >&2; }
die() { say "$*"; exit 1; }

command -v docker >/dev/null || die "docker CLI not found; run: bash scripts/docker_up.sh"
docker info >/dev/null 2>&1 || die "no Docker daemon answers; run: bash scripts/docker_up.sh"
BASE_ID=$(docker image inspect -f '{{.Id}}' "$BASE" 2>/dev/null) \
  || die "base image $BASE not found; run: kernelarena sandbox build-image"

PKGS=()
for cli in ${WITH//,/ }; do
  case "$cli" in
    claude-code) PKGS+=("@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION") ;;
    codex) PKGS+=("@openai/codex@$CODEX_VERSION") ;;
    *) die "unknown CLI '$cli' (known: claude-code, codex)" ;;
  esac
done
RECIPE="$(sha256sum <"$0" | cut -c1-16)-$WITH-${BASE_ID#sha256:}"
RECIPE=${RECIPE:0:80}
if [ "$FORCE" -eq 0 ] && [ "$(docker image inspect -f '{{index .Config.Labels "kernelarena.agents"}}' "$TAG" 2>/dev/null)" = "$RECIPE" ]; then
  say "$TAG already exists (use --force to rebuild)"
  exit 0
fi
command -v npm >/dev/null || die "npm not found; install it (apt-get install npm) and rerun"

CACHE=${KA_ROOTFS_CACHE:-$REPO/.sandbox-rootfs}/agents
start=$(date +%s)
mkdir -p "$CACHE"

# Stage 1: npm install (cached by the package list; npm's own cache makes a redo cheap).
if [ ! -f "$CACHE/npm.done" ] || [ "$(cat "$CACHE/npm.done")" != "${PKGS[*]}" ]; then
  say "npm install ${PKGS[*]}"
  rm -rf "$CACHE/npm" "$CACHE/stage"
  mkdir -p "$CACHE/npm"
  npm install --prefix "$CACHE/npm" --no-audit --no-fund --no-save --os=linux --cpu=x64 "${PKGS[@]}" \
    >"$CACHE/npm.log" 2>&1 || die "npm install failed; see $CACHE/npm.log"
  echo "${PKGS[*]}" >"$CACHE/npm.done"
fi

# Stage 2: only the native binaries go in (each package also holds a Node launcher and, for
# Claude Code, a second copy of the binary), hard-linked from the npm tree.
STAGE=$CACHE/stage/opt/agents
rm -rf "$CACHE/stage"
mkdir -p "$STAGE/bin"
PATHS=/opt/agents/bin
if [[ ",$WITH," == *",claude-code,"* ]]; then
  src=$CACHE/npm/node_modules/@anthropic-ai/claude-code-linux-x64/claude
  [ -x "$src" ] || die "Claude Code's linux-x64 binary is missing from the npm install ($src)"
  cp -l "$src" "$STAGE/bin/claude"
fi
if [[ ",$WITH," == *",codex,"* ]]; then
  vendor=$CACHE/npm/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl
  [ -x "$vendor/bin/codex" ] || die "Codex's linux-x64 binary is missing from the npm install ($vendor)"
  mkdir -p "$STAGE/codex"
  cp -rl "$vendor/." "$STAGE/codex/"
  ln -s ../codex/bin/codex "$STAGE/bin/codex"
  # codex.js puts its bundled ripgrep on PATH; so does the image.
  PATHS=$PATHS:/opt/agents/codex/codex-path
fi

say "docker commit $BASE + /opt/agents -> $TAG"
OLD_ID=$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)
CID=$(docker create "$BASE" true)
trap 'docker rm -f "$CID" >/dev/null 2>&1 || true' EXIT
tar --numeric-owner --owner=0 --group=0 -C "$CACHE/stage" -c opt | docker cp - "$CID:/"
docker commit \
  --change "ENV PATH=$PATHS:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change 'CMD ["/bin/bash"]' \
  --change "LABEL kernelarena.agents=$RECIPE" \
  --change "LABEL kernelarena.agents.versions=claude-code@$CLAUDE_CODE_VERSION,codex@$CODEX_VERSION" \
  "$CID" "$TAG" >/dev/null || die "docker commit failed"
rm -rf "$CACHE/stage"
[ -z "$OLD_ID" ] || [ "$OLD_ID" = "$(docker image inspect -f '{{.Id}}' "$TAG")" ] || docker rmi "$OLD_ID" >/dev/null 2>&1 || true
say "built $TAG in $(( $(date +%s) - start ))s"
