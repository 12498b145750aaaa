#!/bin/bash
# same-outputs.sh SIMRUN OUTDIR — the byte-identity check of every
# performance change (issue 15): write what a simrun binary prints for
#   every built-in scenario × seeds 1–3 × six --set variants (run --json;
#   a variant a scenario rejects records its error message),
#   four --trace files (seed 2), and
#   a 2,000-member record scenario (scripts/record-2000.yaml) for seeds 1 and 2,
# into OUTDIR (406 files). Run it with the binary before and after a change
# and compare:
#   go build -o /tmp/old ./cmd/simrun   # on the old commit
#   go build -o /tmp/new ./cmd/simrun   # on the new one
#   scripts/same-outputs.sh /tmp/old /tmp/a; scripts/same-outputs.sh /tmp/new /tmp/b
#   diff -r /tmp/a /tmp/b && echo identical
set -u
BIN=$1; OUT=$2; HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
names=$("$BIN" list 2>/dev/null | awk '/^Built-in scenarios/{s=1;next} /^Built-in experiments/{s=0} s && NF{print $1}')
for n in $names; do
  for seed in 1 2 3; do
    i=0
    while IFS= read -r v; do
      i=$((i+1))
      # shellcheck disable=SC2086 # $v is zero or more flags
      "$BIN" run "$n" --seed $seed --json $v > "$OUT/$n.$seed.$i.json" 2>&1
    done <<'V'

--set groups[0].client.profile=kafka-2.x
--set groups[0].client.partition.assignment.strategy=cooperative-sticky
--set groups[0].client.group.instance.id=true
--set coordinator.profile=kafka-2.x
--set network.latency=3ms
V
  done
done
for n in crash-one-member lossy-network consumer-crash-one-member rolling-restart-static; do
  "$BIN" run $n --seed 2 --trace "$OUT/$n.trace.jsonl" > "$OUT/$n.trace.out" 2>&1
done
for seed in 1 2; do "$BIN" run "$HERE/record-2000.yaml" --seed $seed --json > "$OUT/record-2000.$seed.json" 2>&1; done
ls "$OUT" | wc -l
