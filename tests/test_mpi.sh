#!/usr/bin/env bash
# test_mpi.sh NMT CKPT_PARAMS_DIFF MPIRUN: data-parallel training under Open MPI.
#   - 2 ranks x 1 thread for 20 updates equal 1 rank with accum 2: the same loss at every update
#     and the same validation, the parameters equal to float rounding (not bit-identical: one
#     rank sums two batches' gradients in one buffer, two ranks sum two buffers); the runs keep a
#     moving average of the parameters, which validation and the checkpoints use on every rank
#   - the job killed (kill -9 of mpirun) and resumed under mpirun ends bit-identical to an
#     uninterrupted 2-rank run; so does one forced onto TCP (--mca btl self,tcp)
#   - a 2-rank checkpoint resumed by 1 rank says so and goes on from the same data position
#   - ranks with different configurations are refused at start-up, naming the key; a rank that
#     dies ends the job; a rank that hangs makes the others stop after train.dist_timeout
set -euo pipefail
NMT=$1 DIFF=$2 MPIRUN=$3
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory
# CI runs as root; 2 ranks on any number of cores; no single-copy shared memory (it needs
# ptrace rights that containers often lack)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
# keep its plugins loaded at exit, so that leak reports name them and the suppressions apply
export OMPI_MCA_mca_base_component_disable_dlclose=1
# Open MPI's own allocations outlive MPI_Finalize; the leak check (ASan builds) keeps to ours:
# full stacks (its libraries lack frame pointers) that the suppressions can match
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan_mpi.supp:print_suppressions=0"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:fast_unwind_on_malloc=0"
fail() { echo "FAIL: $*"; exit 1; }
mpi() { "$MPIRUN" -np 2 --bind-to none "$@"; }

tiny_corpus 700 600
dropout_model_config
cat >> cfg.yaml <<YAML
train: {run_dir: run, batch_tokens: 300, max_updates: 20, save_freq: 5, keep_checkpoints: 5,
        valid_freq: 10, disp_freq: 1, lr: 0.003, warmup: 10, threads: 1, check_freq: 5,
        gemm: blocked, ema_decay: 0.9}
decode: {max_len_a: 1.2, max_len_b: 4, valid_beam: 2}
YAML
# "update loss nll gnorm" per logged update; the validation lines' "update nll bleu"
losses() { grep '"type":"train"' "$1" |
           sed 's/.*"update":\([0-9]*\),"loss":\([^,]*\),"nll":\([^,]*\),.*"gnorm":\([^,]*\),.*/\1 \2 \3 \4/' |
           awk '{last[$1] = $0} END {for (u in last) print last[u]}' | sort -n; }
valids() { grep '"type":"valid"' "$1" | sed 's/.*"update":\([0-9]*\),"nll":\([^,]*\),.*"bleu":\([^,]*\),.*/\1 \2 \3/'; }
close() {  # file file tolerance: the same rows, numbers within the relative tolerance
    paste -d' ' "$1" "$2" | awk -v tol="$3" '{n = NF / 2; if ($1 != $(n + 1)) bad = 1
        for (i = 2; i <= n; i++) { d = $i - $(n + i); a = $i < 0 ? -$i : $i
                                   if (d < 0) d = -d; if (d > tol * (a > 1 ? a : 1)) bad = 1 } }
        END { exit bad || NR == 0 }' && [ "$(wc -l < "$1")" = "$(wc -l < "$2")" ]
}

# one rank, accum 2 (the data is prepared here, once)
"$NMT" train -c cfg.yaml --set train.accum=2 --set train.run_dir=one > one.out 2>&1 ||
    { cat one.out; fail "one rank with accum 2"; }
# two ranks, accum 1
mpi "$NMT" train -c cfg.yaml --set train.run_dir=two > two.out 2>&1 || { cat two.out; fail "two ranks"; }
grep -q "2 ranks (.*) x 1 threads" two.out || fail "the log names ranks x threads: $(grep starting two.out)"
[ "$(grep -c '^\[train\] starting' two.out)" = 1 ] || fail "only rank 0 logs: $(grep starting two.out)"
grep -q '"sync_wait":' two/train.jsonl || fail "no sync_wait in train.jsonl"
# (the leak check of a 2-rank run is done; with full stacks it is slow, and the runs below take
# the same paths)
export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
losses one/train.jsonl > one.losses
losses two/train.jsonl > two.losses
[ "$(wc -l < two.losses)" = 20 ] || fail "expected 20 logged updates, got $(wc -l < two.losses)"
close one.losses two.losses 1e-4 || fail "losses of 2 ranks and 1 rank x accum 2 differ: $(paste one.losses two.losses)"
valids one/train.jsonl > one.valid
valids two/train.jsonl > two.valid
close one.valid two.valid 1e-4 || fail "validation differs: $(paste one.valid two.valid)"
# float-close: Adam divides by the root of the squared gradients, so where those are tiny it
# turns rounding differences into visible ones; the key biases' true gradient is zero, so theirs
# is all rounding
"$DIFF" one/checkpoint.u20 two/checkpoint.u20 1e-4 .b_k > diff.out ||
    fail "parameters of 2 ranks and 1 rank x accum 2: $(cat diff.out)"

# the job killed at a random point (kill -9 of mpirun), then resumed under mpirun
(exec "$MPIRUN" -np 2 --bind-to none "$NMT" train -c cfg.yaml --set train.run_dir=k \
    --set train.max_updates=100000 > k1.out 2>&1) &  # exec: $! is mpirun
pid=$!
wait_for_update $pid k/train.jsonl 12 || fail "the run ended before update 12"
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
flock -w 60 k/lock true || fail "the ranks outlive mpirun"  # they go when mpirun has gone
mpi "$NMT" train -c cfg.yaml --set train.run_dir=k > k2.out 2>&1 || { cat k2.out; fail "resume under mpirun"; }
grep -q "resumed at update 1[05]" k2.out || fail "resume point: $(grep resum k2.out)"
"$DIFF" two/checkpoint.u20 k/checkpoint.u20 > diff.out || fail "killed and resumed: $(cat diff.out)"
losses k/train.jsonl > k.losses
diff two.losses k.losses > /dev/null || fail "killed and resumed: other losses"
# the validation at the end runs the moving average, which rank 0 resumed and shared
[ "$(valids two/train.jsonl | tail -1)" = "$(valids k/train.jsonl | tail -1)" ] ||
    fail "killed and resumed: another validation at the end: $(valids k/train.jsonl | tail -1)"

# TCP instead of shared memory
mpi --mca btl self,tcp "$NMT" train -c cfg.yaml --set train.run_dir=tcp > tcp.out 2>&1 ||
    { cat tcp.out; fail "two ranks over TCP"; }
"$DIFF" two/checkpoint.u20 tcp/checkpoint.u20 > diff.out || fail "TCP against shared memory: $(cat diff.out)"

# a 2-rank run continued by 1 rank: an update now takes 1 batch, from the same data position
cp -r two solo
"$NMT" train -c cfg.yaml --set train.run_dir=solo --set train.max_updates=22 > solo.out 2>&1 ||
    { cat solo.out; fail "resume a 2-rank run on 1 rank"; }
grep -q "checkpoint.last was written by a run on 2 ranks, this one has 1" solo.out &&
    grep -q "stopped (max_updates) at update 22" solo.out || fail "rank count change: $(grep train solo.out)"

# ranks that differ are refused at start-up, naming the difference
set +e
"$MPIRUN" -np 1 "$NMT" train -c cfg.yaml --set train.run_dir=mm : \
          -np 1 "$NMT" train -c cfg.yaml --set train.run_dir=mm --set train.lr=0.002 > mm.out 2>&1
status=$?
set -e
[ $status -ne 0 ] || fail "ranks with different configurations were accepted"
grep -q "rank 1 of 2: its configuration differs from rank 0's (rank 0 -> this rank): train.lr: 0.003 -> 0.002" mm.out ||
    fail "mismatch message: $(grep error mm.out)"

# a rank that dies ends the job (with an error, no hang)
(exec "$MPIRUN" -np 2 --bind-to none "$NMT" train -c cfg.yaml --set train.run_dir=dead \
    --set train.max_updates=1000000 > dead.out 2>&1) &
pid=$!
wait_for_update $pid dead/train.jsonl 3 || fail "the run ended before update 3"
kill -9 "$(pgrep -P $pid | tail -1)" 2> /dev/null || true  # (unless the job already ended)
status=0
timeout 120 tail --pid=$pid -f /dev/null || fail "the job outlived a dead rank by 2 minutes"
wait $pid || status=$?
[ $status -ne 0 ] || fail "the job of a dead rank exited 0"

# a rank that hangs (stopped) makes the others stop after train.dist_timeout seconds
(exec "$MPIRUN" -np 2 --bind-to none "$NMT" train -c cfg.yaml --set train.run_dir=hang \
    --set train.max_updates=1000000 --set train.dist_timeout=2 > hang.out 2>&1) &
pid=$!
wait_for_update $pid hang/train.jsonl 3 || fail "the run ended before update 3"
kill -STOP "$(pgrep -P $pid | tail -1)" 2> /dev/null || true
timeout 120 tail --pid=$pid -f /dev/null || fail "the job outlived a hanging rank by 2 minutes"
status=0
wait $pid || status=$?
[ $status -ne 0 ] || fail "the job of a hanging rank exited 0"
grep -q "no answer from the other ranks for 2 s in" hang.out || fail "hang message: $(grep error hang.out)"

echo "test_mpi: all checks passed"
