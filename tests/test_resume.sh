#!/usr/bin/env bash
# test_resume.sh NMT CKPT_PARAMS_DIFF: training that is killed (kill -9 at a random point, and in
# the middle of writing checkpoint.last, whose partial temporary the resumed run removes) and
# resumed ends bit-identical to an uninterrupted run: the same final parameters and the same loss
# at every update, as does a run that validates only at the end, and one with a moving average of
# the parameters, which it resumes exactly. A run resumes only with the same model.
# Also: SIGTERM stops cleanly with exit 3,
# a corrupted checkpoint.last is refused with a clear message naming the intact checkpoints to go
# on from, keep_checkpoints keeps the newest checkpoint.uN, and train.init_from fine-tunes.
set -euo pipefail
NMT=$1 DIFF=$2  # DIFF: ckpt_params_diff
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory

tiny_corpus 700 600  # a synthetic parallel corpus: made-up words, the target reverses the source
dropout_model_config
cat >> cfg.yaml <<YAML
train: {run_dir: run, batch_tokens: 300, max_updates: 24, save_freq: 6, keep_checkpoints: 2,
        valid_freq: 12, disp_freq: 1, lr: 0.003, warmup: 10, threads: 2}
decode: {max_len_a: 1.2, max_len_b: 4, valid_beam: 1}
YAML
fail() { echo "FAIL: $*"; exit 1; }
losses() { grep '"type":"train"' "$1" | sed 's/.*"update":\([0-9]*\),"loss":\([^,]*\),.*/\1 \2/' |
           awk '{last[$1] = $2} END {for (u in last) print u, last[u]}' | sort -n; }

# A: uninterrupted
"$NMT" train -c cfg.yaml > a.out 2>&1 || { cat a.out; fail "uninterrupted run"; }
mv run a

# B: killed while writing its 4th checkpoint (checkpoint.last at update 12), then resumed
set +e
NMT_FAULT_CHECKPOINT_KILL=4 "$NMT" train -c cfg.yaml > b1.out 2>&1
status=$?
set -e
[ $status -eq 137 ] || { cat b1.out; fail "the fault injection should kill the run (status $status)"; }
grep -q "killed while writing run/checkpoint.last" b1.out || fail "killed elsewhere: $(tail -3 b1.out)"
ls run/checkpoint.last.tmp.* > /dev/null 2>&1 || fail "no partial checkpoint was left behind"
"$NMT" train -c cfg.yaml > b2.out 2>&1 || { cat b2.out; fail "resume after a kill during a write"; }
grep -q "resumed at update 6" b2.out || fail "did not resume from update 6: $(grep resum b2.out)"
grep -q "removed run/checkpoint.last.tmp.[0-9]*, a temporary file of process" b2.out &&
    ! ls run/checkpoint.last.tmp.* > /dev/null 2>&1 || fail "the killed run's partial checkpoint stays"
mv run b

# C: kill -9 at a random point, then resumed
"$NMT" train -c cfg.yaml > c1.out 2>&1 &
pid=$!
wait_for_update $pid run/train.jsonl 15 || fail "the run ended before update 15"
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
"$NMT" train -c cfg.yaml > c2.out 2>&1 || { cat c2.out; fail "resume after kill -9"; }
grep -q "resumed at update 1[28]" c2.out || fail "resume point: $(grep resum c2.out)"
mv run c

for r in b c; do
    cmp -s a/checkpoint.u24 $r/checkpoint.u24 || fail "run $r ends with different parameters"
    diff <(losses a/train.jsonl) <(losses $r/train.jsonl) > /dev/null || fail "run $r has different losses"
done
[ "$(losses a/train.jsonl | wc -l)" -eq 24 ] || fail "expected 24 logged updates"

# validation in the middle (which releases the activations' pages and decodes in memory of its
# own) leaves the training that follows it untouched: a run validating only at the end has the
# same loss at every update
"$NMT" train -c cfg.yaml --set train.valid_freq=0 --set train.run_dir=nv > nv.out 2>&1 ||
    { cat nv.out; fail "run validating only at the end"; }
grep -q '"type":"valid",.*"update":12,' a/train.jsonl &&
    ! grep -q '"type":"valid",.*"update":12,' nv/train.jsonl ||
    fail "run a should validate at update 12, run nv only at the end"
diff <(losses a/train.jsonl) <(losses nv/train.jsonl) > /dev/null ||
    fail "validating at update 12 changed the training after it"

# a moving average of the parameters (train.ema_decay) leaves the training as it is: the same loss
# at every update. The checkpoints hold the average; checkpoint.last also holds the training
# weights, so a run killed while writing one resumes exactly (the average too), and a run resumed
# without the average continues from the training weights as if it had never had one.
ema=(--set train.ema_decay=0.9)
"$NMT" train -c cfg.yaml "${ema[@]}" > ma.out 2>&1 || { cat ma.out; fail "run with an average"; }
mv run ma
diff <(losses a/train.jsonl) <(losses ma/train.jsonl) > /dev/null ||
    fail "the moving average changed the training"
! "$DIFF" a/checkpoint.u24 ma/checkpoint.u24 1e-5 > /dev/null ||
    fail "checkpoint.u24 holds the parameters, not their average"
"$NMT" train -c cfg.yaml --set train.ema_decay=1e-6 --set train.run_dir=mc > mc.out 2>&1 ||
    { cat mc.out; fail "run with an average of decay 1e-6"; }
"$DIFF" a/checkpoint.u24 mc/checkpoint.u24 1e-5 > /dev/null ||
    fail "an average of decay 1e-6 is not the parameters: $("$DIFF" a/checkpoint.u24 mc/checkpoint.u24)"
set +e
NMT_FAULT_CHECKPOINT_KILL=4 "$NMT" train -c cfg.yaml "${ema[@]}" > mb1.out 2>&1
status=$?
set -e
[ $status -eq 137 ] || { cat mb1.out; fail "the fault injection should kill the run with an average"; }
"$NMT" train -c cfg.yaml "${ema[@]}" > mb2.out 2>&1 || { cat mb2.out; fail "resume with an average"; }
grep -q "resumed at update 6" mb2.out || fail "did not resume from update 6: $(grep resum mb2.out)"
cmp -s ma/checkpoint.u24 run/checkpoint.u24 || fail "a run with an average ends otherwise after a kill"
rm -r run
for r in a ma; do
    cp -r $r run
    "$NMT" train -c cfg.yaml --set train.max_updates=30 > $r-30.out 2>&1 ||
        { cat $r-30.out; fail "resuming $r without an average"; }
    mv run/checkpoint.u30 $r.u30
    rm -r run
done
grep -q "its moving average is dropped" ma-30.out || fail "no word on the dropped average: $(cat ma-30.out)"
cmp -s a.u30 ma.u30 || fail "resumed without its average, a run does not continue its training weights"

# SIGTERM: finishes the update, writes checkpoint.last, exits 3 (interrupted) and says how to
# resume
"$NMT" train -c cfg.yaml --set train.max_updates=100000 > d.out 2>&1 &
pid=$!
wait_for_update $pid run/train.jsonl 3 || fail "the run ended before update 3"
kill -TERM $pid
status=0
wait $pid || status=$?
[ $status -eq 3 ] || fail "SIGTERM should exit 3 (interrupted), not $status"
grep -q "stopped (signal)" d.out && grep -q "resume with the same command" d.out || fail "SIGTERM message"
[ -f run/checkpoint.last ] || fail "no checkpoint.last after SIGTERM"
! ls run/*.tmp.* > /dev/null 2>&1 || fail "temporary files after SIGTERM: $(ls run)"
# keep_checkpoints keeps the newest checkpoint.uN, including those of a stop between save_freq
# updates (by max_updates here, as by a signal or max_time)
"$NMT" train -c cfg.yaml --set train.max_updates=9 --set train.run_dir=k > k1.out 2>&1 ||
    { cat k1.out; fail "run k to update 9"; }
[ -f k/checkpoint.u9 ] || fail "no checkpoint.u9 at the stop: $(ls k)"
"$NMT" train -c cfg.yaml --set train.max_updates=20 --set train.run_dir=k > k2.out 2>&1 ||
    { cat k2.out; fail "run k resumed to update 20"; }
[ "$(ls k | grep '^checkpoint\.u' | tr '\n' ' ')" = "checkpoint.u18 checkpoint.u20 " ] ||
    fail "keep_checkpoints 2 after a stop at update 9: $(ls k)"

# a damaged checkpoint.last is refused, naming the file, and left in place; it is the only file
# with the training state (checkpoint.uN and checkpoint.best hold parameters only), so the run
# cannot continue exactly: the message names the newest intact checkpoint and how to go on from it
printf 'X' | dd of=run/checkpoint.last bs=1 seek=100 conv=notrunc 2> /dev/null
if "$NMT" train -c cfg.yaml > e.out 2>&1; then fail "a corrupted checkpoint was accepted"; fi
grep -q "run/checkpoint.last is corrupted" e.out || fail "message: $(head -3 e.out)"
cp -r a e
printf 'X' | dd of=e/checkpoint.last bs=1 seek=100 conv=notrunc 2> /dev/null
cp e/checkpoint.last damaged.last
if "$NMT" train -c cfg.yaml --set train.run_dir=e > e1.out 2>&1; then fail "resumed a damaged run"; fi
grep -q "e/checkpoint.last is corrupted" e1.out && ! grep -q "remove the run directory" e1.out &&
    grep -q "intact: checkpoint.u24 (newest), checkpoint.u18, checkpoint.best" e1.out &&
    grep -qF -- "--set train.init_from=e/checkpoint.u24 --set train.run_dir=" e1.out ||
    fail "damaged checkpoint.last beside intact ones: $(cat e1.out)"
cmp -s e/checkpoint.last damaged.last || fail "the damaged checkpoint.last was changed"
printf 'X' | dd of=e/checkpoint.u24 bs=1 seek=100 conv=notrunc 2> /dev/null
if "$NMT" train -c cfg.yaml --set train.run_dir=e > e2.out 2>&1; then fail "resumed a damaged run"; fi
grep -q "e/checkpoint.last is corrupted" e2.out &&
    grep -q "intact: checkpoint.u18 (newest), checkpoint.best; damaged: checkpoint.u24" e2.out &&
    grep -qF -- "--set train.init_from=e/checkpoint.u18" e2.out ||
    fail "damaged checkpoint.last and checkpoint.u24: $(cat e2.out)"
"$NMT" train -c cfg.yaml --set train.init_from=e/checkpoint.u18 --set train.run_dir=e-new \
    --set train.max_updates=1 > e3.out 2>&1 || { cat e3.out; fail "the advice does not work"; }
rm e/checkpoint.u18 e/checkpoint.best
if "$NMT" train -c cfg.yaml --set train.run_dir=e > e4.out 2>&1; then fail "resumed a damaged run"; fi
grep -q "e/checkpoint.last is corrupted" e4.out &&
    grep -q "e holds no intact checkpoint.uN or checkpoint.best (damaged: checkpoint.u24)" e4.out &&
    grep -q "move e/checkpoint.last away" e4.out ||
    fail "nothing intact: $(cat e4.out)"

# fine-tuning: train.init_from takes the parameters of a checkpoint, not its step or optimizer;
# its first loss continues where run a ended, far below a fresh model's
"$NMT" train -c cfg.yaml --set train.run_dir=ft --set train.init_from=a/checkpoint.u24 \
    --set train.max_updates=1 > f.out 2>&1 || { cat f.out; fail "train.init_from"; }
grep -q "parameters from a/checkpoint.u24" f.out || fail "init_from message: $(grep train f.out)"
first=$(losses a/train.jsonl | head -1 | cut -d' ' -f2)
end=$(losses a/train.jsonl | tail -1 | cut -d' ' -f2)
tuned=$(losses ft/train.jsonl | head -1 | cut -d' ' -f2)
[ "$(losses ft/train.jsonl | head -1 | cut -d' ' -f1)" = 1 ] || fail "init_from must start at update 1"
awk -v f="$first" -v e="$end" -v t="$tuned" 'BEGIN {exit !(t < (f + e) / 2)}' ||
    fail "init_from loss $tuned: not near run a's last loss $end (first $first)"
if "$NMT" train -c cfg.yaml --set train.run_dir=ft2 --set train.init_from=a/checkpoint.u24 \
    --set model.ffn=48 > g.out 2>&1; then fail "init_from accepted a different model"; fi
grep -q "train.init_from a/checkpoint.u24: " g.out || fail "init_from mismatch message: $(tail -2 g.out)"

# a run resumes only with its own model; dk 0 (the default) is d_model, so naming it is the same
if "$NMT" train -c cfg.yaml --set train.run_dir=a --set train.max_updates=25 \
    --set model.dk=16 > h1.out 2>&1; then fail "resumed with another model"; fi
grep -q "a/checkpoint.last was trained with a different model (model.dk: 32 -> 16)" h1.out ||
    fail "another model's message: $(tail -2 h1.out)"
"$NMT" train -c cfg.yaml --set train.run_dir=a --set train.max_updates=25 \
    --set model.dk=32 > h2.out 2>&1 || { cat h2.out; fail "resume naming dk = d_model"; }
grep -q "resumed at update 24" h2.out || fail "resume point: $(grep resum h2.out)"

echo "12 passed, 0 failed"
