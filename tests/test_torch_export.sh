#!/usr/bin/env bash
# test_torch_export.sh NMT: scripts/nmt_torch.py against the binary on exports of tiny trained
# models (concat and collab attention, post- and pre-LN): its scores match `nmt score --json`
# (relative difference <= 1e-4 per sentence) and its greedy translations are those of
# `nmt translate --beam 1`. Needs Debian's python3-torch and python3-sentencepiece; without
# them, exits 77 (skipped).
set -uo pipefail
NMT=$1
SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../scripts" && pwd)
for module in torch sentencepiece; do
    if ! /usr/bin/python3 -c "import $module" 2>/dev/null; then
        echo "SKIP: /usr/bin/python3 cannot import $module (Debian python3-$module); nmt_torch.py not checked"
        exit 77
    fi
done
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory

tiny_corpus 300 250
head -20 valid.en > test.en && head -20 valid.de > test.de
for variant in "concat post" "concat pre" "collab post" "collab pre"; do
    set -- $variant
    tag=$1-$2
    cat > $tag.yaml <<YAML
data: {dir: data, train: [{src: train.en, tgt: train.de}], valid: [{src: valid.en, tgt: valid.de}],
       vocab_size: 300, spm_input_sentences: 0}
model: {d_model: 32, heads: 4, ffn: 64, enc_layers: 1, dec_layers: 2, attention: $1, norm: $2, dk: 16}
train: {run_dir: run-$tag, batch_tokens: 300, max_updates: 30, save_freq: 30, valid_freq: 30, threads: 1}
decode: {max_len_a: 1.2, max_len_b: 4, valid_beam: 1}
YAML
    "$NMT" train -c $tag.yaml > train.out 2>&1 || { cat train.out; echo "FAIL: training $tag"; exit 1; }
    "$NMT" export -m run-$tag/checkpoint.last -o $tag.safetensors 2>/dev/null
    "$NMT" score -m $tag.safetensors --src test.en --ref test.de --json > $tag.score 2>/dev/null
    "$NMT" translate -m $tag.safetensors --beam 1 < test.en > $tag.nmt 2>/dev/null
    check "$tag: nmt_torch agrees with nmt" env PYTHONPATH="$SCRIPTS" OMP_NUM_THREADS=1 \
        /usr/bin/python3 - $tag <<'PY'
import json, sys
import torch
import nmt_torch
tag = sys.argv[1]
torch.set_num_threads(1)
model = nmt_torch.load(f"{tag}.safetensors")
src = open("test.en").read().splitlines()
ref = open("test.de").read().splitlines()
lines = [json.loads(l) for l in open(f"{tag}.score")]
worst, ok = 0.0, True
for s, r, want in zip(src, ref, lines):
    got, tokens = model.score(s, r)
    ids = model.ids(r) + [nmt_torch.EOS]
    ok &= ids == want["ids"] and len(tokens) == want["length"]
    worst = max(worst, abs(got - want["logprob"]) / abs(want["logprob"]))
summary = lines[-1]
ok &= summary["sentences"] == len(src) and worst <= 1e-4
nmt_out = open(f"{tag}.nmt").read().splitlines()
mine = [model.translate(s) for s in src]
same = sum(a == b for a, b in zip(mine, nmt_out))
ok &= same == len(src) == len(nmt_out)
print(f"{tag}: score max relative difference {worst:.3g}, greedy translations identical "
      f"{same}/{len(src)}")
sys.exit(0 if ok else 1)
PY
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
