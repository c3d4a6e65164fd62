#!/usr/bin/env bash
# test_cli.sh NMT: the command line: dispatch, help, exit codes (0 ok, 1 failure, 2 usage), and
# error messages that name the file, line, key or option that is wrong.
set -uo pipefail
NMT=$1
configs=$(cd "$(dirname "${BASH_SOURCE[0]}")/../configs" && pwd)
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory
expect 2 "usage: nmt <command>" "$NMT"
expect 0 "translate" "$NMT" --help
expect 2 "unknown command 'frobnicate'" "$NMT" frobnicate
expect 0 "model.d_model" "$NMT" train --help
expect 0 "--beam N" "$NMT" translate --help
for cmd in prepare train translate score eval bleu average export reparam analyze bench \
           "bench gemm" "bench train" "bench decode"; do
    # shellcheck disable=SC2086  # "bench gemm" is two words
    expect 0 "usage: nmt $cmd " "$NMT" $cmd --help
done
expect 2 "missing.yaml: cannot open config file" "$NMT" train -c missing.yaml
printf 'model:\n  heads: 4\n  d_modle: 256\n' > bad.yaml
expect 2 "bad.yaml:3: unknown key 'model.d_modle' (did you mean 'model.d_model'?)" "$NMT" train -c bad.yaml
printf 'train:\n  lr: fast\n' > bad2.yaml
expect 2 "bad2.yaml:2: train.lr: expected a number, got 'fast'" "$NMT" prepare -c bad2.yaml
expect 2 "--set: model.heads: 0 is out of range" "$NMT" train --set model.heads=0
expect 2 "option --set needs a value" "$NMT" train --set
expect 2 "-m CHECKPOINT is required" "$NMT" translate
expect 1 "cannot open checkpoint nothing.ckpt" "$NMT" translate -m nothing.ckpt
expect 2 "unknown option '--frob'" "$NMT" bench gemm --frob
expect 2 "unknown benchmark 'frob'" "$NMT" bench frob
# The attention rows of bench gemm carry a positive roofline bound, and the run reports an FMA
# peak. (The two are timed at different moments, so they are not compared with each other.)
"$NMT" bench gemm --shapes attn_qk_64 --backends blocked,ref --threads 1 --reps 1 --json \
    > bench.json 2>&1
peak=$(grep -o '"shape":"peak","threads":1,"isa":"[a-z0-9]*","gflops":[0-9.]*' bench.json |
       sed 's/.*://')
bound=$(grep '"backend":"blocked","gflops"' bench.json | grep -o '"bound_gflops":[0-9.]*' |
        sed 's/.*://')
if [ -n "$peak" ] && [ -n "$bound" ] && awk -v b="$bound" -v p="$peak" 'BEGIN{exit !(b > 0 && p > 0)}' &&
   grep -q '"median_bound_ratio":' bench.json; then
    passed=$((passed + 1))
else
    echo "FAIL: bench gemm attention bound '$bound' or peak '$peak' not positive, or no summary:"
    head -5 bench.json
    failed=$((failed + 1))
fi
# With --resident the attention rows cycle over cached operands: marked, measured, and unbounded.
"$NMT" bench gemm --shapes attn_qk_64 --backends blocked,ref --threads 1 --reps 1 --resident 4 \
    --json > resident.json 2>&1
row=$(grep '"backend":"blocked","gflops"' resident.json)
gflops=$(echo "$row" | grep -o '"gflops":[0-9.]*' | sed 's/.*://')
if echo "$row" | grep -q '"resident":4' && ! grep -q 'bound' resident.json &&
   [ -n "$gflops" ] && awk -v g="$gflops" 'BEGIN{exit !(g > 0)}'; then
    passed=$((passed + 1))
else
    echo "FAIL: bench gemm --resident 4: no resident mark, a bound, or no GFLOP/s:"
    cat resident.json
    failed=$((failed + 1))
fi
# With --copies a large shape at 2 threads also runs as 2 independent copies: its row gives their
# GFLOP/s and the backend's rate over it (equal within 2%, the rounding of the printed figures on
# a slow build), and a summary gives the median; at 1 thread there are no copies (the product is
# its own copy).
"$NMT" bench gemm --shapes proj_d256 --backends blocked --threads 1,2 --reps 1 --copies --json \
    > copies.json 2>&1
copies_ok() {  # its NT row at 2 threads, the summary, and nothing of copies at 1 thread
    local row gflops copies split
    row=$(grep '"ta":0,"tb":1,"batch":1,"threads":2,"backend":"blocked"' copies.json)
    gflops=$(echo "$row" | grep -o '"gflops":[0-9.]*' | sed 's/.*://')
    copies=$(echo "$row" | grep -o '"copies_gflops":[0-9.]*' | sed 's/.*://')
    split=$(echo "$row" | grep -o '"ratio_vs_copies":[0-9.]*' | sed 's/.*://')
    [ -n "$gflops" ] && [ -n "$copies" ] && [ -n "$split" ] &&
        awk -v g="$gflops" -v c="$copies" -v s="$split" \
            'BEGIN{exit !(c > 0 && s > 0 && (g / c / s - 1) ^ 2 < 4e-4)}' &&
        ! grep '"threads":1,' copies.json | grep -q copies &&
        grep -q '^{"bench":"gemm","summary":"copies","threads":2,"shapes":3,' copies.json ||
        { cat copies.json; false; }
}
check "bench gemm --copies: no copies or a wrong ratio at 2 threads, or copies at 1 (above)" \
    copies_ok
# `auto` is a backend of bench gemm, whose header says what it runs per class (ctest sets
# NMT_GEMM_AUTOTUNE=0: its default, no measuring); a bad NMT_GEMM_AUTOTUNE is refused.
"$NMT" bench gemm --shapes attn_qk_64 --backends auto,blocked --threads 1 --reps 1 --json \
    > auto.json 2>&1
if grep -q '^{"bench":"gemm","auto":"default","threads":1,"large":"[a-z]*","wgrad":"[a-z]*","attention":"[a-z]*","packed":"[a-z]*"}$' auto.json &&
   grep -q '"backend":"auto","gflops":' auto.json; then
    passed=$((passed + 1))
else
    echo "FAIL: bench gemm --backends auto,blocked: no auto choice line or no auto row:"
    cat auto.json
    failed=$((failed + 1))
fi
expect 1 "NMT_GEMM_AUTOTUNE must be 0" env NMT_GEMM_AUTOTUNE=maybe "$NMT" bench gemm \
    --shapes attn_qk_64 --backends auto --threads 1 --reps 1
# bench train counts the step's work: 10 sentences of 10 tokens of a 1+1-layer D 32 model are
# 0.0149 GFLOP (attention 8.72M, FFN 4.92M, output 1.23M FLOPs, counted by hand), and times the
# products it issues through the GEMM interface: all of it but the attention core's 1.34M (scores
# and P.V over 300 query-key pairs a sentence, 2 x 10 x 300 x 32 FLOPs each, 7 times in all), so
# 0.0135 GFLOP; a product that escaped the timer (such as the output layer's, on a B packed once)
# would leave it short. It then replays the products it timed alone: the same 0.0135 GFLOP.
cat > tiny.yaml <<YAML
model: {vocab_size: 64, d_model: 32, heads: 4, ffn: 64, enc_layers: 1, dec_layers: 1}
train: {batch_tokens: 100, threads: 1}
YAML
"$NMT" bench train -c tiny.yaml --len 10 --warmup 0 --steps 1 --json > train.json 2>&1
num() { grep -o "\"$1\":[0-9.]*" train.json | sed 's/.*://'; }
if grep -q '"gflop_per_step":0.0149,' train.json && grep -q '"arch":"[a-z0-9-]*"' train.json &&
   awk -v g="$(num gflops)" -v p="$(num pct_peak)" 'BEGIN{exit !(g > 0 && p > 0)}' &&
   grep -q '"gflop_products":0.0135,' train.json &&
   grep -q '"gflop_products_alone":0.0135,' train.json &&
   awk -v a="$(num ms_products_alone)" 'BEGIN{exit !(a > 0)}' &&
   awk -v p="$(num ms_products)" -v r="$(num ms_rest)" -v s="$(num ms_per_step)" \
       'BEGIN{exit !(p > 0 && r > 0 && p + r < s * 1.001 + 0.01)}' &&
   awk -v pm="$(num params_m)" -v mp="$(num mb_params)" -v ma="$(num mb_adam)" \
       -v act="$(num mb_acts)" -v rss="$(num peak_rss_mb)" \
       'BEGIN{b = pm * 4e6 / 1048576; exit !(mp >= b && mp < b + 1 && ma >= 2 * b && ma < 2 * b + 1 && act > 0 && act < rss)}'; then
    passed=$((passed + 1))
else
    echo "FAIL: bench train: GFLOP per step not 0.0149 or timed (or replayed) products not 0.0135,"
    echo "no GFLOP/s, %peak or arch, or memory not 4 bytes a parameter:"
    cat train.json
    failed=$((failed + 1))
fi
# --products splits the same products by layout and shape: the tiny model issues 51 a step (12
# projections and 4 FFN layers, each forward, input gradient and weight gradient, and the output
# layer's logits, their input gradient and the embedding's gradient), 17 of them weight gradients
# (TN), in 11 kinds whose work adds up to the 0.0135 GFLOP above and whose replayed times add up
# to ms_products_alone.
"$NMT" bench train -c tiny.yaml --len 10 --warmup 0 --steps 2 --products --json > kinds.json 2>&1
alone=$(grep -o '"ms_products_alone":[0-9.]*' kinds.json | sed 's/.*://')
if grep '"bench":"train_products"' kinds.json | awk -v alone="$alone" '
       function v(key) {  # the value of "key": a number or a string, unquoted
           match($0, "\"" key "\":\"?[A-Za-z0-9.]*")
           s = substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
           sub(/^"/, "", s)
           return s
       }
       function diff(a, b) { return a > b ? a - b : b - a }
       { kinds++; n += v("per_step"); g += v("gflop_per_step"); ms += v("ms_alone")
         if (v("op") == "TN") tn += v("per_step")
         work = 2e-9 * v("m") * v("n") * v("k") * v("per_step")
         if (diff(v("gflop_per_step"), work) > 1e-6) bad++ }
       END { exit !(kinds == 11 && n == 51 && tn == 17 && !bad && diff(g, 0.0135) < 0.00005 &&
                    diff(ms, alone) < 0.006) }'; then
    passed=$((passed + 1))
else
    echo "FAIL: bench train --products: not 51 products in 11 kinds (17 TN) adding up to 0.0135"
    echo "GFLOP and to ms_products_alone:"
    cat kinds.json
    failed=$((failed + 1))
fi
# A benchmark opens no data: transformer-base.yaml's ${WMT14} paths may be unset, and without
# model.vocab_size the model has data.vocab_size entries, as `nmt prepare` would build.
small=(--set model.d_model=32 --set model.heads=4 --set model.ffn=64 --set model.enc_layers=1
       --set model.dec_layers=1 --set train.batch_tokens=100 --set train.threads=1
       --set data.vocab_size=300 --len 10 --warmup 0 --steps 1 --json)
env -u WMT14 "$NMT" bench train -c "$configs/transformer-base.yaml" "${small[@]}" > base.json 2>&1
env -u WMT14 "$NMT" bench train -c "$configs/transformer-base.yaml" "${small[@]}" \
    --set model.vocab_size=300 > base300.json 2>&1
params() { grep -o '"params_m":[0-9.]*' "$1"; }
if [ -n "$(params base.json)" ] && [ "$(params base.json)" = "$(params base300.json)" ]; then
    passed=$((passed + 1))
else
    echo "FAIL: bench train on transformer-base.yaml without WMT14, vocabulary from data.vocab_size:"
    cat base.json base300.json
    failed=$((failed + 1))
fi
expect 2 "environment variable WMT14 is not set" env -u WMT14 "$NMT" train \
    -c "$configs/transformer-base.yaml"
printf 'a\nb\nc\n' > three.en
printf 'x\ny\n' > two.de
cat > mismatch.yaml <<YAML
data: {dir: d, train: [{src: three.en, tgt: two.de}], valid: [{src: three.en, tgt: three.en}]}
YAML
expect 1 "three.en" "$NMT" prepare -c mismatch.yaml
expect 1 "two.de" "$NMT" prepare -c mismatch.yaml
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
