#!/usr/bin/env bash
# scripts/bench-vs-torch.sh --summarize: the repetitions of two --raw files pooled (medians, each
# of ours paired with the PyTorch run after it), and the errors for a line that is not a record,
# a record cut short, records of different configs or thread counts and a run's options beside
# --summarize. Needs no PyTorch: the records are written here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$here/../scripts/bench-vs-torch.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ours_train MODE TOKENS_PER_S [D_MODEL [THREADS]]: one record of ours as `nmt bench train --json`
# prints it
ours_train() {
    printf 'OURS %s {"bench":"train","d_model":%s,"threads":%s,"tgt_tokens":4100,' \
        "$1" "${3:-256}" "${4:-2}"
    printf '"tokens_per_s":%s,' "$2"
    printf '"gflop_per_step":100,"gflops":300,"pct_peak":60,"peak_gflops":500,'
    printf '"peak_isa":"avx512","arch":"native",'
    printf '"thread_spread_pct":2,"ms_products":400,"ms_products_alone":390,"ms_rest":80,'
    printf '"mb_params":29,"mb_grads":29,"mb_adam":58,"mb_acts":295,"mb_work":80,'
    printf '"peak_rss_mb":505}\n'
}
# peer MODE TOKENS_PER_S [THREADS]: one result line of PyTorch's
peer() {
    printf 'PEER %s TORCH config=tiny threads=%s tok_s_median=%s peak_rss_MB=2500\n' \
        "$1" "${3:-2}" "$2"
}

# two files of repetitions: ours 8000, 8200 | 7000 against PyTorch 4000, 4000 | 4000 (concat)
{ ours_train concat 8000; peer concat 4000; ours_train collab 9000; peer collab 4500
  ours_train concat 8200; peer concat 4000; ours_train collab 9100; peer collab 4400; } > "$tmp/a"
{ ours_train concat 7000; peer concat 4000; ours_train collab 8800; peer collab 4600; } > "$tmp/b"
out=$(bash "$bench" --summarize "$tmp/a" "$tmp/b")
echo "$out"
# concat: median 8000 / 4000, single repetitions 1.75 (7000/4000) to 2.05 (8200/4000)
grep -Eq '^concat +tokens/s +8000\.0 +4000\.0 +2\.00 +1\.75-2\.05$' <<<"$out" ||
    fail "concat tokens/s: expected 8000 / 4000 = 2.00 (1.75-2.05)"
# collab: median 9000 / 4500; 8800/4600 = 1.91 to 9100/4400 = 2.07
grep -Eq '^collab +tokens/s +9000\.0 +4500\.0 +2\.00 +1\.91-2\.07$' <<<"$out" ||
    fail "collab tokens/s: expected 9000 / 4500 = 2.00 (1.91-2.07)"
header='^ours: native build; FMA peak 500 GFLOP/s \(avx512 loop; 500-500\); 2 threads,'
grep -Eq "$header" <<<"$out" ||
    fail "the header: expected the build, the FMA peak and 2 threads"
grep -Eq '^concat: 2\.0x PyTorch.s training \(avx512\) is a step of 512 ms' <<<"$out" ||
    fail "the step budget: expected 4100 tokens / (2 x 4000 tokens/s) = 512 ms"
# PyTorch's 4000 tokens/s are 100 GFLOP x 4000 / 4100 = 97.6 GFLOP/s, 19.5% of the 500 peak;
# ours, 8000 tokens/s, 39.0%
shares='^concat: PyTorch.s step runs at 19\.5% .*so 2\.0x asks ours at 39\.0%; ours runs at 39\.0%$'
grep -Eq "$shares" <<<"$out" ||
    fail "the shares of the peak: expected PyTorch's 19.5%, 39.0% asked, ours 39.0%"

# a line that is not a record names its file and line
printf 'rep 1: concat\n' >> "$tmp/b"
if err=$(bash "$bench" --summarize "$tmp/a" "$tmp/b" 2>&1); then
    fail "a stray line was accepted"
fi
grep -q "$tmp/b:5: not a record of bench-vs-torch.sh --raw" <<<"$err" ||
    fail "the stray line's error: $err"

# a record cut short (a run stopped while writing) names its file and line too
{ ours_train concat 8000 | cut -c1-80; } > "$tmp/d"
if err=$(bash "$bench" --summarize "$tmp/a" "$tmp/d" 2>&1); then
    fail "a cut record was accepted"
fi
grep -q "$tmp/d:1: a record bench-vs-torch.sh cannot read" <<<"$err" ||
    fail "the cut record's error: $err"

# records of two configs (transformer-base's d_model beside the small model's) are refused
{ ours_train concat 1000 512; peer concat 500; } > "$tmp/c"
if err=$(bash "$bench" --summarize "$tmp/a" "$tmp/c" 2>&1); then fail "mixed configs accepted"; fi
grep -q "the records mix builds or configs" <<<"$err" || fail "the mixed configs' error: $err"

# runs on 1 thread beside runs on 2 are refused, whichever side ran on 1
for pair in "ours_train concat 4000 256 1; peer concat 3000" \
            "ours_train concat 4000; peer concat 3000 1"; do
    eval "{ $pair; }" > "$tmp/e"
    if err=$(bash "$bench" --summarize "$tmp/a" "$tmp/e" 2>&1); then
        fail "mixed thread counts accepted ($pair)"
    fi
    grep -q "the records mix thread counts (summarize runs of one --threads): 1, 2" <<<"$err" ||
        fail "the mixed thread counts' error: $err"
done
# a run's options beside --summarize are refused, named, rather than ignored
if err=$(bash "$bench" --threads 1 --raw "$tmp/f" 5 --summarize "$tmp/a" 2>&1); then
    fail "--summarize accepted a run's options"
fi
grep -q "a run's options do not apply to it: --threads --raw 5" <<<"$err" ||
    fail "the run options' error: $err"
[ ! -e "$tmp/f" ] || fail "--summarize with --raw wrote $tmp/f"
# and so are those written after its files, rather than read as files
if err=$(bash "$bench" --summarize "$tmp/a" --isa avx2 3 2>&1); then
    fail "--summarize accepted a run's options after its files"
fi
grep -q "a run's options do not apply to it: --isa 3" <<<"$err" ||
    fail "the run options' error, after the files: $err"
if err=$(bash "$bench" --summarize --threads 1 2>&1); then fail "--summarize ran with no files"; fi
grep -q "a run's options do not apply to it: --threads" <<<"$err" ||
    fail "the run options' error, without files: $err"
echo "bench-vs-torch.sh --summarize: OK"
