#!/usr/bin/env bash
# scripts/bench-vs-torch.sh [--isa native|avx2] [--config small|base] [--threads N] [--raw FILE]
#                            [REPS]
#   or  scripts/bench-vs-torch.sh --summarize FILE...
# Our training step and decoding against the PyTorch anchor (../shared/peers/
# torch_transformer_bench.py, Debian's python3-torch) on the same config, batch and thread count,
# run alternately REPS times (default 3) so machine noise hits both; prints the medians and the
# ratios ours/PyTorch for tokens/s, peak RSS and sentences/s (with the lowest and highest ratio of a
# single repetition), and our GFLOP/s, share of the FP32 FMA peak and memory by use; then what the
# training target (2x PyTorch natively, 1.3x at AVX2) asks: the step it allows beside our products'
# time and the rest's, and PyTorch's share of the peak by our count of the same work times the
# target beside ours. PyTorch runs in the environment of its published anchors
# (OMP_WAIT_POLICY=PASSIVE, glibc heap tunables).
#   --config small  (default) the small model (bench-small.yaml, collab D~k 128), training and
#                   decoding
#   --config base   transformer-base (transformer-base.yaml, collab D~k 128 = D/4), training only
#                   (about 5 minutes per repetition on 2 cores; PyTorch needs 8-10 GB)
#   --isa native  (default) ours as built in build/release, both at this CPU's widest ISA;
#                 OPENBLAS_CORETYPE in the environment is ignored (SkylakeX is set where OpenBLAS
#                 does not recognise an AVX-512 CPU)
#   --isa avx2    AVX2 on any x86 CPU, also one with AVX-512: ours built for x86-64-v3 in
#                 build/x86-64-v3 (NMT_ARCH, no AVX-512 code runs) with OPENBLAS_CORETYPE=Haswell,
#                 PyTorch with ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2
#                 OPENBLAS_CORETYPE=Haswell
#   --threads N   both on N threads (default: all cores), e.g. 1 to compare the kernels without the
#                 threads' sharing of caches, memory and host
#   --raw FILE    also append each repetition's records (ours as `nmt bench --json` prints them,
#                 PyTorch's result lines) to FILE, to pool runs later
#   --summarize FILE...  no runs: the summary of the repetitions kept in these --raw files,
#                 together (runs of one ISA, config and thread count; repetition i of ours is
#                 still compared with the PyTorch run right after it); a run's options beside
#                 it (--isa, --config, --threads, --raw, REPS) are refused, not ignored
#   NMT=path      our binary (skips the build of --isa avx2)
set -euo pipefail
cd "$(dirname "$0")/.."
isa=native config=small reps=3 raw= threads= summarizing= summarize=() run_options=()
usage="usage: $0 [--isa native|avx2] [--config small|base] [--threads N] [--raw FILE] [REPS]
       $0 --summarize FILE..."
while [ $# -gt 0 ]; do
    # after --summarize, what is no option (nor a count that names no file) is a file to read
    if [ -n "$summarizing" ] && [[ $1 != -* ]] && [[ ! $1 =~ ^[0-9]+$ || -e $1 ]]; then
        summarize+=("$1"); shift; continue
    fi
    case $1 in
        --isa|--config|--threads|--raw|[0-9]*) run_options+=("$1") ;;&
        --isa) isa=${2:?--isa needs native or avx2}; shift 2 ;;
        --config) config=${2:?--config needs small or base}; shift 2 ;;
        --threads)
            threads=${2:?--threads needs a count}; shift 2
            [[ $threads =~ ^[1-9][0-9]*$ ]] ||
                { echo "--threads: expected a positive count, not '$threads'" >&2; exit 2; } ;;
        --raw) raw=${2:?--raw needs a file}; shift 2 ;;
        --summarize) summarizing=1; shift ;;
        [0-9]*) reps=$1; shift ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
if [ -n "$summarizing" ] && [ ${#run_options[@]} -gt 0 ]; then
    echo "--summarize only reads its files; a run's options do not apply to it:" \
        "${run_options[*]}" >&2
    exit 2
fi
if [ -n "$summarizing" ] && [ ${#summarize[@]} -eq 0 ]; then
    echo "--summarize needs the files of earlier --raw runs" >&2
    exit 2
fi
# summary FILE...: the medians and ratios of the repetitions recorded in the files
summary() {
/usr/bin/python3 - "$@" <<'PY'
import json, re, statistics, sys
ours, peer, tokens, thread_spreads, peaks, builds, threads = {}, {}, {}, [], [], set(), set()
work = {}  # per mode: the matrix products' GFLOP a step (model/flops.h)
def records(paths):  # (file, line number, who, mode, rest) of each line; any other line stops
    for path in paths:
        try:
            lines = open(path).read().splitlines()
        except OSError as err:
            sys.exit(f"{path}: cannot read ({err.strerror})")
        for n, line in enumerate(lines, 1):
            parts = line.split(" ", 2)
            if len(parts) < 3 or parts[0] not in ("OURS", "PEER") or \
                    parts[1] not in ("concat", "collab"):
                sys.exit(f"{path}:{n}: not a record of bench-vs-torch.sh --raw (expected "
                         f"'OURS|PEER concat|collab ...')")
            yield (path, n, *parts)
for path, n, who, mode, rest in records(sys.argv[1:]):
    try:
        if who == "OURS":
            e = json.loads(rest)
            what = "train" if e["bench"] == "train" else e["mode"]
            if e["bench"] == "train":
                builds.add((e["arch"], e["peak_isa"], e["d_model"]))
                threads.add(e["threads"])
                ours.setdefault((mode, "tokens/s"), []).append(e["tokens_per_s"])
                ours.setdefault((mode, "peak RSS MB"), []).append(e["peak_rss_mb"])
                # ours only: what the peak RSS holds (planned sizes; the rest: code, libraries)
                ours.setdefault((mode, "MB params+grads+Adam"), []).append(
                    e["mb_params"] + e["mb_grads"] + e["mb_adam"])
                ours.setdefault((mode, "MB activations"), []).append(e["mb_acts"])
                ours.setdefault((mode, "MB workspace"), []).append(e["mb_work"])
                # the step split: the matrix products issued through the GEMM interface, the rest
                ours.setdefault((mode, "train ms products"), []).append(e["ms_products"])
                ours.setdefault((mode, "train ms rest"), []).append(e["ms_rest"])
                ours.setdefault((mode, "train ms alone"), []).append(e["ms_products_alone"])
                thread_spreads.append(e["thread_spread_pct"])
                peaks.append(e["peak_gflops"])
                work[mode] = e["gflop_per_step"]
                tokens[mode] = e["tgt_tokens"]
            else:
                ours.setdefault((mode, what + " sent/s"), []).append(e["sentences_per_s"])
            ours.setdefault((mode, what + " GFLOP/s"), []).append(e["gflops"])
            ours.setdefault((mode, what + " %peak"), []).append(e["pct_peak"])
        else:
            kv = dict(re.findall(r"(\w+)=(\S+)", rest))
            if rest.startswith("TORCH"):
                threads.add(int(kv["threads"]))
                peer.setdefault((mode, "tokens/s"), []).append(float(kv["tok_s_median"]))
                peer.setdefault((mode, "peak RSS MB"), []).append(float(kv["peak_rss_MB"]))
            else:
                name = "greedy" if kv["mode"] == "greedy" else "beam"
                peer.setdefault((mode, name + " sent/s"), []).append(float(kv["sent_s"]))
    except (ValueError, KeyError) as err:  # a cut line, or a record of another version
        sys.exit(f"{path}:{n}: a record bench-vs-torch.sh cannot read ({err!r})")
if not thread_spreads:
    sys.exit(f"{' '.join(sys.argv[1:])}: no training records of ours")
if len(builds) > 1:  # concat and collab share a build and a d_model
    sys.exit("the records mix builds or configs (summarize runs of one --isa and --config): "
             + ", ".join(f"{a} build, {i} loop, d_model {d}" for a, i, d in sorted(builds)))
if len(threads) > 1:
    sys.exit("the records mix thread counts (summarize runs of one --threads): "
             + ", ".join(map(str, sorted(threads))))
# the build, and per training run the FMA peak and how far apart the threads ran in its FMA loop:
# the host's share of the noise
(arch, isa, _), nthreads = builds.pop(), threads.pop()
print(f"ours: {arch} build; FMA peak {statistics.median(peaks):.0f} GFLOP/s ({isa} loop; "
      f"{min(peaks):.0f}-{max(peaks):.0f}); {nthreads} thread{'s' if nthreads > 1 else ''}, "
      f"{statistics.median(thread_spreads):.0f}% apart ({min(thread_spreads):.0f}-"
      f"{max(thread_spreads):.0f}%); medians of the training runs")
print(f"{'attention':10s} {'measure':20s} {'ours':>10s} {'pytorch':>10s} {'ratio':>7s} "
      f"{'per run':>11s}")
for key in sorted(ours):
    o = statistics.median(ours[key])
    if key not in peer:  # ours only: the matrix products' work (model/flops.h), memory by use
        print(f"{key[0]:10s} {key[1]:20s} {o:10.1f} {'-':>10s} {'-':>7s}")
        continue
    p = statistics.median(peer[key])
    # the ratios of the repetitions, each ours against the PyTorch run right after it: how far
    # the machine's noise moves one comparison
    runs = [a / b for a, b in zip(ours[key], peer[key])]
    run_range = f"{min(runs):.2f}-{max(runs):.2f}" if len(runs) > 1 else "-"
    print(f"{key[0]:10s} {key[1]:20s} {o:10.1f} {p:10.1f} {o / p:7.2f} {run_range:>11s}")
# what the training target (PyTorch's tokens/s times 2 with AVX-512, 1.3 with AVX2) would ask
# of the step, against the products' own time in the step and alone (each product run a few
# times in a row on operands of its own, the fastest run counted)
target = 2.0 if isa == "avx512" else 1.3
peak = statistics.median(peaks)
for mode in sorted(tokens):
    peer_rate = statistics.median(peer[(mode, "tokens/s")])
    budget = 1e3 * tokens[mode] / (target * peer_rate)
    products = statistics.median(ours[(mode, "train ms products")])
    rest = statistics.median(ours[(mode, "train ms rest")])
    alone = statistics.median(ours[(mode, "train ms alone")])
    print(f"{mode}: {target}x PyTorch's training ({isa}) is a step of {budget:.0f} ms; ours "
          f"takes {products:.0f} ms in the matrix products (alone {alone:.0f}) and {rest:.0f} ms "
          f"in everything else")
    # the same as shares of the FMA peak (the runs' median): PyTorch's step does the same work (the
    # same model and batch), so both sides' median tokens/s are put in GFLOP/s by our count of it
    theirs = 100 * work[mode] * peer_rate / tokens[mode] / peak
    mine = 100 * work[mode] * statistics.median(ours[(mode, "tokens/s")]) / tokens[mode] / peak
    print(f"{mode}: PyTorch's step runs at {theirs:.1f}% of the FMA peak by our count of its work "
          f"({work[mode]:.2f} GFLOP), so {target}x asks ours at {target * theirs:.1f}%; ours runs "
          f"at {mine:.1f}%")
PY
}
if [ ${#summarize[@]} -gt 0 ]; then
    summary "${summarize[@]}"
    exit
fi
case $config in
    small) concat_cfg=(-c configs/bench-small.yaml) collab_cfg=(-c configs/bench-small-collab.yaml)
           peer_config=tiny steps=() ;;
    base) concat_cfg=(-c configs/transformer-base.yaml)
          collab_cfg=(-c configs/transformer-base.yaml -c configs/collab-dk128.yaml)
          peer_config=base steps=(--warmup 1 --steps 3) ;;
    *) echo "--config: expected small or base, not '$config'" >&2; exit 2 ;;
esac
ours_env=() peer_env=()
case $isa in
    native) nmt=${NMT:-build/release/bin/nmt} ;;
    avx2)
        if [ -z "${NMT:-}" ]; then
            cmake -S . -B build/x86-64-v3 -DCMAKE_BUILD_TYPE=Release -DNMT_ARCH=x86-64-v3 >/dev/null
            cmake --build build/x86-64-v3 -j "$(nproc)" --target nmt >/dev/null
        fi
        nmt=${NMT:-build/x86-64-v3/bin/nmt}
        ours_env=(OPENBLAS_CORETYPE=Haswell)
        peer_env=(ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell) ;;
    *) echo "--isa: expected native or avx2, not '$isa'" >&2; exit 2 ;;
esac
torch=${NMT_SHARED:-../shared}/peers/torch_transformer_bench.py
# PyTorch in the environment its published anchors use (../shared/peers/run_all.sh): waiting
# OpenMP threads sleep, and glibc keeps freed memory rather than unmapping and faulting it in again
# every step (first touches are slow in VMs)
peer_tuned=(OMP_WAIT_POLICY=PASSIVE
            GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736)
threads=${threads:-$(nproc)}
[ -x "$nmt" ] || { echo "build first (scripts/demo.sh or cmake): $nmt is missing" >&2; exit 1; }
[ -f "$torch" ] || { echo "$torch is missing" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || {
    echo "PyTorch is missing for /usr/bin/python3: install Debian's python3-torch" \
         "(apt-get install python3-torch)" >&2
    exit 1
}
# native: OpenBLAS (PyTorch's matrix products, and ours where `auto` picks it) runs the core it
# picks for this CPU, whatever OPENBLAS_CORETYPE the environment sets; where that is a fallback
# (e.g. an AVX-512 CPU OpenBLAS does not recognise), the core nmt's warning names
if [ $isa = native ]; then
    unset OPENBLAS_CORETYPE
    core=$("$nmt" bench gemm --backends openblas --shapes attn_qk_64 --threads 1 --reps 1 2>&1 |
        sed -n 's/.*set OPENBLAS_CORETYPE=\([A-Za-z0-9]*\).*/\1/p' | head -1)
    [ -n "$core" ] && ours_env=(OPENBLAS_CORETYPE="$core") && peer_env=(OPENBLAS_CORETYPE="$core")
fi
echo "ISA $isa: ours ${ours_env[*]:-} $nmt; PyTorch ${peer_env[*]:-}" >&2
out=$(mktemp) err=$(mktemp) pair=$(mktemp)  # all records; one pair of ours and PyTorch's
trap 'rm -f "$out" "$err" "$pair"' EXIT
# run WHAT COMMAND...: the command's standard output; if it fails, WHAT, the command and the end
# of its standard error, and the script stops
run() {
    local what=$1
    shift
    "$@" 2>"$err" || { echo "$what failed: $*" >&2; tail -n 20 "$err" >&2; exit 1; }
}
[ -z "$raw" ] || : >> "$raw" || { echo "--raw: cannot write $raw" >&2; exit 1; }
for r in $(seq 1 "$reps"); do
    for mode in concat collab; do
        cfg=("${concat_cfg[@]}")
        targs=(--attn concat)
        [ $mode = collab ] && cfg=("${collab_cfg[@]}") && targs=(--attn collab --dkt 128)
        [ $config = small ] && targs+=(--decode)
        echo "rep $r: $mode" >&2
        run "our training" env "${ours_env[@]}" "$nmt" bench train "${cfg[@]}" \
            --set train.threads="$threads" "${steps[@]}" --json | sed "s/^/OURS $mode /" >> "$pair"
        [ $config = small ] && run "our decoding" env "${ours_env[@]}" "$nmt" bench decode \
            "${cfg[@]}" --set train.threads="$threads" --json | sed "s/^/OURS $mode /" >> "$pair"
        run PyTorch env "${peer_env[@]}" "${peer_tuned[@]}" /usr/bin/python3 "$torch" \
            --config $peer_config "${targs[@]}" "${steps[@]}" --threads "$threads" |
            { grep -E '^(TORCH|DECODE)' || true; } | sed "s/^/PEER $mode /" >> "$pair"
        # a pair is kept whole or not at all, so that pooled files pair ours and PyTorch's in order
        cat "$pair" >> "$out"
        [ -z "$raw" ] || cat "$pair" >> "$raw"
        : > "$pair"
    done
done
summary "$out"
