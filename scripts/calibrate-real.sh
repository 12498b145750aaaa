#!/usr/bin/env bash
# The real-Kafka side of the calibration (issue 26): every scenario of
# calibrate/suite on the latest 3.9 and 4.x brokers with same-line clients,
# REPS repetitions each, rep-major (every scenario gets repetition 1 before
# any gets repetition 2), into OUT/real/SCENARIO/kafka-VERSION/rep-NNN.
# Resumable: a repetition with its done marker is skipped; an unfinished one
# starts over. A failed repetition is logged and retried on the next pass.
# Stop it with SIGTERM or Ctrl-C: the repetition in progress is torn down
# (its JVMs, namespaces, bridge and nft tables removed) and starts over at
# the next start.
#
#   sudo nohup scripts/calibrate-real.sh [REPS] [OUT] > /work/calib-real.log 2>&1 &
#
# Scenarios whose coordinator.profile is a 4.x one (the consumer protocol,
# the classic → consumer migration) run on 4.4.0 only. On the 4.4.0 line a
# 3.9 scenario runs with its clients' profile set to kafka-4.4.
set -uo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
OUT=${2:-results/calibration}
LINES=${LINES:-"3.9.1 4.4.0"}
BIN=${SIMRUN:-/var/tmp/rebalsim-calibrate-real/simrun}
if [ -z "${SIMRUN:-}" ]; then
  mkdir -p "$(dirname "$BIN")"
  go build -o "$BIN" ./cmd/simrun || exit 1
fi
child=0
stop() {
  echo "$(date -u +%FT%TZ) stopping: interrupting the repetition in progress"
  if [ "$child" -ne 0 ]; then kill -INT "$child" 2>/dev/null; wait "$child"; fi
  "$BIN" real --cleanup || true
  exit 130
}
trap stop INT TERM HUP
for ((rep = 1; rep <= REPS; rep++)); do
  for f in calibrate/suite/*.yaml; do
    name=$(basename "$f" .yaml)
    for v in $LINES; do
      profile=$(sed -n 's/^  profile: //p' "$f" | head -1)
      if [[ $profile == kafka-4* && $v == 3.* ]]; then continue; fi
      dir="$OUT/real/$name/kafka-$v"
      [ -e "$dir/$(printf rep-%03d "$rep")/done" ] && continue
      sets=()
      if [[ $v == 4.* && $profile != kafka-4* ]]; then
        sets=(--set "groups[0].client.profile=kafka-${v%.*}")
      fi
      echo "$(date -u +%FT%TZ) $name kafka-$v rep $rep (loadavg $(cut -d' ' -f1-3 /proc/loadavg))"
      start=$(date +%s)
      "$BIN" real "$f" --kafka "$v" "${sets[@]}" --out "$dir" --rep "$rep" > /dev/null &
      child=$!
      wait "$child"
      rc=$?
      child=0
      echo "$(date -u +%FT%TZ) $name kafka-$v rep $rep: exit $rc in $(($(date +%s) - start)) s"
    done
  done
done
echo "$(date -u +%FT%TZ) all $REPS repetitions done"
