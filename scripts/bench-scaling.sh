#!/usr/bin/env bash
# scripts/bench-scaling.sh [-c CONFIG] [--rounds 3] [--steps 5] [--set key=value ...]
# Data-parallel scaling on this machine, side by side in one run: `nmt bench train` as
#   1 rank x 1 thread, 2 ranks x 1 thread (gradient sums overlapped with backward, and after
#   it), 1 rank x 2 threads
# alternating for --rounds rounds; prints the median tokens/s of each, the scaling efficiency of
# 2 ranks (tokens/s over twice the 1-rank figure), 2 ranks against 1 rank x 2 threads, and the
# share of the step spent waiting for the gradient sums. CONFIG defaults to configs/bench-small.yaml.
# nmt is $NMT, else the repository's build/release/bin/nmt; mpirun runs as root and oversubscribed
# when needed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
config=$repo/configs/bench-small.yaml rounds=3 steps=5 sets=()
while [ $# -gt 0 ]; do
    case "$1" in
        -c) config=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --steps) steps=$2; shift ;;
        --set) sets+=(--set "$2"); shift ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "bench-scaling.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
nmt=${NMT:-$repo/build/release/bin/nmt}
[ -x "$nmt" ] || { echo "bench-scaling.sh: no nmt at $nmt (build it, or set NMT)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bench() {  # name ranks threads overlap
    local launch=()
    [ "$2" -gt 1 ] && launch=(mpirun -np "$2" --bind-to core)
    "${launch[@]}" "$nmt" bench train -c "$config" "${sets[@]}" --set train.threads="$3" \
        --set train.dist_overlap="$4" --steps "$steps" --warmup 2 --json 2> "$out/$1.err" |
        grep '"bench":"train"' >> "$out/$1.jsonl" || { cat "$out/$1.err" >&2; exit 1; }
}
load_start=$(cut -d' ' -f1-3 /proc/loadavg)  # a busy machine makes the comparison unfair
for r in $(seq 1 "$rounds"); do
    echo "round $r of $rounds" >&2
    bench r1t1 1 1 true
    bench r2t1 2 1 true
    bench r2t1_after 2 1 false
    bench r1t2 1 2 true
done
median() {  # name field
    grep -o "\"$2\":[0-9.]*" "$out/$1.jsonl" | cut -d: -f2 | sort -g |
        awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
one=$(median r1t1 tokens_per_s) two=$(median r2t1 tokens_per_s) after=$(median r2t1_after tokens_per_s)
threads=$(median r1t2 tokens_per_s)
wait_on=$(median r2t1 ms_sync_wait) wait_off=$(median r2t1_after ms_sync_wait)
step_on=$(median r2t1 ms_per_step) step_off=$(median r2t1_after ms_per_step)
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
echo "$(basename "$config"), $cpu, $(nproc) cores, medians of $rounds rounds of $steps steps;" \
     "load average $load_start before, $(cut -d' ' -f1-3 /proc/loadavg) after"
echo "| setup | target tokens/s | against 1 rank x 1 thread | waiting for the sums |"
echo "|---|---|---|---|"
awk -v a="$one" -v b="$two" -v c="$after" -v d="$threads" -v won="$wait_on" -v woff="$wait_off" \
    -v son="$step_on" -v soff="$step_off" 'BEGIN {
    printf "| 1 rank x 1 thread | %.0f | 1.00 | - |\n", a
    printf "| 2 ranks x 1 thread, sums overlapped | %.0f | %.2f (efficiency %.2f) | %.1f ms of %.0f (%.1f%%) |\n", b, b / a, b / (2 * a), won, son, 100 * won / son
    printf "| 2 ranks x 1 thread, sums after backward | %.0f | %.2f (efficiency %.2f) | %.1f ms of %.0f (%.1f%%) |\n", c, c / a, c / (2 * a), woff, soff, 100 * woff / soff
    printf "| 1 rank x 2 threads | %.0f | %.2f | - |\n", d, d / a
    printf "2 ranks x 1 thread against 1 rank x 2 threads: %.2f\n", b / d
}'
