#!/usr/bin/env bash
# scripts/bench-vs-torch.sh [REPS]: our training step and decoding against the PyTorch anchor
# (../shared/peers/torch_transformer_bench.py, Debian's python3-torch) on the same small config,
# batch and thread count, run alternately REPS times (default 3) so machine noise hits both;
# prints the medians and the ratios ours/PyTorch for tokens/s, peak RSS and sentences/s.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
nmt=${NMT:-build/release/trainer/nmt}
torch=${NMT_SHARED:-../shared}/peers/torch_transformer_bench.py
threads=$(nproc)
[ -x "$nmt" ] || { echo "build first (scripts/demo.sh or cmake): $nmt is missing" >&2; exit 1; }
[ -f "$torch" ] || { echo "$torch is missing" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$reps"); do
    for mode in concat collab; do
        cfg=configs/bench-small.yaml
        targs=(--attn concat)
        [ $mode = collab ] && cfg=configs/bench-small-collab.yaml && targs=(--attn collab --dkt 128)
        echo "rep $r: $mode" >&2
        "$nmt" bench train -c "$cfg" --set train.threads="$threads" --json 2>/dev/null |
            sed "s/^/OURS $mode /" >> "$out"
        "$nmt" bench decode -c "$cfg" --set train.threads="$threads" --json 2>/dev/null |
            sed "s/^/OURS $mode /" >> "$out"
        OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 "$torch" --config tiny "${targs[@]}" \
            --threads "$threads" --decode 2>/dev/null | grep -E '^(TORCH|DECODE)' |
            sed "s/^/PEER $mode /" >> "$out"
    done
done
/usr/bin/python3 - "$out" <<'PY'
import json, re, statistics, sys
ours, peer = {}, {}
for line in open(sys.argv[1]):
    who, mode, rest = line.split(" ", 2)
    if who == "OURS":
        e = json.loads(rest)
        if e["bench"] == "train":
            ours.setdefault((mode, "tokens/s"), []).append(e["tokens_per_s"])
            ours.setdefault((mode, "peak RSS MB"), []).append(e["peak_rss_mb"])
        else:
            ours.setdefault((mode, e["mode"] + " sent/s"), []).append(e["sentences_per_s"])
    else:
        kv = dict(re.findall(r"(\w+)=(\S+)", rest))
        if rest.startswith("TORCH"):
            peer.setdefault((mode, "tokens/s"), []).append(float(kv["tok_s_median"]))
            peer.setdefault((mode, "peak RSS MB"), []).append(float(kv["peak_rss_MB"]))
        else:
            name = "greedy" if kv["mode"] == "greedy" else "beam"
            peer.setdefault((mode, name + " sent/s"), []).append(float(kv["sent_s"]))
print(f"{'attention':10s} {'measure':14s} {'ours':>10s} {'pytorch':>10s} {'ratio':>7s}")
for key in sorted(ours):
    if key not in peer:
        continue
    o, p = statistics.median(ours[key]), statistics.median(peer[key])
    print(f"{key[0]:10s} {key[1]:14s} {o:10.1f} {p:10.1f} {o / p:7.2f}")
PY
