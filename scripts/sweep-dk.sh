#!/usr/bin/env bash
# scripts/sweep-dk.sh -c BASE.yaml [-c MORE.yaml] --concat 256,128,64 --collab 256,128,64
#                     --src TEST.src --ref TEST.ref [--out runs/sweep] [--set key=value ...]
# How small can the key/query width be? Trains, from one base config with the same seed, data and
# budget, concat attention with each D_k (the full width first: the baseline) and collab
# attention with each D~k (scale fixed at 1/sqrt(D/H) in both, as in the paper), evaluates every
# model on the test set (beam and length penalty of the config) and writes
#   OUT/sweep.md, OUT/sweep.csv   mode, D~k, attention and total parameters, BLEU, chrF, the paired
#                                 bootstrap mean and 95% interval and p-value against the
#                                 baseline, training tokens/s, decoding sentences/s
#   OUT/sweep.png                 BLEU against D~k for both modes, parameters on a second axis
# An interrupted sweep continues where it stopped: finished points are reused, a run that was
# cut off resumes from its checkpoint.last.
# Paths are taken from the current directory. nmt is $NMT, else the one on PATH, else the
# repository's build (built when missing).
set -euo pipefail
configs=() sets=() concat="" collab="" src="" ref="" out=runs/sweep
while [ $# -gt 0 ]; do
    case "$1" in
        -c) configs+=(-c "$2"); shift ;;
        --set) sets+=(--set "$2"); shift ;;
        --concat) concat=$2; shift ;;
        --collab) collab=$2; shift ;;
        --src) src=$2; shift ;;
        --ref) ref=$2; shift ;;
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "sweep-dk.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ ${#configs[@]} -gt 0 ] && [ -n "$concat" ] && [ -n "$src" ] && [ -n "$ref" ] ||
    { echo "sweep-dk.sh: -c, --concat, --src and --ref are required (see --help)" >&2; exit 2; }
nmt=${NMT:-$(command -v nmt || true)}
if [ -z "$nmt" ]; then
    repo=$(cd "$(dirname "$0")/.." && pwd)
    nmt=$repo/build/release/bin/nmt
    [ -x "$nmt" ] || { cmake -S "$repo" -B "$repo/build/release" -DCMAKE_BUILD_TYPE=Release > /dev/null &&
                       cmake --build "$repo/build/release" -j "$(nproc)" > /dev/null; }
fi
mkdir -p "$out"
points=()
for dk in ${concat//,/ }; do points+=("concat:$dk"); done
for dk in ${collab//,/ }; do points+=("collab:$dk"); done
for p in "${points[@]}"; do
    mode=${p%%:*} dk=${p##*:} run=$out/$mode-$dk
    if [ -f "$run/eval.json" ]; then echo "== $mode D~k=$dk: done"; continue; fi
    echo "== $mode D~k=$dk: training in $run"
    "$nmt" train "${configs[@]}" "${sets[@]}" --set model.attention="$mode" --set model.dk="$dk" \
        --set train.run_dir="$run" > "$run.train.out" 2>&1 || { tail "$run.train.out"; exit 1; }
    "$nmt" eval -m "$run/checkpoint.best" --src "$src" --ref "$ref" -o "$run/test.hyp" \
        > "$run/eval.json.part" 2> "$run.eval.err"
    mv "$run/eval.json.part" "$run/eval.json"
done
base=$out/${points[0]/:/-}
hyps=()
for p in "${points[@]}"; do hyps+=("$out/${p/:/-}/test.hyp"); done
refplain=$out/test.ref
case "$ref" in *.gz) gunzip -c "$ref" > "$refplain" ;; *) cp "$ref" "$refplain" ;; esac
"$nmt" bleu "$refplain" -i "${hyps[@]}" --paired-bs -m bleu -f json > "$out/paired.json"
/usr/bin/python3 - "$out" "${points[@]}" <<'PY'
import json, os, statistics, sys
out, points = sys.argv[1], sys.argv[2:]
paired = json.load(open(os.path.join(out, "paired.json")))
rows = []
for i, p in enumerate(points):
    mode, dk = p.split(":")
    run = os.path.join(out, f"{mode}-{dk}")
    ev = json.load(open(os.path.join(run, "eval.json")))
    tok = [json.loads(l)["tokens_per_s"] for l in open(os.path.join(run, "train.jsonl"))
           if '"type":"train"' in l]
    b = paired[i]["BLEU"]
    rows.append(dict(mode=mode, dk=int(dk), attention_params=ev["attention_params"], params=ev["params"],
                     bleu=ev["bleu"], chrf=ev["chrf"], bs_mean=b["mean"], bs_ci=b["ci"],
                     p_value=b["p_value"], train_tok_s=statistics.median(tok) if tok else 0,
                     decode_sent_s=ev["sentences_per_s"]))
cols = ["mode", "dk", "attention_params", "params", "bleu", "chrf", "bs_mean", "bs_ci", "p_value",
        "train_tok_s", "decode_sent_s"]
with open(os.path.join(out, "sweep.csv"), "w") as f:
    f.write(",".join(cols) + "\n")
    for r in rows:
        f.write(",".join("" if r[c] is None else str(r[c]) for c in cols) + "\n")
with open(os.path.join(out, "sweep.md"), "w") as f:
    f.write(f"Baseline: {points[0]}; paired bootstrap (1000 resamples) mean and 95% interval, "
            "p-value against the baseline.\n\n")
    f.write("| mode | D~k | attention params | params | BLEU | chrF | bootstrap BLEU (95%) | p | "
            "train tok/s | decode sent/s |\n|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        pv = "-" if r["p_value"] is None else f"{r['p_value']:.3f}"
        f.write(f"| {r['mode']} | {r['dk']} | {r['attention_params']:,} | {r['params']:,} | "
                f"{r['bleu']:.2f} | {r['chrf']:.2f} | {r['bs_mean']:.2f} ± {r['bs_ci']:.2f} | {pv} | "
                f"{r['train_tok_s']:.0f} | {r['decode_sent_s']:.1f} |\n")
print(open(os.path.join(out, "sweep.md")).read())
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 4.5))
ax2 = ax.twinx()
for mode, mark, dodge in (("concat", "o", 0.97), ("collab", "s", 1.03)):  # dodge: error bars apart
    rs = sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["dk"])
    if not rs:
        continue
    ax.errorbar([r["dk"] * dodge for r in rs], [r["bleu"] for r in rs], yerr=[r["bs_ci"] for r in rs],
                marker=mark, capsize=3, label=f"{mode} BLEU")
    ax2.plot([r["dk"] for r in rs], [r["attention_params"] / 1e6 for r in rs], marker=mark, ls="--",
             alpha=0.5, label=f"{mode} attention params")
ax.set(xscale="log", xlabel="key/query width D~k (concat: D_k)", ylabel="test BLEU")
ax.set_xticks(sorted({r["dk"] for r in rows}))
ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
ax.get_xaxis().set_minor_formatter(matplotlib.ticker.NullFormatter())
ax2.set_ylabel("attention parameters (M)")
h1, l1 = ax.get_legend_handles_labels()
h2, l2 = ax2.get_legend_handles_labels()
ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="lower right")
ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(os.path.join(out, "sweep.png"), dpi=110)
print("wrote", os.path.join(out, "sweep.png"))
PY
