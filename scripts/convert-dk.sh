#!/usr/bin/env bash
# scripts/convert-dk.sh -c BASE.yaml [-c MORE.yaml] --model CONCAT.ckpt --dk 32[,64]
#                       --valid-src V.src --valid-ref V.ref --src TEST.src --ref TEST.ref
#                       [--seeds 1,2,3] [--set key=value ...] [--out runs/convert] [--results DIR]
# Converting a trained model instead of training from scratch: converts the concat model CKPT to
# collab attention with each D~k (`nmt reparam`), fine-tunes each converted model with BASE's
# training settings (the --set ones on top, e.g. train.max_updates=2000 train.lr=0.002), and, as
# the control, fine-tunes CKPT itself the same way; evaluates the control, every converted model
# before and after fine-tuning (each run's checkpoint.best) on the validation and the test set
# (beam and length penalty of the config), and writes (into --results DIR when given, else OUT)
#   convert.md, convert.csv   per model: parameters, validation BLEU, test BLEU and chrF, the
#                             difference to the control on both sets, and per seed the test BLEU
#                             with the paired bootstrap p-value against that seed's control
# --seeds S1,S2: one conversion per seed, of the model named by CKPT with {seed} replaced by the
# seed (e.g. runs/sweep/concat-128-seed{seed}/average-last5.ckpt); the table gives the means and
# sample standard deviations over the seeds. The fine-tuning runs use the config's train.seed.
# A seed's records are SEED/control.*, SEED/collabR-converted.* and SEED/collabR-finetuned.*
# (.valid.json, .test.json, .test.hyp, the fine-tunes' .train.log), SEED/collabR.reparam.log
# (the relative error of every attention module) and SEED/paired.json, under DIR (SEED is seedS,
# or . without --seeds): about 300 KB per seed, small enough to commit. A recorded model is not
# converted, fine-tuned or evaluated again, and a fine-tune that was cut off resumes from its
# checkpoint.last.
# Paths are taken from the current directory. nmt is $NMT, else the one on PATH, else the
# repository's build.
set -euo pipefail
configs=() sets=() model="" dks="" vsrc="" vref="" src="" ref="" seeds="" results=""
out=runs/convert
while [ $# -gt 0 ]; do
    case "$1" in
        -c) configs+=(-c "$2"); shift ;;
        --set) sets+=(--set "$2"); shift ;;
        --model) model=$2; shift ;;
        --dk) dks=$2; shift ;;
        --valid-src) vsrc=$2; shift ;;
        --valid-ref) vref=$2; shift ;;
        --src) src=$2; shift ;;
        --ref) ref=$2; shift ;;
        --seeds) seeds=$2; shift ;;
        --out) out=$2; shift ;;
        --results) results=$2; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "convert-dk.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ ${#configs[@]} -gt 0 ] && [ -n "$model" ] && [ -n "$dks" ] && [ -n "$vsrc" ] && [ -n "$vref" ] &&
    [ -n "$src" ] && [ -n "$ref" ] || { echo "convert-dk.sh: -c, --model, --dk, --valid-src," \
    "--valid-ref, --src and --ref are required (see --help)" >&2; exit 2; }
[[ "$dks" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
    { echo "convert-dk.sh: --dk takes widths separated by commas, got '$dks'" >&2; exit 2; }
[[ -z "$seeds" || "$seeds" =~ ^[0-9]+(,[0-9]+)*$ ]] ||
    { echo "convert-dk.sh: --seeds takes integers separated by commas, got '$seeds'" >&2; exit 2; }
[ -z "$seeds" ] || [[ "$model" == *"{seed}"* ]] ||
    { echo "convert-dk.sh: with --seeds, --model must name each seed's model with {seed}" >&2
      exit 2; }
[ -n "$seeds" ] || [[ "$model" != *"{seed}"* ]] ||
    { echo "convert-dk.sh: --model names a model per seed ({seed}): give --seeds" >&2; exit 2; }
nmt=${NMT:-$(command -v nmt || true)}
[ -n "$nmt" ] || nmt=$(cd "$(dirname "$0")/.." && pwd)/build/release/bin/nmt
tables=${results:-$out}
mkdir -p "$out" "$tables"
IFS=, read -r -a dk_list <<< "$dks"
seed_list=(${seeds//,/ })
[ -n "$seeds" ] || seed_list=("")

# evaluate CKPT REC NAME WORK: CKPT on both sets, into REC/NAME.{valid,test}.json and
# REC/NAME.test.hyp (the validation translations in WORK); the test record is written last
evaluate() {
    local set s r hyp
    for set in valid test; do
        s=$src r=$ref hyp=$2/$3.test.hyp
        [ $set = test ] || s=$vsrc r=$vref hyp=$4/$3.valid.hyp
        "$nmt" eval -m "$1" --src "$s" --ref "$r" -o "$hyp" > "$2/$3.$set.json.part" \
            2> "$4/$3.$set.err" || { cat "$4/$3.$set.err" >&2; exit 1; }
        mv "$2/$3.$set.json.part" "$2/$3.$set.json"
    done
}
# finetune INIT NAME WORK REC [--set ...]: fine-tunes from INIT in WORK/NAME, its log kept in REC
finetune() {
    local init=$1 name=$2 work=$3 rec=$4
    shift 4
    echo "== ${seed:+seed $seed: }fine-tuning $name in $work/$name"
    "$nmt" train "${configs[@]}" "${sets[@]}" "$@" --set train.init_from="$init" \
        --set train.run_dir="$work/$name" > "$work/$name.out" 2>&1 ||
        { tail "$work/$name.out" >&2; exit 1; }
    cp "$work/$name/train.log" "$rec/$name.train.log"
    evaluate "$work/$name/checkpoint.best" "$rec" "$name" "$work"
}
need_model() {  # what is not recorded yet starts from the model to convert
    [ -f "$from" ] ||
        { echo "convert-dk.sh: the model to convert, $from, is not there" >&2; exit 1; }
}
for seed in "${seed_list[@]}"; do
    sub=${seed:+seed$seed}
    work=$out/${sub:-.} rec=$tables/${sub:-.} from=${model//\{seed\}/$seed}
    mkdir -p "$work" "$rec"
    [ -f "$rec/control.test.json" ] || { need_model; finetune "$from" control "$work" "$rec"; }
    hyps=("$rec/control.test.hyp")
    for dk in "${dk_list[@]}"; do
        name=collab$dk
        if [ ! -f "$rec/$name-converted.test.json" ]; then
            need_model
            echo "== ${seed:+seed $seed: }converting $from to collab D~k=$dk"
            "$nmt" reparam -m "$from" --dk "$dk" -o "$work/$name.ckpt" > "$rec/$name.reparam.log"
            evaluate "$work/$name.ckpt" "$rec" "$name-converted" "$work"
        fi
        [ -f "$rec/$name-finetuned.test.json" ] || finetune "$work/$name.ckpt" "$name-finetuned" \
            "$work" "$rec" --set model.attention=collab --set model.dk="$dk"
        hyps+=("$rec/$name-converted.test.hyp" "$rec/$name-finetuned.test.hyp")
    done
    refplain=$work/test.ref
    case "$ref" in *.gz) gunzip -c "$ref" > "$refplain" ;; *) cp "$ref" "$refplain" ;; esac
    "$nmt" bleu "$refplain" -i "${hyps[@]}" --paired-bs -m bleu -f json > "$rec/paired.json.part"
    mv "$rec/paired.json.part" "$rec/paired.json"
done

/usr/bin/python3 - "$tables" "$seeds" "${dk_list[@]}" <<'PY'
import json, os, statistics, sys
out, seeds, dks = sys.argv[1], [s for s in sys.argv[2].split(",") if s], sys.argv[3:]
names = ["control"] + [f"collab{dk}-{stage}" for dk in dks for stage in ("converted", "finetuned")]
rec = {s: os.path.join(out, f"seed{s}" if s else ".") for s in seeds or [""]}

def mean_sd(xs):
    return statistics.mean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0

rows = []
for i, name in enumerate(names):
    per = []
    for s, d in rec.items():
        load = lambda model, st: json.load(open(os.path.join(d, f"{model}.{st}.json")))
        ev = {st: load(name, st) for st in ("valid", "test")}
        ctl = {st: load("control", st) for st in ("valid", "test")}
        p = json.load(open(os.path.join(d, "paired.json")))[i]["BLEU"]["p_value"]
        per.append(dict(seed=s, valid=ev["valid"]["bleu"], test=ev["test"]["bleu"],
                        chrf=ev["test"]["chrf"], dvalid=ev["valid"]["bleu"] - ctl["valid"]["bleu"],
                        dtest=ev["test"]["bleu"] - ctl["test"]["bleu"], p=p,
                        attention=ev["test"]["attention"], dk=ev["test"]["dk"],
                        params=ev["test"]["params"]))
    row = dict(model=name, attention=per[0]["attention"], dk=per[0]["dk"], params=per[0]["params"],
               seeds=len(per), per_seed=per)
    for k in ("valid", "test", "chrf", "dvalid", "dtest"):
        row[k], row[k + "_sd"] = mean_sd([r[k] for r in per])
    rows.append(row)
cols = ["model", "attention", "dk", "params", "seeds", "valid", "valid_sd", "test", "test_sd",
        "chrf", "chrf_sd", "dvalid", "dvalid_sd", "dtest", "dtest_sd"]
with open(os.path.join(out, "convert.csv"), "w") as f:
    f.write(",".join(cols + ["test_per_seed", "p_per_seed"]) + "\n")
    for r in rows:
        f.write(",".join(str(r[c]) for c in cols) + "," +
                ";".join(f"{x['test']:.2f}" for x in r["per_seed"]) + "," +
                ";".join("" if x["p"] is None else f"{x['p']:.4f}" for x in r["per_seed"]) + "\n")
pm = lambda r, k: f"{r[k]:.2f} ± {r[k + '_sd']:.2f}" if seeds else f"{r[k]:.2f}"
with open(os.path.join(out, "convert.md"), "w") as f:
    f.write("The control is the concat model fine-tuned as the converted ones; "
            + (f"seeds {', '.join(seeds)}: mean ± sample standard deviation over the seeds; "
               if seeds else "") +
            "per seed, the test BLEU and the paired bootstrap p-value (1000 resamples) against "
            "that seed's control; each fine-tune evaluated at its checkpoint.best.\n\n")
    f.write("| model | attention | D~k | params | valid BLEU | test BLEU | test chrF | "
            "valid − control | test − control | test BLEU (p) per seed |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        per = ", ".join((f"{x['seed']}: " if x["seed"] else "") + f"{x['test']:.2f} (" +
                        ("-" if x["p"] is None else f"{x['p']:.3f}") + ")" for x in r["per_seed"])
        f.write(f"| {r['model']} | {r['attention']} | {r['dk']} | {r['params']:,} | "
                f"{pm(r, 'valid')} | {pm(r, 'test')} | {pm(r, 'chrf')} | {pm(r, 'dvalid')} | "
                f"{pm(r, 'dtest')} | {per} |\n")
print(open(os.path.join(out, "convert.md")).read())
PY
