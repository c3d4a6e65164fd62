#!/usr/bin/env bash
# test_tempfiles.sh NMT: no "<file>.tmp.<pid>" temporary is left behind by a write that fails or
# is cut short: a fatal error with temporaries open (prepare), a file size limit (SIGXFSZ, or
# EFBIG when the signal is ignored) in prepare, average and export, SIGTERM while prepare encodes,
# and, where this machine lets the test mount a small tmpfs, a full disk. Temporaries of processes
# that were killed (kill -9 cannot be caught) are removed by the next `nmt prepare` / `nmt train`
# on the directory, one log line each, while those of live processes are kept.
set -euo pipefail
NMT=$1
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory
fail() { echo "FAIL: $*"; exit 1; }
temps() { find "$@" -name '*.tmp.[0-9]*' 2> /dev/null | sort; }
no_temps() {  # what dirs...
    local what=$1 left
    shift
    left=$(temps "$@")
    [ -z "$left" ] || fail "$what left temporary files: $left"
}

tiny_corpus 700 600  # made-up words, the target reverses the source
config() {  # data-dir run-dir train-src valid-tgt
    cat <<YAML
data:
  dir: $1
  train: [{src: $3, tgt: train.de}]
  valid: [{src: valid.en, tgt: $4}]
  vocab_size: 300
  spm_input_sentences: 0
model: {d_model: 32, heads: 4, ffn: 64, enc_layers: 2, dec_layers: 2}
train: {run_dir: $2, batch_tokens: 300, max_updates: 12, save_freq: 6, keep_checkpoints: 2,
        valid_freq: 12, disp_freq: 4, lr: 0.003, warmup: 10, threads: 2}
decode: {max_len_a: 1.2, max_len_b: 4, valid_beam: 1}
YAML
}
config data run train.en valid.de > cfg.yaml

# a fatal error in the inputs while prepare holds the temporaries of valid.src and valid.tgt
head -n 99 valid.de > bad.de
printf 'ABC \xff\xfe DEF\n' >> bad.de
config data-bad run-bad train.en bad.de > bad.yaml
if "$NMT" prepare -c bad.yaml > a.out 2>&1; then fail "invalid UTF-8 in data.valid was accepted"; fi
grep -q "bad.de:100: invalid UTF-8" a.out || fail "message: $(grep error a.out)"
no_temps "a fatal error in prepare" data-bad
passed=$((passed + 1))

# a file size limit, by default a signal (SIGXFSZ, exit 128 + 25), then with the signal ignored
# (the write fails with EFBIG): twice each, as a user retrying would
for round in 1 2; do
    set +e
    {   # (bash reports the death by SIGXFSZ on stderr)
        (ulimit -f 2; exec "$NMT" prepare -c cfg.yaml) > b.out 2>&1
        status=$?
        (trap '' XFSZ; ulimit -f 2; exec "$NMT" prepare -c cfg.yaml) > c.out 2>&1
        status_ignored=$?
    } 2> /dev/null
    set -e
    [ $status -eq 153 ] || fail "prepare under a 2 KB limit: status $status: $(tail -2 b.out)"
    [ $status_ignored -eq 1 ] && grep -q "File too large" c.out ||
        fail "prepare under a 2 KB limit, SIGXFSZ ignored: status $status_ignored: $(tail -2 c.out)"
    no_temps "prepare stopped by a file size limit (round $round)" data
done
passed=$((passed + 1))

"$NMT" train -c cfg.yaml > d.out 2>&1 || { tail -5 d.out; fail "training"; }
[ -f run/checkpoint.u6 ] && [ -f run/checkpoint.u12 ] || fail "no periodic checkpoints"
for round in 1 2; do
    set +e
    {
        (ulimit -f 100; exec "$NMT" average -o avg.ckpt run/checkpoint.u6 run/checkpoint.u12) > e.out 2>&1
        s1=$?
        (trap '' XFSZ; ulimit -f 100; exec "$NMT" average -o avg.ckpt run/checkpoint.u6 run/checkpoint.u12) > f.out 2>&1
        s2=$?
        (ulimit -f 100; exec "$NMT" export -m run/checkpoint.last -o model.safetensors) > g.out 2>&1
        s3=$?
        (trap '' XFSZ; ulimit -f 100; exec "$NMT" export -m run/checkpoint.last -o model.safetensors) > h.out 2>&1
        s4=$?
    } 2> /dev/null
    set -e
    [ $s1 -eq 153 ] && [ $s3 -eq 153 ] || fail "average/export under a 100 KB limit: status $s1, $s3"
    [ $s2 -eq 1 ] && grep -q "avg.ckpt.tmp.*File too large" f.out || fail "average, EFBIG: $s2 $(cat f.out)"
    [ $s4 -eq 1 ] && grep -q "model.safetensors.tmp.*File too large" h.out || fail "export, EFBIG: $s4 $(cat h.out)"
    no_temps "average or export stopped by a file size limit (round $round)" .
    [ ! -e avg.ckpt ] && [ ! -e model.safetensors ] || fail "a partial output under the final name"
done
passed=$((passed + 1))

# SIGTERM while prepare encodes: the training source is a FIFO, fed once for the checksums and
# once for the scan; the encoding pass then waits for its third opening, with train.tok.tmp.PID open
mkfifo fifo.en
config data-fifo run-fifo fifo.en valid.de > fifo.yaml
"$NMT" prepare -c fifo.yaml > i.out 2>&1 &
pid=$!
# (no deadlines: ctest's timeout is the guard, a busy machine only makes the waits longer)
feed() {  # one pass of train.en through the FIFO, then wait until nmt has closed it
    cat train.en > fifo.en
    while ls -l /proc/$pid/fd 2> /dev/null | grep -q fifo.en; do sleep 0.05; done
}
feed
feed
wait_while_alive $pid test -e data-fifo/train.tok.tmp.$pid ||
    fail "prepare ended before it encoded: $(tail -3 i.out)"
kill -TERM $pid
set +e
wait $pid
status=$?
set -e
[ $status -eq 143 ] || fail "prepare after SIGTERM: status $status"
no_temps "SIGTERM while prepare encodes" data-fifo
passed=$((passed + 1))

# temporaries of killed processes are removed by the next run on the directory; those of a live
# process are not
sh -c 'exit 0' &
dead=$!
wait $dead
kill -0 $dead 2> /dev/null && fail "process $dead should be gone"
sleep 600 &
live=$!
echo partial > data/train.tok.tmp.$dead
echo partial > data/valid.src.tmp.$live
echo partial > run/checkpoint.last.tmp.$dead
echo partial > run/checkpoint.u6.tmp.$live
echo mine > run/notes.tmp.txt
"$NMT" train -c cfg.yaml > j.out 2>&1 || { tail -3 j.out; fail "resuming a finished run"; }
grep -q "removed data/train.tok.tmp.$dead, a temporary file of process $dead" j.out &&
    grep -q "removed run/checkpoint.last.tmp.$dead, a temporary file of process $dead" j.out ||
    fail "no log line for the stale temporaries: $(head -5 j.out)"
[ "$(temps data run)" = "$(printf 'data/valid.src.tmp.%s\nrun/checkpoint.u6.tmp.%s' $live $live)" ] ||
    fail "after the sweep: $(temps data run)"
[ -f run/notes.tmp.txt ] || fail "removed a file that is no temporary"
echo partial > data/test.tok.tmp.$dead
"$NMT" prepare -c cfg.yaml > k.out 2>&1 || fail "prepare"
grep -q "removed data/test.tok.tmp.$dead" k.out || fail "prepare did not sweep: $(head -3 k.out)"
kill $live
rm data/valid.src.tmp.$live run/checkpoint.u6.tmp.$live
passed=$((passed + 1))

# a full disk (ENOSPC) on a 1 MB tmpfs, where the test may mount one: in a mount namespace of its
# own, so the mount goes with it however the test ends
mkdir full
if unshare --mount --propagation private sh -c 'mount -t tmpfs tmpfs full' 2> /dev/null; then
    export NMT
    export -f fail temps no_temps config
    unshare --mount --propagation private bash -euo pipefail -c '
        mount -t tmpfs -o size=1M tmpfs full
        head -c 1000000 /dev/zero > full/filler
        config full/data full/run train.en valid.de > full.yaml
        config data full/run train.en valid.de > full-run.yaml
        for round in 1 2; do
            if "$NMT" prepare -c full.yaml > l.out 2>&1; then fail "prepare on a full disk"; fi
            grep -q "No space left on device" l.out || fail "prepare, full disk: $(tail -2 l.out)"
            if "$NMT" average -o full/avg.ckpt run/checkpoint.u6 run/checkpoint.u12 > m.out 2>&1
            then fail "average on a full disk"; fi
            if "$NMT" export -m run/checkpoint.last -o full/model.safetensors > m2.out 2>&1
            then fail "export on a full disk"; fi
            if "$NMT" train -c full-run.yaml > n.out 2>&1; then fail "training on a full disk"; fi
            no_temps "a full disk (round $round)" full
        done'
    passed=$((passed + 1))
else
    echo "(no tmpfs can be mounted here: the full-disk case is skipped)"
fi

echo "$passed passed, 0 failed"
