#!/usr/bin/env bash
# Stops `make test` and `make demo` in one line, before they start, where the disk cannot hold what
# they write: the venv with torch (about 3 GiB, with its bytecode) and the two sandbox images with
# their build (about 6 GiB on Docker's disk). A full disk otherwise surfaces minutes in as an OSError
# deep in pip or debootstrap (a CI run stopped so on 2026-12-08, its box filled by old clones).
# Usage: disk_check.sh [REPO_GIB [DOCKER_GIB]]; 0 skips a check; a disk too small exits 2. Docker's disk is checked only where the
# daemon answers and the sandbox image is not built yet (a build is coming).
set -uo pipefail
cd "$(dirname "$0")/.."
need_repo=${1:-4}
need_docker=${2:-7}

free_gib() {  # free GiB on the filesystem holding $1 (its nearest existing parent)
  local dir=$1
  while [ ! -e "$dir" ]; do dir=$(dirname "$dir"); done
  df -Pk "$dir" | awk 'NR == 2 { printf "%d", $4 / 1048576 }'
}

short() {  # $1 = where, $2 = path, $3 = needed GiB
  local have
  have=$(free_gib "$2")
  if [ "$have" -lt "$3" ]; then
    echo "error: $1 ($2) has ${have} GiB free and needs about $3 GiB; free space there (old clones, \`docker image prune\`) and run again" >&2
    return 1
  fi
}

if [ "$need_repo" -gt 0 ]; then short "the repository's disk" "$PWD" "$need_repo" || exit 2; fi
if [ "$need_docker" -gt 0 ]; then
  root=$(docker info --format '{{.DockerRootDir}}' 2>/dev/null || true)
  if [ -n "$root" ] && ! docker image inspect kernelarena-sandbox:latest >/dev/null 2>&1; then
    short "Docker's disk" "$root" "$need_docker" || exit 2
  fi
fi
exit 0
