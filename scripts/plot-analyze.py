#!/usr/bin/python3
"""Explained-energy curves of the key/query projections from `nmt analyze --json`.

    nmt analyze -m runs/multi30k-concat/checkpoint.best --json spectra.json
    /usr/bin/python3 scripts/plot-analyze.py spectra.json -o spectra.png

One panel per attention type (encoder self, decoder self, decoder cross) and matrix (W_Q,
[P_1 .. P_H]): E(r) = sum_{j<=r} s_j^2 / sum_j s_j^2 against r / dimension, thin lines for single
heads, thick lines for the concatenation over heads, one colour per layer, dashed black for W_Q,
W_K of i.i.d. Gaussian entries (what a module that learned no structure looks like). Needs
Debian's python3-matplotlib.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def energy(sv):
    e = [s * s for s in sv]
    total = sum(e) or 1.0
    out, acc = [], 0.0
    for x in e:
        acc += x
        out.append(acc / total)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("-o", "--output", default="spectra.png")
    a = ap.parse_args()
    data = json.load(open(a.json))
    kinds = [("enc", "self_attn", "encoder self"), ("dec", "self_attn", "decoder self"),
             ("dec", "cross_attn", "decoder cross")]
    mats = [("W_Q", "W_Q"), ("P", "W_Q^h W_K^h^T")]
    fig, axes = plt.subplots(len(mats), len(kinds), figsize=(15, 8), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for col, (stack, att, title) in enumerate(kinds):
        mods = [m for m in data["modules"] if m["module"].startswith(stack + ".") and m["module"].endswith(att)]
        for row, (key, label) in enumerate(mats):
            ax = axes[row][col]
            for i, m in enumerate(mods):
                c = colors[i % len(colors)]
                for h in m["heads_" + key]:
                    e = energy(h)
                    ax.plot([(r + 1) / len(e) for r in range(len(e))], e, color=c, lw=0.6, alpha=0.5)
                e = energy(m["concat_" + key])
                ax.plot([(r + 1) / len(e) for r in range(len(e))], e, color=c, lw=2.2,
                        label=m["module"].split(".")[1] and f"layer {m['module'].split('.')[1]}")
            ref = data.get("reference")
            if ref:
                e = energy(ref["concat_" + key])
                ax.plot([(r + 1) / len(e) for r in range(len(e))], e, color="black", ls="--", lw=1.5,
                        label="Gaussian (untrained)")
            ax.axhline(0.9, color="gray", ls=":", lw=0.8)
            ax.set(title=f"{title}: {label}", xlabel="r / dimension", ylabel="explained energy E(r)",
                   ylim=(0, 1.01))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, title="thick: all heads, thin: one head", title_fontsize=7)
    fig.suptitle(f"{data['model']}: D {data['d_model']}, {data['heads']} heads, D_k {data['dk']}")
    fig.tight_layout()
    fig.savefig(a.output, dpi=100)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
