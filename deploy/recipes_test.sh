#!/bin/sh
# Checks the sharding recipe end to end: N shards through parallel-sweep.sh,
# merged, equal byte for byte to one unsharded sweep.
#   sh deploy/recipes_test.sh [EXPERIMENT] [N]
set -eu
EXPERIMENT=${1:-quickstart}
N=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/simrun" ./cmd/simrun
"$tmp/simrun" sweep "$EXPERIMENT" --out "$tmp/whole" >/dev/null 2>&1
SIMRUN="$tmp/simrun" WORK="$tmp/shards" sh deploy/parallel-sweep.sh "$EXPERIMENT" "$N" "$tmp/merged" >/dev/null 2>&1
for f in $(cd "$tmp/whole" && find . -type f ! -path './.sweep/*' | sort); do
  cmp "$tmp/whole/$f" "$tmp/merged/$f"
done
echo "ok: $N shards merged == unsharded ($EXPERIMENT)"
