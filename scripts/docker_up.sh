#!/usr/bin/env bash
# Makes a Docker daemon answer on this machine: installs docker.io and debootstrap (the offline
# sandbox image needs it) when missing, starts dockerd in the background, and waits for it.
# Idempotent: a daemon that already answers is left alone. Exit 1 with one clear line otherwise.
set -uo pipefail

LOG=${DOCKERD_LOG:-/tmp/dockerd.log}
WAIT_S=${DOCKERD_WAIT_S:-60}

say() { echo "docker_up: $*" >&2; }
source "$(dirname "$0")/apt.sh"

daemon_answers() { timeout 5 docker info >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && daemon_answers; then
  say "daemon already answering"
  exit 0
fi

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v docker >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ "${#need[@]}" -gt 0 ]; then
  apt_install "${need[@]}" iptables || exit 1
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    say "no daemon answers and starting dockerd needs root; run: sudo bash $0"
    exit 1
  fi
  say "starting dockerd (log: $LOG)"
  # Sandboxes run with network none, so dockerd's NAT rules are not needed; switching them
  # off lets the daemon start on kernels or VMs without iptables/nf_tables (DOCKERD_IPTABLES=true
  # turns them back on). The cgroupfs driver: there is no systemd to delegate cgroups to.
  ipt=${DOCKERD_IPTABLES:-false}
  nohup dockerd \
    --iptables="$ipt" --ip6tables=false --ip-masq="$ipt" \
    --exec-opt native.cgroupdriver=cgroupfs \
    --host unix:///var/run/docker.sock \
    >"$LOG" 2>&1 &
  disown || true
fi

for _ in $(seq 1 "$WAIT_S"); do
  if daemon_answers; then
    say "daemon answering"
    exit 0
  fi
  sleep 1
done
say "dockerd did not answer within ${WAIT_S}s; last log lines from $LOG:"
tail -n 15 "$LOG" >&2 2>/dev/null || true
exit 1
