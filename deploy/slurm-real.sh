#!/bin/bash
# Runs deploy/README.md's Slurm lines on a real one-node Slurm that this
# script starts and always stops (Debian's slurm-wlm 22.05 and munge:
# apt-get install slurm-wlm munge; it must run as root). Called by
# deploy/recipes_test.sh when slurmctld, slurmd, munged and sbatch exist;
# runnable alone from the repository's root:
#   bash deploy/slurm-real.sh [SIMRUN]
# Everything (munge key and socket, slurm.conf, state, logs, the jobs' work
# directory) lives in one temporary directory; the daemons listen on
# 127.0.0.1, ports 16817/16818. Checks, each ending with the merged
# points.csv/summary.csv/points_long.csv byte-identical to an unsharded sweep:
#  1. quickstart: the README's array and afterany merge, as written;
#  2. a slower experiment file (8 points, one per shard) with
#     a. scancel of a running task,
#     b. kill -9 of a running task's simrun,
#     c. the node forced down while a task runs, then resumed;
#     each followed by the README's flow: list the tasks not COMPLETED,
#     scontrol requeue each, merge again; the requeued task's log holds
#     both runs (--open-mode=append).
set -euo pipefail
repo=$(pwd)
[ "$(id -u)" = 0 ] || { echo "slurm-real.sh: run as root (slurmd starts jobs as their user)" >&2; exit 2; }
for b in munged slurmctld slurmd sbatch squeue scontrol scancel; do
  command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$b" >/dev/null 2>&1 ||
    { echo "slurm-real.sh: $b not found (apt-get install slurm-wlm munge)" >&2; exit 2; }
done
export PATH=$PATH:/usr/sbin
d=$(mktemp -d /tmp/rebalsim-slurm.XXXXXX)
chmod 755 "$d"
pids=()
stop() {
  set +e
  if [ -n "${SLURM_CONF:-}" ] && [ -e "$d/slurmctld.up" ]; then
    ids=$(squeue -h -o %A 2>/dev/null | sort -u)
    [ -z "$ids" ] || scancel $ids
    for _ in $(seq 30); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 1; done
  fi
  # slurmd, slurmctld, munged: the ones this script started, newest first.
  for ((k = ${#pids[@]} - 1; k >= 0; k--)); do
    kill "${pids[k]}" 2>/dev/null
    for _ in $(seq 20); do kill -0 "${pids[k]}" 2>/dev/null || break; sleep 0.5; done
    kill -9 "${pids[k]}" 2>/dev/null
    wait "${pids[k]}" 2>/dev/null
  done
  if [ -n "${KEEP:-}" ]; then echo "slurm-real.sh: kept $d" >&2; else rm -rf "$d"; fi
}
trap stop EXIT
trap 'exit 130' INT TERM HUP

simrun=${1:-}
if [ -z "$simrun" ]; then
  simrun=$d/simrun.bin
  go build -o "$simrun" ./cmd/simrun
fi
host=$(hostname -s)

# munge: a fresh key, its own socket.
mkdir -m 755 "$d/munge"
dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$d/munge/munge.key"
munged -F --force --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
  --pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" \
  --seed-file="$d/munge/munged.seed" &
pids+=($!)
for _ in $(seq 50); do [ -S "$d/munge/munge.socket" ] && break; sleep 0.2; done
[ -S "$d/munge/munge.socket" ] || { echo "munged did not start:"; cat "$d/munge/munged.log"; exit 1; }

mkdir -p "$d/state" "$d/spool" "$d/work/deploy"
cpus=2
cat > "$d/slurm.conf" <<EOF
ClusterName=rebalsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket,cred_expire=10
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=1
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$d/slurm.conf
slurmctld -D -c -f "$SLURM_CONF" > "$d/slurmctld.stderr" 2>&1 &
pids+=($!)
touch "$d/slurmctld.up"
slurmd -D -f "$SLURM_CONF" -N "$host" > "$d/slurmd.stderr" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
  st=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  case $st in idle*) break ;; esac
  sleep 1
done
case $st in idle*) ;; *)
  echo "slurm-real.sh: the node is not idle ($st):"; tail -20 "$d/slurmctld.log" "$d/slurmd.log" "$d"/*.stderr; exit 1 ;;
esac
echo "slurm: slurmctld and slurmd up ($(sinfo -V), node $host, $cpus CPUs)"

# The jobs' directory: ./simrun and deploy/slurm-sweep.sh, as the README assumes.
cd "$d/work"
cp "$simrun" simrun
cp "$repo/deploy/slurm-sweep.sh" deploy/
first=$(grep -E '^    jid=\$\(sbatch ' "$repo/deploy/README.md" | head -1 | sed 's/^    //')
merge=$(grep -E '^    sbatch --dependency=afterany' "$repo/deploy/README.md" | head -1 | sed 's/^    //')
list=$(grep -E '^    squeue .*-t all' "$repo/deploy/README.md" | head -1 | sed 's/^    //; s/ *#.*//')
requeue=$(grep -E '^    scontrol requeue ' "$repo/deploy/README.md" | head -1 | sed 's/^    //; s/ *#.*//')
for v in first merge list requeue; do
  [ -n "${!v}" ] || { echo "deploy/README.md: the $v line of the Slurm recipe is missing"; exit 1; }
done

same() { # same WHOLE MERGED
  for f in points.csv points_long.csv summary.csv; do cmp "$1/$f" "$2/$f"; done
}
# wait_done JID...: until no job of the list is pending, running or completing.
wait_done() {
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$(IFS=,; echo "$*")" 2>/dev/null)" ] && return 0
    sleep 1
  done
  echo "slurm-real.sh: jobs $* did not finish in 600 s:"; squeue; exit 1
}
# running JID TASK: until array task JID_TASK runs.
running() {
  for _ in $(seq 600); do
    [ "$(squeue -h -j "$1_$2" -o %T 2>/dev/null)" = RUNNING ] && return 0
    sleep 0.2
  done
  echo "slurm-real.sh: task $1_$2 never ran"; squeue; exit 1
}
# started NAME TASK: the task's sweep has begun — its banner is in its log
# and its shard directory holds .sweep/meta.json. RUNNING in squeue comes
# before the batch script's first line; a task stopped before this has no
# run in its log and no shard for the merge to name as missing, and the
# checks below would fail on the test's own haste.
started() {
  for _ in $(seq 300); do
    [ -f "out/$1/shard-$2/.sweep/meta.json" ] && return 0
    sleep 0.1
  done
  echo "slurm-real.sh: shard $2 of $1 never started its sweep"; exit 1
}
# sweep EXP NAME: the README's two lines for EXP (jid and mid set).
sweep() {
  local exp=$1 name=$2 l1 l2
  l1=$(printf '%s\n' "$first" | sed "s#slurm-sweep.sh crash-recovery#slurm-sweep.sh $exp#; s/crash-recovery/$name/g")
  l2=$(printf '%s\n' "$merge" | sed "s/crash-recovery/$name/g")
  echo "+ $l1"
  eval "$l1"
  echo "+ $l2"
  mid=$(eval "$l2" | sed 's/[^0-9]//g')
}
# retry NAME: the README's retry flow: list, requeue each task not COMPLETED, merge again.
retry() {
  local name=$1 l3 l2 t n=0
  l3=${list}
  echo "+ $l3"
  for t in $(eval "$l3" | awk '$2 != "COMPLETED" {print $1}'); do
    l2=$(printf '%s\n' "$requeue" | sed "s/\${jid}_3/$t/")
    echo "+ $l2"
    eval "$l2"
    n=$((n + 1))
  done
  l2=$(printf '%s\n' "$merge" | sed "s/crash-recovery/$name/g")
  echo "+ $l2"
  mid=$(eval "$l2" | sed "s/[^0-9]//g")
  wait_done "$jid" "$mid"
  requeued=$n
}
merged_log() { cat "slurm-$1.out" 2>/dev/null; }
# appended LOG: the task's log holds both runs (--open-mode=append), not the second only.
appended() {
  local runs
  runs=$(grep -c '^slurm-sweep.sh: shard ' "$1" || true)
  [ "$runs" -ge 2 ] || { echo "$1: $runs run(s) in the log; a requeued task's log was truncated:"; cat "$1"; exit 1; }
}

# 1. quickstart, as written.
"$simrun" sweep quickstart --out "$d/whole-quickstart" > /dev/null 2>&1
sweep quickstart quickstart
wait_done "$jid" "$mid"
same "$d/whole-quickstart" out/quickstart/merged
echo "ok: real Slurm: quickstart, 8 array tasks + afterany merge == unsharded sweep"

# 2. A slower experiment file: 8 points, one per shard, a few seconds each.
mkdir -p exp
sed -e 's/^name: quickstart/name: slowstart/' -e 's/^seeds: 20/seeds: 300/' \
  -e 's/duration: 90s/duration: 3600s/' \
  -e 's/\[6000, 10000, 30000\]/[6000, 8000, 10000, 12000, 15000, 20000, 25000, 30000]/' \
  "$repo/experiments/builtin/quickstart.yaml" > exp/slowstart.yaml
"$simrun" sweep exp/slowstart.yaml --out "$d/whole-slowstart" > /dev/null 2>&1
fresh() { rm -rf out/slowstart; }

# 2a. scancel of a running task.
fresh
sweep exp/slowstart.yaml slowstart
running "$jid" 2
started slowstart 2
echo "+ scancel ${jid}_2"
scancel "${jid}_2"
wait_done "$jid" "$mid"
grep -q "missing" "slurm-$mid.out" || { echo "the afterany merge after scancel did not name missing points:"; merged_log "$mid"; exit 1; }
retry slowstart
[ "$requeued" -ge 1 ] || { echo "scancel: no task to requeue"; exit 1; }
appended "slurm-${jid}_2.out"
same "$d/whole-slowstart" out/slowstart/merged
echo "ok: real Slurm: scancel of task 2: the merge named the missing points; $requeued task(s) requeued (its log appended, both runs); merged again == unsharded"

# 2b. kill -9 of a running task's simrun.
fresh
sweep exp/slowstart.yaml slowstart
running "$jid" 4
started slowstart 4
pid=""
for _ in $(seq 100); do
  for p in $(pgrep -f -- "--shard 4/8 --out out/slowstart/shard-4" || true); do
    [ "$(readlink "/proc/$p/cwd")" = "$d/work" ] && pid=$p
  done
  [ -n "$pid" ] && break
  sleep 0.1
done
[ -n "$pid" ] || { echo "task 4's simrun not found"; exit 1; }
echo "+ kill -9 $pid   # task ${jid}_4's simrun"
kill -9 "$pid"
wait_done "$jid" "$mid"
grep -q "missing" "slurm-$mid.out" || { echo "the afterany merge after kill -9 did not name missing points:"; merged_log "$mid"; exit 1; }
retry slowstart
[ "$requeued" -ge 1 ] || { echo "kill -9: no task to requeue"; exit 1; }
appended "slurm-${jid}_4.out"
same "$d/whole-slowstart" out/slowstart/merged
echo "ok: real Slurm: kill -9 of task 4's simrun: the merge named the missing points; $requeued task(s) requeued (its log appended, both runs); merged again == unsharded"

# 2c. The node forced down while task 6 runs, then resumed.
fresh
sweep exp/slowstart.yaml slowstart
running "$jid" 6
started slowstart 6
echo "+ scontrol update nodename=$host state=down reason=test"
scontrol update nodename="$host" state=down reason=test
for _ in $(seq 50); do case $(sinfo -h -n "$host" -o %T) in down*) break ;; esac; sleep 0.2; done
sinfo -h -n "$host" -o '%N %T %E'
echo "+ scontrol update nodename=$host state=resume"
scontrol update nodename="$host" state=resume
wait_done "$jid" "$mid"
if grep -q "missing" "slurm-$mid.out"; then first_merge="named the missing points"; else first_merge="was complete (it waited for the second run)"; fi
grep -q "DUE TO NODE FAILURE" "slurm-${jid}_6.out" || { echo "task 6 was not killed by the node going down:"; cat "slurm-${jid}_6.out"; exit 1; }
appended "slurm-${jid}_6.out"
retry slowstart
same "$d/whole-slowstart" out/slowstart/merged
echo "ok: real Slurm: node down during task 6, resumed: the task was killed (NODE FAILURE) and requeued by Slurm, its log appended (both runs); the first merge $first_merge; the retry flow requeued $requeued task(s); merged again == unsharded"
