#!/bin/bash
# One shard of a rebalsim sweep per Slurm array task.
#   jid=$(sbatch --parsable --array=0-7 deploy/slurm-sweep.sh EXPERIMENT 8)
#   sbatch --dependency=afterok:$jid --wrap "./simrun merge out/EXPERIMENT/shard-* --out results/EXPERIMENT"
#SBATCH --job-name=rebalsim-sweep
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
#SBATCH --requeue
set -euo pipefail
EXPERIMENT=${1:?experiment}
SHARDS=${2:?number of shards}
SIMRUN=${SIMRUN:-./simrun}
i=${SLURM_ARRAY_TASK_ID:?run as an array job}
exec "$SIMRUN" sweep "$EXPERIMENT" --shard "$i/$SHARDS" --out "out/$EXPERIMENT/shard-$i" \
  --workers "${SLURM_CPUS_PER_TASK:-0}"
