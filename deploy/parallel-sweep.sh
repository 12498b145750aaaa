#!/bin/sh
# Runs a sweep as N shards with GNU parallel (locally, or on SSH_HOSTS over
# ssh with a shared filesystem), then merges them.
#   deploy/parallel-sweep.sh EXPERIMENT N OUT
# Falls back to xargs -P when GNU parallel is not installed.
set -eu
EXPERIMENT=${1:?experiment}
N=${2:?number of shards}
OUT=${3:?output directory}
SIMRUN=${SIMRUN:-./simrun}
WORK=${WORK:-$OUT.shards}
shards=$(seq 0 $((N - 1)))
if command -v parallel >/dev/null 2>&1; then
  if [ -n "${SSH_HOSTS:-}" ]; then
    hosts="-S $SSH_HOSTS --workdir $PWD"
  else
    hosts=""
  fi
  # shellcheck disable=SC2086
  parallel $hosts --halt now,fail=1 \
    "$SIMRUN" sweep "$EXPERIMENT" --shard {}/"$N" --out "$WORK/shard-{}" --workers 1 ::: $shards
else
  echo "$shards" | xargs -P "$N" -I{} "$SIMRUN" sweep "$EXPERIMENT" --shard {}/"$N" --out "$WORK/shard-{}" --workers 1
fi
"$SIMRUN" merge "$WORK"/shard-* --out "$OUT"
