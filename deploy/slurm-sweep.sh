#!/bin/bash
# One shard of a rebalsim sweep per Slurm array task (deploy/README.md).
#   jid=$(sbatch --parsable --array=0-7 deploy/slurm-sweep.sh EXPERIMENT 8)
#   sbatch --dependency=afterany:$jid --wrap "./simrun merge out/NAME/shard-* --out out/NAME/merged"
# NAME is the experiment's name: a built-in's name, or the file's name
# without directory and .yaml (out/quickstart/shard-3 for exp/quickstart.yaml).
# The array must be 0-(N-1) for N shards: a task outside it, or an array of
# another size, is refused (a shard would be run twice or never).
#SBATCH --job-name=rebalsim-sweep
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
#SBATCH --requeue
#SBATCH --open-mode=append
set -euo pipefail
EXPERIMENT=${1:?experiment}
SHARDS=${2:?number of shards}
SIMRUN=${SIMRUN:-./simrun}
OUT_ROOT=${OUT_ROOT:-out}
i=${SLURM_ARRAY_TASK_ID:?run as an array job (sbatch --array=0-$((SHARDS - 1)))}
if [ "$i" -lt 0 ] || [ "$i" -ge "$SHARDS" ]; then
  echo "slurm-sweep.sh: array task $i is outside 0-$((SHARDS - 1)) for $SHARDS shards: submit with --array=0-$((SHARDS - 1))" >&2
  exit 2
fi
if [ -n "${SLURM_ARRAY_TASK_COUNT:-}" ] && [ "$SLURM_ARRAY_TASK_COUNT" != "$SHARDS" ]; then
  echo "slurm-sweep.sh: the array has $SLURM_ARRAY_TASK_COUNT tasks but $SHARDS shards were asked for: submit with --array=0-$((SHARDS - 1))" >&2
  exit 2
fi
# One line per run, so that a requeued task's appended log shows where each run starts.
echo "slurm-sweep.sh: shard $i/$SHARDS of $EXPERIMENT, job ${SLURM_JOB_ID:-?} on $(hostname), restart ${SLURM_RESTART_COUNT:-0}" >&2
name=$(basename "$EXPERIMENT")
name=${name%.yaml}
name=${name%.yml}
exec "$SIMRUN" sweep "$EXPERIMENT" --shard "$i/$SHARDS" --out "$OUT_ROOT/$name/shard-$i" \
  --workers "${SLURM_CPUS_PER_TASK:-0}"
