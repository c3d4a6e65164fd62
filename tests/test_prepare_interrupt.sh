#!/usr/bin/env bash
# test_prepare_interrupt.sh NMT: `nmt prepare` killed at any stage (kill -9, or SIGTERM, through the
# NMT_FAULT_PREPARE_KILL fault points: while scanning, after spm.model, with train.tok half written,
# before the manifest) and run again ends with outputs byte-identical to an uninterrupted run, and
# never reuses what the killed run left: neither in a fresh directory nor in one that held the
# complete outputs of another config (a changed length filter, so spm.model stays valid and the
# interrupted run re-encodes), run again with either config.
set -euo pipefail
NMT=$1
SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../scripts" && pwd)
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory
export NMT_DATA=${NMT_DATA:-$SCRIPTS/../../shared/data}
fail() { echo "FAIL: $*"; exit 1; }

/usr/bin/python3 "$SCRIPTS/make-corpus.py" 1500 corpus 2> gen.out
head -n 200 corpus/dev/newstest2013.en > valid.en
head -n 200 corpus/dev/newstest2013.de > valid.de
config() {  # data-dir max_len: the generated training corpora, small valid and test sets
    sed '/^  valid:/,$d' corpus/data.yaml  # its train: list
    printf '  dir: %s\n  max_len: %s\n' "$1" "$2"
    printf '  valid: [{src: valid.en, tgt: valid.de}]\n  test: []\n  vocab_size: 500\n'
    printf '  spm_model_type: bpe\n  spm_input_sentences: 1000\n  max_len_ratio: 20\n'
}
prepare() {  # data-dir max_len [fault]: runs prepare, prints its exit status
    config "$1" "$2" > "$1.yaml"
    set +e
    NMT_FAULT_PREPARE_KILL=${3:-} "$NMT" prepare -c "$1.yaml" >> "$1.out" 2>&1
    echo $?
    set -e
}
same() {  # dir reference what: every file of the reference, byte for byte, and nothing else
    local f
    [ "$(ls "$1")" = "$(ls "$2")" ] || fail "$3: files $(ls "$1" | tr '\n' ' ') differ from $(ls "$2" | tr '\n' ' ')"
    for f in "$2"/*; do cmp -s "$f" "$1/${f##*/}" || fail "$3: ${f##*/} differs from an uninterrupted run"; done
}

[ "$(prepare refA 1000)" = 0 ] && [ "$(prepare refB 100)" = 0 ] || fail "uninterrupted runs: $(tail -n 3 refA.out refB.out)"
cmp -s refA/spm.model refB/spm.model || fail "the length filters changed spm.model"
cmp -s refA/train.tok refB/train.tok && fail "max_len 100 dropped no pair; the test needs it to"

for fault in scan spm encode manifest encode:TERM; do
    want=137
    [ "$fault" = encode:TERM ] && want=143
    rm -rf fresh fresh.out
    [ "$(prepare fresh 100 $fault)" = $want ] || fail "killed at $fault: $(tail -2 fresh.out)"
    [ ! -e fresh/manifest.json ] || fail "killed at $fault, a manifest was written"
    [ "$(prepare fresh 100)" = 0 ] || fail "rerun after $fault: $(tail -2 fresh.out)"
    same fresh refB "a fresh directory killed at $fault"
    passed=$((passed + 1))
done
grep -q "removed fresh/train.tok.tmp" fresh.out && fail "SIGTERM left its temporary behind"

for fault in scan encode manifest; do  # spm.model is kept: no "spm" stage
    for rerun in A B; do
        rm -rf old old.out && cp -r refA old
        [ "$(prepare old 100 $fault)" = 137 ] || fail "killed at $fault over A's outputs: $(tail -2 old.out)"
        if [ $rerun = A ]; then
            [ "$(prepare old 1000)" = 0 ] || fail "rerun A: $(tail -2 old.out)"
            same old refA "A's outputs, a run of B killed at $fault, A again"
        else
            [ "$(prepare old 100)" = 0 ] || fail "rerun B: $(tail -2 old.out)"
            same old refB "A's outputs, a run of B killed at $fault, B again"
        fi
        if [ $fault = encode ]; then
            grep -q "removed old/train.tok.tmp" old.out || fail "no log line for the killed run's temporary"
        fi
        passed=$((passed + 1))
    done
done
echo "$passed passed, 0 failed"
