#!/usr/bin/env bash
# test_export.sh NMT: an export is a model file: translate, score and eval read it (detected by
# content) and give the outputs of the checkpoint it came from; `score --json` prints one object
# per pair and a summary whose numbers agree with the plain output.
set -uo pipefail
NMT=$1
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory

tiny_corpus 300 250
tiny_config
"$NMT" train -c cfg.yaml --set model.attention=collab --set model.dk=16 \
    --set train.max_updates=4 --set train.save_freq=4 --set train.valid_freq=4 > train.out 2>&1 ||
    { cat train.out; echo "FAIL: training the tiny model"; exit 1; }
ckpt=run/checkpoint.best
expect 0 "-> model.safetensors" "$NMT" export -m $ckpt -o model.safetensors
for beam in 1 4; do
    "$NMT" translate -m $ckpt --beam $beam < valid.en > ck.out 2>/dev/null
    "$NMT" translate -m model.safetensors --beam $beam < valid.en > st.out 2>/dev/null
    check "translate --beam $beam: the export's output is the checkpoint's" cmp -s ck.out st.out
done
"$NMT" score -m $ckpt --src valid.en --ref valid.de > ck.score 2> ck.err
"$NMT" score -m model.safetensors --src valid.en --ref valid.de > st.score 2> st.err
check "score: the export's scores are the checkpoint's" cmp -s ck.score st.score
check "score: the same corpus NLL" cmp -s ck.err st.err
for m in $ckpt model.safetensors; do  # all but the model's name and the timings
    "$NMT" eval -m $m --src valid.en --ref valid.de 2>/dev/null | sed -E 's/"model":"[^"]*","models":\[[^]]*\],//; s/,"seconds".*//'
done > eval.out
check "eval: the export's scores are the checkpoint's" test "$(sed -n 1p eval.out)" = "$(sed -n 2p eval.out)"
"$NMT" score -m model.safetensors --src valid.en --ref valid.de --json > out.txt 2>/dev/null
n=$(wc -l < valid.en)
check "score --json: one object per pair and a summary" test "$(grep -c '^{"line":' out.txt)" -eq "$n" -a "$(wc -l < out.txt)" -eq $((n + 1)) -a "$(tail -1 out.txt | grep -c '"nll_per_token":')" -eq 1
# the JSON log-probabilities round to the plain output's, the token counts match
grep '^{"line":' out.txt | sed 's/.*"logprob":\([^,]*\),"length":\([0-9]*\)}/\1 \2/' |
    awk '{ printf "%.6f\t%d\n", $1, $2 }' > json.score
check "score --json agrees with the plain scores" cmp -s json.score ck.score
# a damaged export is refused, naming the file
head -c 2000 model.safetensors > cut.safetensors
expect 1 "cut.safetensors" "$NMT" translate -m cut.safetensors < valid.en

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
