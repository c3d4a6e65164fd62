#!/usr/bin/env bash
# test_sweep.sh NMT: scripts/sweep-dk.sh on tiny runs of 10 updates: without --seeds one run per
# point and the table as before, with the update of the best checkpoint and the run's validations,
# and the hours at the run's median pace (a pause does not count); with --results the records kept
# apart with the tables beside them, enough to rebuild the table without the run directories; with
# --seeds one run per point and seed (train.seed), per point the mean and standard deviation over
# the seeds, the paired bootstrap of each seed against the baseline of that seed, and finished runs
# reused when it runs again; with --average the same tables for each run's average of its last
# checkpoints.
set -uo pipefail
NMT=$1
sweep="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/sweep-dk.sh"
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory

tiny_corpus 200 170
tiny_config
common=(-c cfg.yaml --src valid.en --ref valid.de --set decode.beam=2 --set train.max_updates=10
        --set train.save_freq=5 --set train.valid_freq=5 --set train.lr=0.003 --set train.warmup=5)
args=("${common[@]}" --concat 32 --collab 16)
NMT=$NMT bash "$sweep" "${args[@]}" --out one --results one-rec > one.out 2>&1 ||
    { cat one.out; echo "FAIL: sweep"; }
check "without --seeds: one run per point" test -f one/concat-32/eval.json -a -f one/collab-16/eval.json
check "without --seeds: the table as before" grep -q '^| collab | 16 | .* | [0-9.]* ± [0-9.]* | [0-9.]* |' one-rec/sweep.md
# the evaluated checkpoint is the last one the log calls a new best
for run in concat-32 collab-16; do
    want=$(grep 'new best' one/$run/train.log | tail -1 | sed 's/.*| up \([0-9]*\) |.*/\1/')
    mode=${run%-*} dk=${run#*-}
    got=$(awk -F, -v m=$mode -v d=$dk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $1 == m && $2 == d { print $c["best_update"] }' one-rec/sweep.csv)
    check "without --seeds: $run's best checkpoint at update $got, the log's last best $want" \
        test -n "$want" -a "$got" = "$want"
    # the run's validations in the table: BLEU at the best checkpoint, the last NLL
    want=$(/usr/bin/python3 -c "import json, sys
v = [r for r in map(json.loads, open(sys.argv[1])) if r['type'] == 'valid']
print([r for r in v if r['best']][-1]['bleu'], v[-1]['nll'])" one/$run/train.jsonl)
    got=$(awk -F, -v m=$mode -v d=$dk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $1 == m && $2 == d { print $c["best_valid_bleu"], $c["last_valid_nll"] }' one-rec/sweep.csv)
    check "without --seeds: $run's validation BLEU at its best and last NLL ($got, want $want)" \
        test -n "$want" -a "$got" = "$want"
    check "--results: $run's record kept apart" \
        test -f one-rec/$run/eval.json -a -f one-rec/$run/test.hyp -a -f one-rec/$run/train.json
done
# hours at the run's median pace: the run's log given an even pace of 0.25 s per update (its
# measured times depend on the machine's load), then an hour's pause after its first line (its
# later elapsed times shifted), gives the same hours
NMT=$NMT bash "$sweep" "${common[@]}" --set train.disp_freq=1 --concat 32 --out paced \
    --results paced-rec > paced.out 2>&1 || { cat paced.out; echo "FAIL: sweep, a line per update"; }
retime() {  # retime LOG PAUSE_S: elapsed = 0.25 s per update, PAUSE_S more after the first line
    /usr/bin/python3 - "$@" <<'PY'
import json, sys
log = [json.loads(line) for line in open(sys.argv[1])]
first = next(i for i, r in enumerate(log) if r["type"] == "train")
for i, r in enumerate(log):
    if "elapsed" in r and "update" in r:
        r["elapsed"] = 0.25 * r["update"] + (float(sys.argv[2]) if i > first else 0)
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in log))
PY
}
retime paced/concat-32/train.jsonl 0
NMT=$NMT bash "$sweep" "${common[@]}" --concat 32 --out paced --results even-rec > even.out \
    2>&1 || { cat even.out; echo "FAIL: sweep of an evenly paced run"; }
retime paced/concat-32/train.jsonl 3600
NMT=$NMT bash "$sweep" "${common[@]}" --concat 32 --out paced --results paused-rec > paused.out \
    2>&1 || { cat paused.out; echo "FAIL: sweep of a paused run"; }
column_of() {  # column_of CSV NAME: the column NAME of the CSV's one row
    awk -F, -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c[k] }' "$1"
}
hours_of() { column_of "$1" best_hours; }
best_of() { column_of "$1" best_update; }
check "hours at the median pace: 0.25 s per update to update $(best_of even-rec/sweep.csv) is \
$(hours_of even-rec/sweep.csv)" /usr/bin/python3 -c "import sys
sys.exit(abs(float(sys.argv[1]) - 0.25 * int(sys.argv[2]) / 3600) > 1e-9)" \
    "$(hours_of even-rec/sweep.csv)" "$(best_of even-rec/sweep.csv)"
check "hours at the median pace: a paused run's as before ($(hours_of paused-rec/sweep.csv))" \
    test -n "$(hours_of even-rec/sweep.csv)" -a "$(hours_of paused-rec/sweep.csv)" = \
    "$(hours_of even-rec/sweep.csv)"
# the records alone rebuild the table: on another machine, without the run directories
mv one-rec/sweep.csv first.csv && rm -rf one
NMT=$NMT bash "$sweep" "${args[@]}" --out one --results one-rec > rec.out 2>&1 ||
    { cat rec.out; echo "FAIL: sweep from its records"; }
check "--results: recorded points are not trained again" test "$(grep -c ': done$' rec.out)" -eq 2 -a \
    "$(grep -c 'training in' rec.out)" -eq 0
check "--results: the same table from the records" cmp -s first.csv one-rec/sweep.csv
# a baseline alone has no paired bootstrap; its table has the rest
cp -r one-rec solo-rec
NMT=$NMT bash "$sweep" "${common[@]}" --concat 32 --out one --results solo-rec > solo.out 2>&1 ||
    { cat solo.out; echo "FAIL: sweep of a baseline alone"; }
check "a baseline alone: its table without a bootstrap" \
    grep -q '^| concat | 32 | .* | [0-9.]* | [0-9.]* | - | - | [0-9]* |' solo-rec/sweep.md
expect 1 "is not here" \
    env NMT="$NMT" bash "$sweep" "${args[@]}" --out one --results one-rec --average 2

NMT=$NMT bash "$sweep" "${args[@]}" --seeds 1,2 --out seeds --average 2 > seeds.out 2>&1 ||
    { cat seeds.out; echo "FAIL: sweep --seeds"; }
for run in concat-32-seed1 concat-32-seed2 collab-16-seed1 collab-16-seed2; do
    check "--seeds: $run evaluated" test -f seeds/$run/eval.json
done
check "--seeds: train.seed set per run" grep -q "seed: 2" seeds/collab-16-seed2/config.yaml
check "--seeds: a paired bootstrap per seed" test -f seeds/paired-seed1.json -a -f seeds/paired-seed2.json
check "--seeds: every run in sweep-seeds.csv" test "$(grep -c '^[12],' seeds/sweep-seeds.csv)" -eq 4
# the summary's mean and sample standard deviation are those of the per-seed BLEU and chrF
for col in bleu chrf; do
    awk -F, -v col=$col 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $2 == "collab" { x[++n] = $c[col] } END {
        m = (x[1] + x[2]) / 2; printf "%.4f %.4f\n", m, sqrt((x[1] - m)^2 + (x[2] - m)^2) }' \
        seeds/sweep-seeds.csv > want.txt
    awk -F, -v col=$col 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $1 == "collab" { printf "%.4f %.4f\n", $c[col], $c[col "_sd"] }' seeds/sweep.csv > got.txt
    check "--seeds: $col mean and sd over the seeds ($(cat got.txt), want $(cat want.txt))" cmp -s got.txt want.txt
done
# each seed's p-value is its paired bootstrap against the baseline of the same seed, for the
# best checkpoints and for the averages
for kind in "" -avg2; do
    for seed in 1 2; do
        "$NMT" bleu valid.de -i seeds/{concat-32,collab-16}-seed$seed/test$kind.hyp \
            --paired-bs -m bleu -f json > p$seed.json 2>/dev/null
        p=$(/usr/bin/python3 -c "import json, sys
print('%.4f' % json.load(open(sys.argv[1]))[1]['BLEU']['p_value'])" p$seed.json)
        check "--seeds: seed $seed's p-value against its own baseline ($p, sweep$kind)" \
            grep -q "^collab,16,.*,\([0-9.;]*;\)\?$p\(;[0-9.]*\)\?," seeds/sweep$kind.csv
    done
    check "--seeds: mean ± sd in sweep$kind.md" grep -q \
        '^| collab | 16 | .* | [0-9.]* ± [0-9.]* | [0-9.]* ± [0-9.]* | 1: ' seeds/sweep$kind.md
done
# --average 2: the average of checkpoints 5 and 10 evaluated, with the run's last update
"$NMT" average -o avg.ckpt seeds/collab-16-seed2/checkpoint.u{5,10} > /dev/null 2>&1
"$NMT" eval -m avg.ckpt --src valid.en --ref valid.de -o avg.hyp > avg.json 2> /dev/null
check "--average: the average of the last 2 checkpoints evaluated" \
    cmp -s avg.hyp seeds/collab-16-seed2/test-avg2.hyp
check "--average: its BLEU in sweep-avg2-seeds.csv" grep -q "^2,collab,16,[0-9]*,[0-9]*,$(
    /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['bleu'])" avg.json)," \
    seeds/sweep-avg2-seeds.csv
check "--average: the run's last update in sweep-avg2.csv" \
    test "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $1 == "collab" { print $c["last_update"] }' seeds/sweep-avg2.csv)" = 10
if /usr/bin/python3 -c "import matplotlib" 2> /dev/null; then
    check "--seeds: the plot" test -s seeds/sweep.png
fi
NMT=$NMT bash "$sweep" "${args[@]}" --seeds 1,2 --out seeds > again.out 2>&1
check "--seeds: finished runs are reused" test "$(grep -c ': done$' again.out)" -eq 4 -a \
    "$(grep -c 'training in' again.out)" -eq 0
NMT=$NMT bash "$sweep" "${args[@]}" --seeds 1,2 --out seeds --average 2 > again.out 2>&1
check "--average: evaluated averages are reused" \
    test "$(grep -c 'evaluating the average' again.out)" -eq 0 -a -s seeds/sweep-avg2.md
expect 2 "--average takes a number" bash "$sweep" "${args[@]}" --average 0
expect 2 "--seeds takes integers" bash "$sweep" "${args[@]}" --seeds 1,x

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
