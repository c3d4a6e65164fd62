#!/usr/bin/env bash
# test_bad_input.sh NMT: bad input through the binary: each kind is refused with exit 1 (bad
# data, checkpoint or file) or 2 (bad flag or config) and a message naming the file, line, key
# or flag, or handled as documented (empty lines, over-long lines); never a crash or a silent
# misreading. Uses a tiny model trained for 2 updates.
set -uo pipefail
NMT=$1
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory

tiny_corpus 300 250  # a tiny model: made-up words, the target reverses the source
tiny_config
"$NMT" train -c cfg.yaml > train.out 2>&1 || { cat train.out; echo "FAIL: training the tiny model"; exit 1; }
ckpt=run/checkpoint.best

# configs
expect 2 "train.run_dir: expected a directory name" "$NMT" train -c cfg.yaml --set train.run_dir=
mkdir cfgdir
expect 2 "cfgdir: cannot read config file: Is a directory" "$NMT" train -c cfgdir
printf 'model:\n  heads: 4\n  heads: 8\n' > dupkey.yaml
expect 2 "dupkey.yaml:3: duplicate key 'model.heads' (already set at line 2)" "$NMT" train -c dupkey.yaml
printf 'model:\n  heads: 4\ntrain:\n  lr: 0.1\nmodel:\n  ffn: 64\n' > dupsec.yaml
expect 2 "dupsec.yaml:5: duplicate section 'model' (already at line 1)" "$NMT" train -c dupsec.yaml
expect 2 "nmt train: no config given (-c FILE)" "$NMT" train
expect 2 "nmt prepare: no config given (-c FILE)" "$NMT" prepare --set data.dir=d
# run directories and checkpoints of the wrong kind
echo x > afile
expect 1 "train.run_dir afile is not a directory" "$NMT" train -c cfg.yaml --set train.run_dir=afile
expect 1 "run is a directory, not a checkpoint" "$NMT" translate -m run

# decoding flags take the values and ranges of their decode.* keys
echo "abc def" > one.en
expect 2 "--max-len-a: decode.max_len_a: expected a number, got 'nan'" "$NMT" translate -m $ckpt --max-len-a nan -i one.en
expect 2 "--lenpen: decode.lenpen: inf is out of range [0..10]" "$NMT" translate -m $ckpt --lenpen inf -i one.en
expect 2 "--lenpen: decode.lenpen: -1 is out of range [0..10]" "$NMT" eval -m $ckpt --lenpen -1 --src one.en --ref one.en
expect 2 "--beam: decode.beam: 0 is out of range [1..256]" "$NMT" translate -m $ckpt --beam 0 -i one.en
expect 2 "--lenpen-form: decode.lenpen_form: expected one of gnmt|fairseq, got 'x'" "$NMT" translate -m $ckpt --lenpen-form x -i one.en
expect 0 "" "$NMT" translate -m $ckpt --lenpen 1 --max-len-a 2 --lenpen-form fairseq -i one.en

# analyze --cp: integers from 1 to the model's key width (32)
for bad in -1 100000 0 1.5 2,x ""; do
    expect 2 "--cp expects up to 32 comma-separated integers from 1 to 32" "$NMT" analyze -m $ckpt --cp "$bad"
done
expect 0 "CP err R=32" "$NMT" analyze -m $ckpt --cp 2,32

# empty lines: an empty output line each
printf '\n\n\n' > empty3.en
"$NMT" translate -m $ckpt -i empty3.en > empty.hyp 2> empty.err
rc=$?
check "translate of empty lines: exit 0 and 3 empty lines" \
    test $rc -eq 0 -a "$(wc -l < empty.hyp)" -eq 3 -a -z "$(tr -d '\n' < empty.hyp)"
expect 0 "3 sentences" "$NMT" score -m $ckpt --src empty3.en --ref empty3.en
expect 0 '"sentences":3' "$NMT" eval -m $ckpt --src empty3.en --ref empty3.en

# NUL bytes and invalid UTF-8, named by file (or <stdin>) and line, as `nmt bleu` names them
printf 'abc\nab\0cd\n' > nul.en
expect 1 "nul.en: line 2: contains a NUL byte (at byte 3)" "$NMT" translate -m $ckpt -i nul.en
expect 1 "<stdin>: line 2: contains a NUL byte (at byte 3)" sh -c "'$NMT' translate -m $ckpt < nul.en"
expect 1 "nul.en: line 2: contains a NUL byte" "$NMT" bleu nul.en -i one.en
printf 'abc\nd\xffe\n' > bad.de
printf 'abc\ndef\n' > two.en
expect 1 "bad.de: line 2: not valid UTF-8 (byte 2, value 0xFF)" "$NMT" eval -m $ckpt --src two.en --ref bad.de
expect 1 "bad.de: line 2: not valid UTF-8 (byte 2, value 0xFF)" "$NMT" score -m $ckpt --src two.en --ref bad.de
expect 1 "bad.de: line 2: not valid UTF-8 (byte 2, value 0xFF)" "$NMT" bleu bad.de -i two.en
# sources and references that are not parallel
expect 1 "two.en has 2 lines but empty3.en has 3; they must be parallel" "$NMT" eval -m $ckpt --src two.en --ref empty3.en
expect 1 "two.en has 2 lines but empty3.en has 3; they must be parallel" "$NMT" score -m $ckpt --src two.en --ref empty3.en

# SGM: markup in the wrong place is an error naming the line
bad_sgm() {  # name content message: translating name.sgm fails with 'name.sgm':message
    printf "$2" > "$1.sgm"
    expect 1 "$1.sgm':$3" "$NMT" translate -m $ckpt -i "$1.sgm"
}
bad_sgm nested '<doc>\n<seg id="1">a</seg>\n<seg id="2">b <seg id="3">c</seg>\n</doc>\n' \
    "3: <seg> inside the <seg> of line 3"
bad_sgm open '<doc>\n<seg id="1">a</seg>\n<seg id="2">b\n<seg id="3">c</seg>\n</doc>\n' \
    "4: <seg> inside the <seg> of line 3"
bad_sgm close '<doc>\n<seg id="1">a</seg\n<seg id="2">b</seg>\n</doc>\n' "2: broken </seg> tag"
bad_sgm stray '<doc>\n<seg id="1">a</seg>\nb</seg>\n</doc>\n' "3: </seg> without an opening <seg>"
bad_sgm opentag '<doc>\n<seg id="1" a</seg>\n</doc>\n' "2: broken <seg> tag"
printf '<doc>\n<seg id="1">a &amp; b</seg>\n<seg id="2">\nc</seg></doc>\n' > good.sgm
expect 0 "" "$NMT" translate -m $ckpt -i good.sgm

# an over-long line is cut to decode.max_src_len tokens with a warning; the others are not
awk 'BEGIN { print "abc def"; s = "abc"; for (i = 0; i < 5000; i++) s = s " fed"; print s;
             print "cab" }' > long.en
for n in 1024 3; do  # the default, then --max-src-len 3
    flags=()
    [ $n = 1024 ] || flags=(--max-src-len $n)
    "$NMT" translate -m $ckpt -i long.en "${flags[@]}" > long.hyp 2> long.err
    rc=$?
    check "translate of a 5000-word line (max_src_len $n): exit 0 and 3 output lines" \
        test $rc -eq 0 -a "$(wc -l < long.hyp)" -eq 3
    check "warning naming the line cut to $n tokens" grep -q \
        "warning: long.en: line 2 has [0-9]* tokens; translating its first $n (decode.max_src_len)" \
        long.err
    [ $n = 3 ] || check "only the over-long line is cut" test "$(grep -c warning long.err)" -eq 1
done
# scoring refuses an over-long pair (a cut sentence's score is not its score), naming the line
expect 1 "long.en: line 2 has" "$NMT" score -m $ckpt --src long.en --ref long.en
expect 1 "more than decode.max_src_len (1024): remove the pair or raise --max-src-len" \
    "$NMT" score -m $ckpt --src long.en --ref long.en
printf 'abc def\nfed\ncab\n' > short.en
expect 1 "long.en: line 2 has" "$NMT" score -m $ckpt --src short.en --ref long.en
expect 0 "3 sentences" "$NMT" score -m $ckpt --src short.en --ref short.en --max-src-len 8

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
