#!/bin/bash
# Spread a sweep over a Slurm job array: sbatch docs/examples/sweep-slurm.sh
# Each array task runs one slice; bkcheck reads SLURM_ARRAY_TASK_ID,
# SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT by itself.
# Afterwards: bkcheck sweep merge results/shard-* --out results/merged
#SBATCH --job-name=bkcheck-sweep
#SBATCH --array=1-4
#SBATCH --cpus-per-task=2
#SBATCH --mem=8G
#SBATCH --output=results/slurm-%A_%a.out
set -euo pipefail
mkdir -p results
go run ./cmd/bkcheck sweep docs/examples/sweep.toml --out "results/shard-${SLURM_ARRAY_TASK_ID}"
