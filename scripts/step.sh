#!/usr/bin/env bash
# Runs one step of `make test` and prints how long it took, so a slow CI run says where its time went.
# Usage: step.sh LABEL COMMAND...   (exits with COMMAND's status)
label=$1; shift
start=$EPOCHREALTIME
"$@"
rc=$?
awk -v a="$start" -v b="$EPOCHREALTIME" -v l="$label" -v rc="$rc" \
    'BEGIN { printf "[step] %-8s %7.1f s (exit %d)\n", l, b - a, rc }' >&2
exit "$rc"
