#!/usr/bin/env python3
"""scaling-model.py: a model (not a measurement) of data-parallel training on N nodes.

    scripts/scaling-model.py --tok-per-core 280 --params 60.5e6 [--cores 32] [--nodes 1,4,16,64]
                             [--tokens-per-update 25000] [--updates 100000] [--gbits 10,100]

Per update, each of N nodes computes tokens_per_update / N target tokens at C x tok_per_core
tokens/s (linear in the cores of a node: an optimistic assumption), and the ranks sum the
gradient (4 bytes per parameter) with a ring allreduce, which moves 2 (N - 1) / N x gradient
bytes over each node's link. Without overlap an update takes compute + allreduce; with full
overlap max(compute, allreduce). Prints a Markdown table: job tokens/s and days to `updates`
updates, per link speed, both ways. Standard library only.
"""
import argparse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tok-per-core", type=float, required=True, help="measured target tokens/s per core")
    ap.add_argument("--params", type=float, required=True, help="trainable parameters")
    ap.add_argument("--cores", type=int, default=32, help="cores per node")
    ap.add_argument("--nodes", default="1,4,16,64")
    ap.add_argument("--tokens-per-update", type=float, default=25000)
    ap.add_argument("--updates", type=float, default=100000)
    ap.add_argument("--gbits", default="10,100", help="link speeds, Gbit/s")
    a = ap.parse_args()
    grad_bytes = 4 * a.params
    node_tps = a.cores * a.tok_per_core
    links = [float(g) for g in a.gbits.split(",")]
    head = "| nodes | compute s/update |"
    rule = "|---|---|"
    for g in links:
        head += f" allreduce s ({g:g} Gbit/s) | tok/s, days (no overlap) | tok/s, days (overlapped) |"
        rule += "---|---|---|"
    print(head)
    print(rule)
    for n in (int(x) for x in a.nodes.split(",")):
        compute = a.tokens_per_update / (n * node_tps)
        row = f"| {n} x {a.cores} cores | {compute:.2f} |"
        for g in links:
            ring = 2 * (n - 1) / n * grad_bytes / (g * 1e9 / 8) if n > 1 else 0.0
            cells = []
            for step in (compute + ring, max(compute, ring)):
                days = a.updates * step / 86400
                cells.append(f"{a.tokens_per_update / step:,.0f}, {days:.1f}")
            row += f" {ring:.3f} | {cells[0]} | {cells[1]} |"
        print(row)


if __name__ == "__main__":
    main()
