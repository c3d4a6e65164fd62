#!/usr/bin/env bash
# test_multi30k.sh NMT: a short real training run on Multi30k (from NMT_DATA, default
# ../shared/data) must lower the validation loss clearly; then translate, score and eval work
# on the trained checkpoint and agree on the number of lines.
set -euo pipefail
NMT=$1
data=${NMT_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
cat > cfg.yaml <<YAML
data:
  dir: data
  train: [{src: "$data/multi30k/train.en.gz", tgt: "$data/multi30k/train.de.gz"}]
  valid: [{src: "$data/multi30k/val.en.gz", tgt: "$data/multi30k/val.de.gz"}]
  vocab_size: 1000
  spm_input_sentences: 20000
model: {d_model: 64, heads: 4, ffn: 128, enc_layers: 1, dec_layers: 1, dropout: 0.0,
        attention_dropout: 0.0, ffn_dropout: 0.0}
train: {run_dir: run, batch_tokens: 2048, max_updates: 150, lr: 0.003, warmup: 20,
        valid_freq: 10, save_freq: 50, disp_freq: 10, valid_metric: nll}
decode: {valid_beam: 0, beam: 2, max_len_a: 1.2, max_len_b: 5}
YAML
"$NMT" train -c cfg.yaml > train.out 2>&1 || { tail -20 train.out; fail "training"; }
nll() { grep '"type":"valid"' run/train.jsonl | sed -n "$1p" | sed 's/.*"nll":\([0-9.]*\).*/\1/'; }
first=$(nll 1) last=$(nll 15)
echo "validation NLL: update 10 $first, update 150 $last"
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 1.5) }' || fail "the validation NLL fell from $first to $last only"
gunzip -c "$data/multi30k/val.en.gz" | sed -n 1,50p > src.en
gunzip -c "$data/multi30k/val.de.gz" | sed -n 1,50p > ref.de
"$NMT" translate -m run/checkpoint.best < src.en > hyp.de 2> /dev/null || fail "translate"
[ "$(wc -l < hyp.de)" -eq 50 ] || fail "translate wrote $(wc -l < hyp.de) lines for 50"
"$NMT" score -m run/checkpoint.best --src src.en --ref ref.de > scores.txt 2> /dev/null || fail "score"
[ "$(wc -l < scores.txt)" -eq 50 ] || fail "score wrote $(wc -l < scores.txt) lines"
"$NMT" eval -m run/checkpoint.best --src src.en --ref ref.de > eval.json 2> /dev/null || fail "eval"
grep -q '"sentences":50' eval.json && grep -q '"bleu_signature":"nrefs:1|case:mixed|eff:no|tok:13a' eval.json ||
    fail "eval output: $(cat eval.json)"
echo "4 passed, 0 failed"
