#!/bin/sh
# Checks the sharding recipes end to end:
#  1. N shards through parallel-sweep.sh, merged, equal byte for byte to one
#     unsharded sweep;
#  2. deploy/README.md's Slurm commands, exactly as written: on a real
#     one-node Slurm that deploy/slurm-real.sh starts and always stops (when
#     we are root and munged, slurmctld, slurmd and sbatch exist; quickstart
#     merged == unsharded, then scancel, kill -9 and a node forced down, each
#     requeued and merged again == unsharded); else (or with SLURM_TEST=fake),
#     saying so, through a stand-in sbatch that runs each array task with
#     SLURM_ARRAY_TASK_ID/COUNT set by hand and the --wrap merge after them:
#     one task "fails", the afterany merge names the missing points, the task
#     is run again and the merge equals the unsharded sweep; always: an array
#     of the wrong size is refused, an experiment file's shards go to
#     out/NAME/shard-i;
#  3. the Kubernetes manifests: decoded strictly with k8s.io/api and checked
#     (deploy/k8stest: the image is deploy/Dockerfile's, Indexed completions
#     = SHARDS, --workers from the CPU request, claims and mounts resolve); the
#     image is built only with DOCKER_TEST=1 and a docker engine.
#   sh deploy/recipes_test.sh [EXPERIMENT] [N]
set -eu
EXPERIMENT=${1:-quickstart}
N=${2:-3}
repo=$(pwd)
tmp=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT; echo "scratch: $tmp" >&2
go build -o "$tmp/simrun" ./cmd/simrun
"$tmp/simrun" sweep "$EXPERIMENT" --out "$tmp/whole" >/dev/null 2>&1
same() { # same DIR: DIR's files equal the unsharded sweep's
  for f in $(cd "$tmp/whole" && find . -type f ! -path './.sweep/*' ! -name .simrun.lock | sort); do
    cmp "$tmp/whole/$f" "$1/$f"
  done
}
SIMRUN="$tmp/simrun" WORK="$tmp/shards" sh deploy/parallel-sweep.sh "$EXPERIMENT" "$N" "$tmp/merged" >/dev/null 2>&1
same "$tmp/merged"
echo "ok: parallel-sweep.sh: $N shards merged == unsharded ($EXPERIMENT)"

# 2. Slurm: the README's lines, run in a scratch directory holding ./simrun.
real_slurm=""
if [ "${SLURM_TEST:-}" != fake ] && [ "$(id -u)" = 0 ]; then
  real_slurm=1
  for b in munged slurmctld slurmd sbatch; do
    PATH=$PATH:/usr/sbin command -v "$b" >/dev/null 2>&1 || real_slurm=""
  done
fi
if [ -n "$real_slurm" ]; then
  bash deploy/slurm-real.sh "$tmp/simrun"
else
  echo "no real Slurm here (it needs root and munged, slurmctld, slurmd, sbatch: apt-get install slurm-wlm munge), or SLURM_TEST=fake: the README's Slurm lines run through a stand-in sbatch"
fi
mkdir -p "$tmp/slurm/deploy"
cp deploy/slurm-sweep.sh "$tmp/slurm/deploy/"
ln -s "$tmp/simrun" "$tmp/slurm/simrun"
grep -E '^    (jid=|sbatch )' deploy/README.md | sed "s/crash-recovery/$EXPERIMENT/g" > "$tmp/slurm/readme.sh"
[ "$(wc -l < "$tmp/slurm/readme.sh")" -ge 3 ] || { echo "deploy/README.md: the Slurm commands are missing"; exit 1; }
if [ -z "$real_slurm" ]; then
cat > "$tmp/slurm/fake-sbatch.sh" <<'FAKE'
# A stand-in sbatch: --array=A-B runs the script once per task with
# SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT; --wrap runs its command.
# SKIP_TASK names a task that "fails" (is not run).
sbatch() {
  array="" wrap="" parsable=""
  while [ $# -gt 0 ]; do
    case $1 in
      --parsable) parsable=1 ;;
      --array=*) array=${1#--array=} ;;
      --dependency=*) ;;
      --wrap) shift; wrap=$1 ;;
      -*) ;;
      *) break ;;
    esac
    shift
  done
  if [ -n "$wrap" ]; then
    sh -c "$wrap" >> merge.log 2>&1 || echo "merge failed" >> merge.log
    echo 2
    return
  fi
  lo=${array%-*} hi=${array#*-}
  t=$lo
  while [ "$t" -le "$hi" ]; do
    if [ "$t" != "${SKIP_TASK:-none}" ]; then
      SLURM_ARRAY_TASK_ID=$t SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) SLURM_CPUS_PER_TASK=1 bash "$@" >> "task-$t.log" 2>&1 || echo "task $t failed" >> tasks.log
    fi
    t=$((t + 1))
  done
  echo 1
}
FAKE
cd "$tmp/slurm"
run_readme() { # the README's lines with the stand-in sbatch
  (. ./fake-sbatch.sh; . ./readme.sh)
}
# The first two lines: the array and the merge.
head -2 readme.sh > first.sh
cp readme.sh readme.full
cp first.sh readme.sh
SKIP_TASK=1 run_readme >/dev/null
grep -q "point.*missing\|missing" merge.log || { echo "the afterany merge did not name the missing points:"; cat merge.log; exit 1; }
# The retry: requeue the failed task (here: run it), merge again.
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=8 bash deploy/slurm-sweep.sh "$EXPERIMENT" 8 >> task-1.log 2>&1
merge=$(sed -n 's/.*--wrap "\(.*\)"$/\1/p' readme.full | tail -1)
sh -c "$merge" > merge2.log 2>&1 || { cat merge2.log; exit 1; }
out=$(printf '%s\n' "$merge" | sed 's/.*--out //')
same "$tmp/slurm/$out"
echo "ok: README's Slurm commands: 8 shards, a failed task named by the afterany merge, requeued, merged == unsharded ($EXPERIMENT)"
fi
cd "$tmp/slurm"
if SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=4 bash deploy/slurm-sweep.sh "$EXPERIMENT" 8 2> wrong.log; then
  echo "an array of 4 tasks for 8 shards was not refused"; exit 1
fi
grep -q "the array has 4 tasks but 8 shards" wrong.log
if SLURM_ARRAY_TASK_ID=9 bash deploy/slurm-sweep.sh "$EXPERIMENT" 8 2> wrong.log; then
  echo "task 9 of 8 shards was not refused"; exit 1
fi
echo "ok: slurm-sweep.sh refuses an array that does not match the shards"
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=1 OUT_ROOT=fileexp bash deploy/slurm-sweep.sh "$repo/experiments/builtin/quickstart.yaml" 1 > /dev/null 2>&1
[ -d fileexp/quickstart/shard-0/.points ] || { echo "an experiment file did not give out/NAME/shard-i"; ls -R fileexp | head; exit 1; }
echo "ok: an experiment file's shards go to out/NAME/shard-i"
cd "$repo"

# 3. Kubernetes: every manifest decoded strictly with the Kubernetes API types
# and checked against the recipe (deploy/k8stest, its own module), then the
# same image check in shell.
(cd deploy/k8stest && go test -count=1 ./...)
img=$(sed -n 's/^#   docker build -t \([^ ]*\) .*/\1/p' deploy/Dockerfile)
for m in deploy/k8s-indexed-job.yaml deploy/k8s-merge-job.yaml; do
  grep -q "image: $img" "$m" || { echo "$m does not use the image $img that deploy/Dockerfile builds"; exit 1; }
done
grep -q "resource: requests.cpu" deploy/k8s-indexed-job.yaml
grep -q -- '--workers "$CPU_REQUEST"' deploy/k8s-indexed-job.yaml
if [ "${DOCKER_TEST:-}" = 1 ] && command -v docker >/dev/null 2>&1; then
  docker build -q -t "$img" -f deploy/Dockerfile . >/dev/null
  docker run --rm "$img" version >/dev/null
  echo "ok: deploy/Dockerfile builds $img, which runs simrun"
fi
echo "ok: the Kubernetes manifests use $img (deploy/Dockerfile) and size --workers to the CPU request"
