#!/usr/bin/env bash
# test_decode_cli.sh NMT: the decoding features through the binary, on tiny models trained here:
# ensembles (a model with itself is the model alone; two architectures together; different
# SentencePiece models refused, naming both files), n-best lists (N lines per input, the first
# the 1-best output, scores in order) and `average --last N` (the newest N checkpoint.uN by
# update number, the same file as the explicit list); scripts/tune-lenpen.sh's grid.
set -uo pipefail
NMT=$1
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory

tiny_corpus 300 250
tiny_config
train() {  # name, extra --set options
    local name=$1
    shift
    "$NMT" train -c cfg.yaml --set train.run_dir="$name" --set train.max_updates=10 \
        --set train.valid_freq=10 "$@" > "$name.out" 2>&1 ||
        { cat "$name.out"; echo "FAIL: training $name"; exit 1; }
}
train a
train b --set model.attention=collab --set model.dk=16 --set train.seed=2 --set train.max_updates=4
train c --set data.dir=data-c --set data.vocab_size=320 --set train.max_updates=2
A=a/checkpoint.best B=b/checkpoint.best
head -20 valid.en > in.en
head -20 valid.de > in.de
n=$(wc -l < in.en)

# ensembles
for beam in 1 4; do
    "$NMT" translate -m $A --beam $beam < in.en > one.out 2>/dev/null
    "$NMT" translate -m $A -m $A --beam $beam < in.en > twice.out 2>/dev/null
    check "translate --beam $beam: a model ensembled with itself is the model alone" cmp -s one.out twice.out
done
"$NMT" translate -m $A -m $B --beam 4 -o ab.out < in.en 2>/dev/null
check "translate -m A -m B (concat and collab): one line per input" test "$(wc -l < ab.out)" -eq "$n"
"$NMT" eval -m $A -m $B --src in.en --ref in.de --beam 4 > ab.json 2>/dev/null ||
    echo "FAIL: eval of an ensemble"
check "eval of an ensemble names both models" grep -qF '"models":["a/checkpoint.best","b/checkpoint.best"]' ab.json
expect 1 "a/checkpoint.best and c/checkpoint.best have different SentencePiece models" \
    "$NMT" translate -m $A -m c/checkpoint.best < in.en
expect 1 "a/checkpoint.best and c/checkpoint.best have different SentencePiece models" \
    "$NMT" eval -m $A -m c/checkpoint.best --src in.en --ref in.en
expect 2 "-m is given 2 times; this command takes one model" \
    "$NMT" score -m $A -m $B --src in.en --ref in.en

# n-best lists
"$NMT" translate -m $A --beam 4 < in.en > best.out 2>/dev/null
"$NMT" translate -m $A --beam 4 --nbest 3 < in.en > nbest.out 2>/dev/null
check "--nbest 3: three lines per input, numbered from 0" \
    test "$(cut -d' ' -f1 nbest.out | uniq -c | awk '$1 == 3 { k++ } END { print k }')" -eq "$n" -a \
    "$(cut -d' ' -f1 nbest.out | uniq | tr '\n' ' ')" = "$(seq -s ' ' 0 $((n - 1))) "
awk -F' \\|\\|\\| ' '!seen[$1]++ { print $2 }' nbest.out > first.out
check "--nbest: the first hypothesis of each input is the 1-best output" cmp -s first.out best.out
check "--nbest: scores in descending order per input" awk -F' \\|\\|\\| ' \
    'NF != 3 { exit 1 } $1 == prev && $3 > last { exit 1 } { prev = $1; last = $3 }' nbest.out
"$NMT" translate -m $A -m $B --beam 4 --nbest 2 < in.en > ab.nbest 2>/dev/null
awk -F' \\|\\|\\| ' '!seen[$1]++ { print $2 }' ab.nbest > ab.first
check "--nbest of an ensemble: the first is the ensemble's 1-best" cmp -s ab.first ab.out
expect 2 "--nbest 5 exceeds the beam (4)" "$NMT" translate -m $A --beam 4 --nbest 5 < in.en
expect 2 "option --nbest expects an integer" "$NMT" translate -m $A --nbest 0 < in.en

# the length-penalty grid on a validation set: a BLEU per cell, the best one named
NMT=$NMT bash "$(dirname "${BASH_SOURCE[0]}")/../scripts/tune-lenpen.sh" -m $A --src in.en \
    --ref in.de --beam 1,2 --lenpen 0,1.5 --out tune > tune.out 2>/dev/null ||
    echo "FAIL: tune-lenpen.sh exited $?"
cells=$(grep -Ec '^\| (0|1\.5) \| [0-9.]+ \| [0-9.]+ \|$' tune.out)
check "tune-lenpen.sh: a row of two BLEU per lenpen" test "$cells" -eq 2
max=$(grep -h -o '"bleu":[0-9.]*' tune/*.json | cut -d: -f2 | sort -g | tail -1)
check "tune-lenpen.sh: the best cell has the highest BLEU ($max)" grep -q "^best on in.en: --beam [12] --lenpen [0-9.]* (BLEU $max)$" tune.out
check "tune-lenpen.sh: the table is kept in --out" cmp -s tune.out tune/lenpen.md
"$NMT" eval -m $A --src in.en --ref in.de --beam 2 --lenpen 1.5 > cell.json 2>/dev/null
check "tune-lenpen.sh: a cell is nmt eval with its beam and lenpen" test \
    "$(grep -o '"bleu":[0-9.]*' cell.json)" = "$(grep -o '"bleu":[0-9.]*' tune/beam2-lenpen1.5.json)"

# average --last: u10 is newer than u8 (not a string order)
expect 0 "a/checkpoint.u8, a/checkpoint.u10" "$NMT" average --last 2 -o last2.ckpt a
"$NMT" average -o explicit.ckpt a/checkpoint.u8 a/checkpoint.u10 2>/dev/null
check "average --last 2 is the average of the two newest checkpoint.uN" cmp -s last2.ckpt explicit.ckpt
"$NMT" average -o older.ckpt a/checkpoint.u6 a/checkpoint.u8 2>/dev/null
check "average --last 2 is not the two before" test "$(cmp -s last2.ckpt older.ckpt || echo differ)" = differ
expect 1 "a holds 5 checkpoint.uN: u2, u4, u6, u8, u10, fewer than the 6 asked" \
    "$NMT" average --last 6 -o x.ckpt a
expect 1 "cannot read run directory 'nothing'" "$NMT" average --last 1 -o x.ckpt nothing
expect 2 "--last N needs -o OUTPUT and one run directory" "$NMT" average --last 2 -o x.ckpt a b
expect 2 "option --last expects an integer" "$NMT" average --last 0 -o x.ckpt a

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
