#!/usr/bin/env bash
# scripts/fuzz.sh: runs the libFuzzer targets of tests/fuzz (README "Fuzzing").
#   scripts/fuzz.sh TARGET SECONDS      fuzz one target (config, text, checkpoint, tokcache, bleu,
#                                       translate) for SECONDS
#   scripts/fuzz.sh all SECONDS         each target for SECONDS, one after the other
#   scripts/fuzz.sh --runs N TARGET|all N inputs per target from seed 1, the same ones every run
#                                       (CI)
#   --merge                             afterwards, add the new inputs that reach new coverage to
#                                       the committed seed corpus tests/fuzz/corpus/TARGET
# Builds build/fuzz (clang, -DNMT_FUZZ=ON) first when needed. The seed corpus is read, never
# written (unless --merge): new inputs go to build/fuzz/corpus/TARGET, crashes to
# build/fuzz/artifacts/TARGET/, the fuzzer's log to build/fuzz/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="" merge=0
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    *) break ;;
    esac
done
targets=(config text checkpoint tokcache bleu translate)
what=${1:?usage: scripts/fuzz.sh [--runs N] [--merge] TARGET|all [SECONDS]}
seconds=${2:-60}
if [ "$what" = all ]; then
    selected=("${targets[@]}")
elif [[ " ${targets[*]} " == *" $what "* ]]; then
    selected=("$what")
else
    echo "fuzz.sh: unknown target '$what' (one of: ${targets[*]}, all)" >&2
    exit 2
fi

dir=build/fuzz
if [ ! -f "$dir/CMakeCache.txt" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNMT_FUZZ=ON >/dev/null
fi
cmake --build "$dir" -j "${NMT_JOBS:-$(nproc)}" --target "${selected[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export OMP_WAIT_POLICY=PASSIVE NMT_GEMM_AUTOTUNE=0
failed=0
for t in "${selected[@]}"; do
    scratch=$dir/corpus/$t artifacts=$dir/artifacts/$t/ log=$dir/logs/$t.log
    budget=(-max_total_time="$seconds") fixed=()
    if [ -n "$runs" ]; then
        # The same inputs every time: seed 1, an empty scratch corpus, no reloading of it on a
        # timer, and fixed addresses where the kernel allows (pointer comparisons feed mutations).
        rm -rf "$scratch"
        budget=(-runs="$runs" -seed=1 -reload=0)
        if setarch "$(uname -m)" -R true 2>/dev/null; then fixed=(setarch "$(uname -m)" -R); fi
    fi
    mkdir -p "$scratch" "$artifacts" "$dir/logs"
    start=$SECONDS
    if "${fixed[@]}" "$dir/tests/fuzz/fuzz_$t" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts" -print_final_stats=1 "$scratch" "tests/fuzz/corpus/$t" \
        >"$log" 2>&1; then
        result=ok
    else
        result="FAILED (crash input in $artifacts)"
        failed=$((failed + 1))
    fi
    stats=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
    echo "fuzz $t: $result in $((SECONDS - start)) s: $stats"
    [ "$result" = ok ] || tail -n 40 "$log"
    if [ "$merge" = 1 ] && [ "$result" = ok ]; then
        "$dir/tests/fuzz/fuzz_$t" -merge=1 "tests/fuzz/corpus/$t" "$scratch" >>"$log" 2>&1
    fi
done
echo "fuzz: $((${#selected[@]} - failed)) passed, $failed failed"
[ "$failed" = 0 ]
