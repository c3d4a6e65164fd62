#!/usr/bin/env bash
# scripts/sweep-dk.sh -c BASE.yaml [-c MORE.yaml] --concat 256,128,64 --collab 256,128,64
#                     --src TEST.src --ref TEST.ref [--seeds 1,2,3] [--out runs/sweep]
#                     [--set key=value ...] [--results DIR] [--average N]
# How small can the key/query width be? Trains, from one base config with the same seed, data and
# budget, concat attention with each D_k (the full width first: the baseline) and collab
# attention with each D~k (scale fixed at 1/sqrt(D/H) in both, as in the paper), evaluates every
# model on the test set (beam and length penalty of the config) and writes (into --results DIR
# when given, beside the records, else into OUT)
#   sweep.md, sweep.csv           mode, D~k, attention and total parameters, BLEU, chrF, the paired
#                                 bootstrap mean and 95% interval and p-value against the
#                                 baseline, the update of the evaluated (best) checkpoint and the
#                                 training hours to it (at the run's median seconds per update:
#                                 pauses and other jobs on the machine left out), training
#                                 tokens/s, decoding sentences/s
#                                 (sweep.csv also the run's validation BLEU at its best checkpoint
#                                 and its last validation NLL)
#   sweep.png                     BLEU against D~k for both modes, parameters on a second axis
#                                 (needs Debian's python3-matplotlib; skipped with a note without)
# --seeds trains every point once per seed (train.seed; runs OUT/MODE-DK-seedS) and reports per
# point the mean and sample standard deviation of BLEU and chrF over the seeds and, per seed, the
# paired bootstrap against the baseline trained with the same seed (sweep.md, sweep.csv; every
# run in sweep-seeds.csv); the plot's error bars are then the standard deviations.
# An interrupted sweep continues where it stopped: finished points are reused, a run that was
# cut off resumes from its checkpoint.last.
# --average N also evaluates each run's average of its last N checkpoints (nmt average --last N,
# what the recipes ship) and writes the same tables for it: sweep-avgN.md, sweep-avgN.csv,
# sweep-avgN-seeds.csv, sweep-avgN.png, with the run's last update and hours in place of the best
# checkpoint's (records eval-avgN.json and test-avgN.hyp; the average is RUN/average-lastN.ckpt).
# A finished point's record is its eval.json, test.hyp and train.json (the best checkpoint's update,
# training time and validation BLEU and NLL, the run's updates, median tokens/s and seconds per
# update, and last validation), in its run directory or, with --results DIR, in DIR/RUN (about 100
# KB each, small enough to commit): a point recorded there is not trained again, so a long sweep
# goes on from its records on another machine, without its run directories.
# Paths are taken from the current directory. nmt is $NMT, else the one on PATH, else the
# repository's build (built when missing).
set -euo pipefail
configs=() sets=() concat="" collab="" src="" ref="" out=runs/sweep seeds="" results="" average=""
while [ $# -gt 0 ]; do
    case "$1" in
        -c) configs+=(-c "$2"); shift ;;
        --set) sets+=(--set "$2"); shift ;;
        --concat) concat=$2; shift ;;
        --collab) collab=$2; shift ;;
        --src) src=$2; shift ;;
        --ref) ref=$2; shift ;;
        --out) out=$2; shift ;;
        --seeds) seeds=$2; shift ;;
        --results) results=$2; shift ;;
        --average) average=$2; shift ;;
        -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
        *) echo "sweep-dk.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ ${#configs[@]} -gt 0 ] && [ -n "$concat" ] && [ -n "$src" ] && [ -n "$ref" ] ||
    { echo "sweep-dk.sh: -c, --concat, --src and --ref are required (see --help)" >&2; exit 2; }
[[ -z "$seeds" || "$seeds" =~ ^[0-9]+(,[0-9]+)*$ ]] ||
    { echo "sweep-dk.sh: --seeds takes integers separated by commas, got '$seeds'" >&2; exit 2; }
[[ -z "$average" || "$average" =~ ^[1-9][0-9]*$ ]] ||
    { echo "sweep-dk.sh: --average takes a number of checkpoints, got '$average'" >&2; exit 2; }
nmt=${NMT:-$(command -v nmt || true)}
if [ -z "$nmt" ]; then
    repo=$(cd "$(dirname "$0")/.." && pwd)
    nmt=$repo/build/release/bin/nmt
    [ -x "$nmt" ] || { cmake -S "$repo" -B "$repo/build/release" -DCMAKE_BUILD_TYPE=Release > /dev/null &&
                       cmake --build "$repo/build/release" -j "$(nproc)" > /dev/null; }
fi
mkdir -p "$out"
tables=${results:-$out}  # where the records, the tables, the plot and the paired bootstraps go
points=()
for dk in ${concat//,/ }; do points+=("concat:$dk"); done
for dk in ${collab//,/ }; do points+=("collab:$dk"); done
# the runs of a seed ("" without --seeds): one directory per point
run_dir() { echo "$out/${1/:/-}${2:+-seed$2}"; }
# where the record of a run is kept: its namesake under --results, else the run directory itself
record_dir() { echo "$tables/$(basename "$1")"; }
# record RUN REC: RUN's evaluation copied to REC (unless it is RUN) and its training summary
# written there last, so a train.json marks a whole record
record() {
    mkdir -p "$2"
    [ "$1" -ef "$2" ] || cp "$1/eval.json" "$1/test.hyp" "$2/"
    /usr/bin/python3 - "$1/train.jsonl" > "$2/train.json.part" <<'PY'
import json, statistics, sys
log = [json.loads(line) for line in open(sys.argv[1])]
timed = [r for r in log if r["type"] in ("train", "valid")]  # start/resume records have no time
train = [r["tokens_per_s"] for r in timed if r["type"] == "train"]
valid = [r for r in timed if r["type"] == "valid"]
best = [r for r in valid if r["best"]][-1]  # checkpoint.best's
# seconds per update between consecutive train records of one process (a start or resume begins
# another): their median leaves out the stretches a run was paused or shared the machine
pace, prev = [], None
for r in log:
    if r["type"] in ("start", "resume"):
        prev = None
    elif r["type"] == "train":
        if prev and r["update"] > prev["update"]:
            pace.append((r["elapsed"] - prev["elapsed"]) / (r["update"] - prev["update"]))
        prev = r
print(json.dumps(dict(best_update=best["update"], best_elapsed_s=best["elapsed"],
                      updates=max(r["update"] for r in log), elapsed_s=timed[-1]["elapsed"],
                      train_tok_s=statistics.median(train) if train else 0,
                      s_per_update=statistics.median(pace) if pace else None,
                      best_valid_bleu=best.get("bleu"), best_valid_nll=best["nll"],
                      last_valid_bleu=valid[-1].get("bleu"), last_valid_nll=valid[-1]["nll"])))
PY
    mv "$2/train.json.part" "$2/train.json"
}
# evaluate RUN MODEL DIR KIND: RUN's checkpoint MODEL on the test set, into DIR/eval$KIND.json and
# DIR/test$KIND.hyp (its log beside RUN)
evaluate() {
    "$nmt" eval -m "$2" --src "$src" --ref "$ref" -o "$3/test$4.hyp" > "$3/eval$4.json.part" \
        2> "$1.eval$4.err" || { cat "$1.eval$4.err" >&2; exit 1; }
    mv "$3/eval$4.json.part" "$3/eval$4.json"
}
refplain=$out/test.ref
case "$ref" in *.gz) gunzip -c "$ref" > "$refplain" ;; *) cp "$ref" "$refplain" ;; esac
seed_list=(${seeds//,/ })
[ -n "$seeds" ] || seed_list=("")
for seed in "${seed_list[@]}"; do
    seed_set=()
    [ -z "$seed" ] || seed_set=(--set train.seed="$seed")
    for p in "${points[@]}"; do
        mode=${p%%:*} dk=${p##*:} run=$(run_dir "$p" "$seed")
        rec=$(record_dir "$run") what="$mode D~k=$dk${seeds:+ seed $seed}"
        if [ -f "$rec/train.json" ]; then
            echo "== $what: done"
        else
            if [ ! -f "$run/eval.json" ]; then
                echo "== $what: training in $run"
                "$nmt" train "${configs[@]}" "${sets[@]}" "${seed_set[@]}" \
                    --set model.attention="$mode" --set model.dk="$dk" --set train.run_dir="$run" \
                    > "$run.train.out" 2>&1 || { tail "$run.train.out"; exit 1; }
                evaluate "$run" "$run/checkpoint.best" "$run" ""
            fi
            record "$run" "$rec"
        fi
        if [ -n "$average" ] && [ ! -f "$rec/eval-avg$average.json" ]; then
            echo "== $what: evaluating the average of its last $average checkpoints"
            [ -f "$run/checkpoint.last" ] || { echo "sweep-dk.sh: $rec has no evaluation of" \
                "the average of the last $average checkpoints and its run $run is not here" >&2
                exit 1; }
            "$nmt" average -o "$run/average-last$average.ckpt" --last "$average" "$run" \
                > /dev/null || exit 1
            evaluate "$run" "$run/average-last$average.ckpt" "$rec" "-avg$average"
        fi
    done
    # the paired bootstrap of this seed's points against its baseline, per evaluated model (none
    # for a baseline alone)
    [ ${#points[@]} -gt 1 ] || continue
    for kind in "" ${average:+-avg$average}; do
        hyps=()
        for p in "${points[@]}"; do
            hyps+=("$(record_dir "$(run_dir "$p" "$seed")")/test$kind.hyp")
        done
        "$nmt" bleu "$refplain" -i "${hyps[@]}" --paired-bs -m bleu -f json \
            > "$tables/paired$kind${seed:+-seed$seed}.json"
    done
done
for kind in "" ${average:+-avg$average}; do
/usr/bin/python3 - "$tables" "$seeds" "$kind" "${points[@]}" <<'PY'
import json, os, statistics, sys
# out holds the records, the paired bootstraps and the tables; kind is "" (each run's best
# checkpoint) or "-avgN" (the average of its last N checkpoints)
out, seeds, kind, points = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
seeds = [s for s in seeds.split(",") if s]
# the evaluated model's update and hours: the best checkpoint's, or the run's last
upd, hrs = ("last_update", "hours") if kind else ("best_update", "best_hours")
evaluated = (f"evaluated: the average of each run's last {kind[4:]} checkpoints (the run's last "
             "update, its training hours)" if kind else
             "evaluated: each run's best checkpoint (its update, the training hours to it)")
evaluated += ("; hours at the run's median seconds per update (pauses and other jobs left out; "
              "wall time for records without it)")
upd_head = "last update | hours" if kind else "best at update | hours to it"

def record(mode, dk, seed):
    return os.path.join(out, f"{mode}-{dk}" + (f"-seed{seed}" if seed else ""))

# hours to the evaluated model's update: at the run's median pace, else (older records) wall time
def hours(tr, update):
    if tr.get("s_per_update") is not None:
        return update * tr["s_per_update"] / 3600
    return (tr["elapsed_s"] if kind else tr["best_elapsed_s"]) / 3600

rows = []  # one per point and seed
no_bootstrap = dict(mean=None, ci=None, p_value=None)  # a baseline alone
for seed in seeds or [None]:
    paired = json.load(open(os.path.join(out, f"paired{kind}" + (f"-seed{seed}" if seed else "") +
                                         ".json"))) if len(points) > 1 else [dict(BLEU=no_bootstrap)]
    for i, p in enumerate(points):
        mode, dk = p.split(":")
        d = record(mode, dk, seed)
        ev = json.load(open(os.path.join(d, f"eval{kind}.json")))
        tr = json.load(open(os.path.join(d, "train.json")))
        update = tr["updates"] if kind else tr["best_update"]
        b = paired[i]["BLEU"]
        rows.append(dict(mode=mode, dk=int(dk), seed=seed, attention_params=ev["attention_params"],
                         params=ev["params"], bleu=ev["bleu"], chrf=ev["chrf"], bs_mean=b["mean"],
                         bs_ci=b["ci"], p_value=b["p_value"],
                         **{upd: update, hrs: hours(tr, update)},
                         train_tok_s=tr["train_tok_s"], decode_sent_s=ev["sentences_per_s"],
                         # the run's validations (absent from records made before they were kept)
                         best_valid_bleu=tr.get("best_valid_bleu"),
                         last_valid_nll=tr.get("last_valid_nll")))
cols = ["mode", "dk", "attention_params", "params", "bleu", "chrf", "bs_mean", "bs_ci", "p_value",
        upd, hrs, "train_tok_s", "decode_sent_s", "best_valid_bleu", "last_valid_nll"]

def table(ext):  # sweep.md, sweep-avgN.csv, ...
    return os.path.join(out, f"sweep{kind}{ext}")

def write_csv(name, rows, cols):
    with open(table(name), "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join("" if r[c] is None else str(r[c]) for c in cols) + "\n")

def sd(xs):
    return statistics.stdev(xs) if len(xs) > 1 else 0.0

if not seeds:
    write_csv(".csv", rows, cols)
    with open(table(".md"), "w") as f:
        f.write(f"Baseline: {points[0]}; paired bootstrap (1000 resamples) mean and 95% interval, "
                f"p-value against the baseline; {evaluated}.\n\n")
        f.write("| mode | D~k | attention params | params | BLEU | chrF | bootstrap BLEU (95%) | p | "
                f"{upd_head} | train tok/s | decode sent/s |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            pv = "-" if r["p_value"] is None else f"{r['p_value']:.3f}"
            bs = "-" if r["bs_mean"] is None else f"{r['bs_mean']:.2f} ± {r['bs_ci']:.2f}"
            f.write(f"| {r['mode']} | {r['dk']} | {r['attention_params']:,} | {r['params']:,} | "
                    f"{r['bleu']:.2f} | {r['chrf']:.2f} | {bs} | {pv} | "
                    f"{r[upd]} | {r[hrs]:.2f} | "
                    f"{r['train_tok_s']:.0f} | {r['decode_sent_s']:.1f} |\n")
    points_rows = [dict(r, err=r["bs_ci"] or 0.0) for r in rows]
else:
    write_csv("-seeds.csv", rows, ["seed"] + cols)
    summary = []
    for p in points:
        mode, dk = p.split(":")
        rs = [r for r in rows if r["mode"] == mode and r["dk"] == int(dk)]
        bleu, chrf = [r["bleu"] for r in rs], [r["chrf"] for r in rs]
        summary.append(dict(
            mode=mode, dk=int(dk), seeds=len(rs), attention_params=rs[0]["attention_params"],
            params=rs[0]["params"], bleu=statistics.mean(bleu), bleu_sd=sd(bleu),
            chrf=statistics.mean(chrf), chrf_sd=sd(chrf),
            bleu_per_seed=";".join(f"{r['bleu']:.2f}" for r in rs),
            p_per_seed=";".join("" if r["p_value"] is None else f"{r['p_value']:.4f}" for r in rs),
            **{c: statistics.mean(r[c] for r in rs) for c in (upd, hrs)},
            train_tok_s=statistics.mean(r["train_tok_s"] for r in rs),
            decode_sent_s=statistics.mean(r["decode_sent_s"] for r in rs)))
    write_csv(".csv", summary, ["mode", "dk", "seeds", "attention_params", "params", "bleu",
                                "bleu_sd", "chrf", "chrf_sd", "bleu_per_seed", "p_per_seed",
                                upd, hrs, "train_tok_s", "decode_sent_s"])
    with open(table(".md"), "w") as f:
        f.write(f"Baseline: {points[0]}; seeds {', '.join(seeds)}: BLEU and chrF mean ± sample "
                "standard deviation over the seeds; per seed, BLEU and the paired bootstrap "
                "p-value (1000 resamples) against the baseline trained with the same seed; "
                f"{evaluated}; the updates, hours and rates are means over the seeds.\n\n")
        f.write("| mode | D~k | attention params | params | BLEU | chrF | BLEU (p) per seed | "
                f"{upd_head} | train tok/s | decode sent/s |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n")
        for s in summary:
            rs = [r for r in rows if r["mode"] == s["mode"] and r["dk"] == s["dk"]]
            per = ", ".join(f"{r['seed']}: {r['bleu']:.2f} (" +
                            ("-" if r["p_value"] is None else f"{r['p_value']:.3f}") + ")" for r in rs)
            f.write(f"| {s['mode']} | {s['dk']} | {s['attention_params']:,} | {s['params']:,} | "
                    f"{s['bleu']:.2f} ± {s['bleu_sd']:.2f} | {s['chrf']:.2f} ± {s['chrf_sd']:.2f} | "
                    f"{per} | {s[upd]:.0f} | {s[hrs]:.2f} | "
                    f"{s['train_tok_s']:.0f} | {s['decode_sent_s']:.1f} |\n")
    points_rows = [dict(s, err=s["bleu_sd"]) for s in summary]
print(open(table(".md")).read())
try:
    import matplotlib
except ImportError:
    print(f"no {table('.png')}: matplotlib is not installed (Debian: python3-matplotlib)")
    sys.exit(0)
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 4.5))
ax2 = ax.twinx()
spread = f" (mean ± sd, {len(seeds)} seed{'s' if len(seeds) > 1 else ''})" if seeds else ""
for mode, mark, dodge in (("concat", "o", 0.97), ("collab", "s", 1.03)):  # dodge: error bars apart
    rs = sorted((r for r in points_rows if r["mode"] == mode), key=lambda r: r["dk"])
    if not rs:
        continue
    ax.errorbar([r["dk"] * dodge for r in rs], [r["bleu"] for r in rs], yerr=[r["err"] for r in rs],
                marker=mark, capsize=3, label=f"{mode} BLEU{spread}")
    ax2.plot([r["dk"] for r in rs], [r["attention_params"] / 1e6 for r in rs], marker=mark, ls="--",
             alpha=0.5, label=f"{mode} attention params")
ax.set(xscale="log", xlabel="key/query width D~k (concat: D_k)",
       ylabel=f"test BLEU, average of the last {kind[4:]} checkpoints" if kind else "test BLEU")
ax.set_xticks(sorted({r["dk"] for r in points_rows}))
ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
ax.get_xaxis().set_minor_formatter(matplotlib.ticker.NullFormatter())
ax2.set_ylabel("attention parameters (M)")
h1, l1 = ax.get_legend_handles_labels()
h2, l2 = ax2.get_legend_handles_labels()
ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="lower right")
ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(table(".png"), dpi=110)
print("wrote", table(".png"))
PY
done
