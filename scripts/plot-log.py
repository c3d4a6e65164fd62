#!/usr/bin/python3
"""Plots training curves of one or several runs from their JSON logs.

    /usr/bin/python3 scripts/plot-log.py runs/multi30k-concat runs/multi30k-collab -o curves.png

Each argument is a run directory (or its train.jsonl). Three panels against the update number:
training loss and NLL, perplexity (training and validation), validation BLEU. A resumed run logs
some updates twice; the last entry of each update counts. Needs Debian's python3-matplotlib.
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_log(path):
    if os.path.isdir(path):
        path = os.path.join(path, "train.jsonl")
    train, valid = {}, {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                e = json.loads(line)
            except json.JSONDecodeError as err:
                sys.exit(f"{path}:{n}: not a JSON line ({err})")
            if e.get("type") == "train":
                train[e["update"]] = e
            elif e.get("type") == "valid":
                valid[e["update"]] = e
    return [train[u] for u in sorted(train)], [valid[u] for u in sorted(valid)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="run directories or train.jsonl files")
    ap.add_argument("-o", "--output", default="curves.png", help="PNG to write")
    a = ap.parse_args()
    fig, (ax_loss, ax_ppl, ax_bleu) = plt.subplots(1, 3, figsize=(16, 4.5))
    for run in a.runs:
        train, valid = read_log(run)
        label = os.path.normpath(run if os.path.isdir(run) else os.path.dirname(run))
        if train:
            ups = [e["update"] for e in train]
            line, = ax_loss.plot(ups, [e["loss"] for e in train], label=f"{label} loss")
            ax_loss.plot(ups, [e["nll"] for e in train], ls=":", color=line.get_color(), label=f"{label} nll")
            ax_ppl.plot(ups, [e["ppl"] for e in train], color=line.get_color(), alpha=0.5, label=f"{label} train")
        if valid:
            ups = [e["update"] for e in valid]
            ax_ppl.plot(ups, [math.exp(e["nll"]) for e in valid], marker="o", ms=3, label=f"{label} valid")
            ax_bleu.plot(ups, [e["bleu"] for e in valid], marker="o", ms=3, label=label)
    ax_loss.set(title="training loss (nats per target token)", xlabel="update")
    ax_ppl.set(title="perplexity", xlabel="update", yscale="log")
    ax_bleu.set(title="validation BLEU", xlabel="update")
    for ax in (ax_loss, ax_ppl, ax_bleu):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
