#!/usr/bin/env bash
# test_convert.sh NMT: scripts/convert-dk.sh on tiny concat models (800 updates, seeds 1 and 2):
# per seed the control and each converted model before and after fine-tuning recorded; the
# converted record is `nmt reparam`'s model evaluated as it is, the fine-tunes start from the
# converted model (collab attention) and from the concat model; the table's means, standard
# deviations and differences are those of the per-seed records and its p-values the paired
# bootstrap against the same seed's control; without --seeds one model's records in DIR itself;
# recorded models are not fine-tuned again and give the same table; bad arguments are refused with
# the option named.
set -uo pipefail
NMT=$1
convert="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/convert-dk.sh"
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory

tiny_corpus 200 170
tiny_config
# long enough for translations with a BLEU above 0 (about 1.5 s each)
train=(--set train.max_updates=800 --set train.save_freq=400 --set train.valid_freq=400
       --set train.lr=0.005 --set train.warmup=20)
for seed in 1 2; do
    "$NMT" train -c cfg.yaml "${train[@]}" --set train.seed=$seed --set train.run_dir=src$seed \
        > src$seed.out 2>&1 || { cat src$seed.out; echo "FAIL: training seed $seed"; }
done
# the fine-tunes: 6 updates from the model they start with
ft=(--set train.max_updates=6 --set train.save_freq=3 --set train.valid_freq=3 --set train.lr=0.002
    --set train.warmup=2)
args=(-c cfg.yaml "${ft[@]}" --model 'src{seed}/checkpoint.best' --dk 8,16 --valid-src valid.en
      --valid-ref valid.de --src valid.en --ref valid.de --set decode.beam=2 --seeds 1,2)
NMT=$NMT bash "$convert" "${args[@]}" --out conv --results rec > conv.out 2>&1 ||
    { cat conv.out; echo "FAIL: convert-dk.sh"; }
for seed in 1 2; do
    for name in control collab{8,16}-{converted,finetuned}; do
        check "seed $seed: $name recorded" test -f rec/seed$seed/$name.valid.json -a \
            -f rec/seed$seed/$name.test.json -a -f rec/seed$seed/$name.test.hyp
    done
    check "seed $seed: the fine-tunes' logs kept" test -f rec/seed$seed/control.train.log -a \
        -f rec/seed$seed/collab16-finetuned.train.log
    check "seed $seed: the reparam log kept" grep -q "relative" rec/seed$seed/collab16.reparam.log
    # the converted record is reparam's model itself, before any fine-tuning
    "$NMT" reparam -m src$seed/checkpoint.best --dk 16 -o own$seed.ckpt > /dev/null 2>&1
    "$NMT" eval -m own$seed.ckpt --src valid.en --ref valid.de -o own$seed.hyp > /dev/null 2>&1
    check "seed $seed: the converted record is reparam's model as it is" \
        cmp -s own$seed.hyp rec/seed$seed/collab16-converted.test.hyp
    check "seed $seed: the collab fine-tune starts from the converted model" \
        grep -q "init_from: \"conv/seed$seed/collab16.ckpt\"" \
        conv/seed$seed/collab16-finetuned/config.yaml
    check "seed $seed: ... with collab attention of D~k 16" \
        grep -q '"attention":"collab","dk":16' rec/seed$seed/collab16-finetuned.test.json
    check "seed $seed: the control starts from the concat model" \
        grep -q "init_from: \"src$seed/checkpoint.best\"" conv/seed$seed/control/config.yaml
    check "seed $seed: ... and stays concat" \
        grep -q '"attention":"concat"' rec/seed$seed/control.test.json
done
# the table from the records: means, sample standard deviations, differences to the control
/usr/bin/python3 - rec > want.csv <<'PY'
import json, statistics, sys
for name in ("control", "collab16-finetuned"):
    row = []
    for key in ("valid", "test"):
        xs = [json.load(open(f"{sys.argv[1]}/seed{s}/{name}.{key}.json"))["bleu"] for s in (1, 2)]
        cs = [json.load(open(f"{sys.argv[1]}/seed{s}/control.{key}.json"))["bleu"] for s in (1, 2)]
        ds = [x - c for x, c in zip(xs, cs)]
        # values that tell a mean from a standard deviation, or a record from another's (a
        # tiny model's BLEU may be 0)
        assert xs[0] != xs[1] and statistics.mean(xs) != statistics.stdev(xs), xs
        distinct = ds[0] != ds[1] and statistics.mean(ds) != statistics.stdev(ds)
        assert name == "control" or distinct, ds
        row += [statistics.mean(xs), statistics.stdev(xs)]
        row += [statistics.mean(ds), statistics.stdev(ds)]
    print(name, " ".join(f"{v:.6f}" for v in row))
PY
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $1 == "control" || $1 == "collab16-finetuned" {
        printf "%s %.6f %.6f %.6f %.6f", $1, $c["valid"], $c["valid_sd"], $c["dvalid"],
            $c["dvalid_sd"]
        printf " %.6f %.6f %.6f %.6f\n", $c["test"], $c["test_sd"], $c["dtest"], $c["dtest_sd"] }' \
    rec/convert.csv > got.csv
check "the means, standard deviations and differences of the per-seed records \
($(tr '\n' ' ' < got.csv))" \
    cmp -s want.csv got.csv
# each seed's p-value: the paired bootstrap against that seed's control
for seed in 1 2; do
    "$NMT" bleu valid.de -i rec/seed$seed/{control,collab8-finetuned}.test.hyp --paired-bs -m bleu \
        -f json > p$seed.json 2>/dev/null
    p=$(/usr/bin/python3 -c "import json, sys
print('%.4f' % json.load(open(sys.argv[1]))[1]['BLEU']['p_value'])" p$seed.json)
    check "seed $seed's p-value against its own control ($p)" \
        grep -Eq "^collab8-finetuned,.*,([0-9.]+;)?$p(;[0-9.]+)?$" rec/convert.csv
done
check "the table in markdown" \
    grep -q '^| collab8-converted | collab | 8 | .* | [0-9.]* ± [0-9.]* |' \
    rec/convert.md
# without --seeds: one model, its records in DIR itself, the table without spreads
NMT=$NMT bash "$convert" -c cfg.yaml "${ft[@]}" --model src1/checkpoint.best --dk 8 --valid-src \
    valid.en --valid-ref valid.de --src valid.en --ref valid.de --out one --results one-rec \
    > one.out 2>&1 || { cat one.out; echo "FAIL: convert-dk.sh without --seeds"; }
check "without --seeds: the records in DIR" test -f one-rec/control.test.json -a \
    -f one-rec/collab8-finetuned.test.json -a -f one-rec/paired.json
check "without --seeds: the table without spreads" \
    grep -q '^| collab8-finetuned | collab | 8 | [0-9,]* | [0-9.]* | [0-9.]* | [0-9.]* |' \
    one-rec/convert.md
# the records alone give the same table, without the run directories or the models
mv rec/convert.csv first.csv && rm -rf conv src1 src2
NMT=$NMT bash "$convert" "${args[@]}" --out conv --results rec > again.out 2>&1 ||
    { cat again.out; echo "FAIL: convert-dk.sh from its records"; }
check "recorded models are not converted or fine-tuned again" \
    test "$(grep -c 'fine-tuning\|converting' again.out)" -eq 0
check "the same table from the records" cmp -s first.csv rec/convert.csv
# a D~k not recorded yet needs the model
expect 1 "the model to convert, src1/checkpoint.best, is not there" \
    env NMT="$NMT" bash "$convert" "${args[@]/8,16/4}" --out conv --results rec
expect 2 "--model must name each seed's model with {seed}" \
    env NMT="$NMT" bash "$convert" -c cfg.yaml --model m.ckpt --dk 8 --valid-src a --valid-ref b \
    --src a --ref b --seeds 1,2
expect 2 "--model names a model per seed ({seed}): give --seeds" \
    env NMT="$NMT" bash "$convert" -c cfg.yaml --model 'm{seed}.ckpt' --dk 8 --valid-src a \
    --valid-ref b --src a --ref b
expect 2 "--dk takes widths separated by commas, got '8;16'" \
    env NMT="$NMT" bash "$convert" -c cfg.yaml --model m.ckpt --dk '8;16' --valid-src a \
    --valid-ref b --src a --ref b
expect 2 "--valid-src, --valid-ref, --src and --ref are required" \
    env NMT="$NMT" bash "$convert" -c cfg.yaml --model m.ckpt --dk 8
echo "passed $passed, failed $failed"
[ "$failed" -eq 0 ]
