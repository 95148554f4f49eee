#!/usr/bin/env bash
# A restoresim seed sweep as a Slurm job array: task I runs shard I of SHARDS (`restoresim
# explore --shard $SLURM_ARRAY_TASK_ID/$SHARDS`), writing its report and repro files under
# RESULTS (a folder every node sees); a job that depends on the whole array then runs
# `restoresim merge` into RESULTS/merged.json and RESULTS/repros/.
#
#   tools/batch/slurm-sweep.sh submit 64 --scenario all --seeds 100000 --strategy pct:3
#   # = sbatch --array=0-63 slurm-sweep.sh shard; sbatch --dependency=afterok:JOB ... merge
#
# RESULTS defaults to ./restoresim-sweep; RESTORESIM to `restoresim` on PATH (the same build
# on every node: merge refuses shards of different builds). A shard exits 0 (as expected) or 1
# (findings) as a finished task; only the merge says whether a planted bug was found.
#SBATCH --job-name=restoresim-sweep
#SBATCH --cpus-per-task=2
#SBATCH --requeue
set -euo pipefail

RESULTS="${RESULTS:-$PWD/restoresim-sweep}"
RESTORESIM="${RESTORESIM:-restoresim}"

usage() {
  echo "usage: $0 submit SHARDS [explore options] | shard | merge" >&2
  exit 2
}

case "${1:-}" in
  submit)
    [ $# -ge 2 ] || usage
    shards="$2"; shift 2
    mkdir -p "$RESULTS"
    array_job=$(sbatch --parsable --array="0-$((shards - 1))" --output="$RESULTS/%a.log" \
      --export="ALL,SHARDS=$shards,RESULTS=$RESULTS,EXPLORE_ARGS=$*" "$0" shard)
    sbatch --parsable --dependency="afterok:$array_job" --output="$RESULTS/merge.log" \
      --export="ALL,SHARDS=$shards,RESULTS=$RESULTS" "$0" merge
    ;;
  shard)
    : "${SLURM_ARRAY_TASK_ID:?run as a task of a job array (sbatch --array)}"
    : "${SHARDS:?SHARDS: the number of shards (the size of the array)}"
    out="$RESULTS/shard-$SLURM_ARRAY_TASK_ID"
    mkdir -p "$out"
    rc=0
    set -f  # EXPLORE_ARGS is split into options, never globbed ('scenario.*')
    # shellcheck disable=SC2086
    "$RESTORESIM" explore ${EXPLORE_ARGS:-} --shard "$SLURM_ARRAY_TASK_ID/$SHARDS" \
      --json-out "$out/shard.json" --repro-dir "$out/repros" --quiet || rc=$?
    # 0: as expected, 1: findings: the shard is done either way.
    [ "$rc" -le 1 ] || exit "$rc"
    ;;
  merge)
    : "${SHARDS:?SHARDS: the number of shards}"
    reports=()
    for ((i = 0; i < SHARDS; i++)); do reports+=("$RESULTS/shard-$i/shard.json"); done
    exec "$RESTORESIM" merge "${reports[@]}" --repros-to "$RESULTS/repros" \
      --json-out "$RESULTS/merged.json"
    ;;
  *) usage ;;
esac
