#!/usr/bin/env bash
# scripts/tune-lenpen.sh -m CKPT [-m CKPT ...] --src VALID.src --ref VALID.ref
#                        [--lenpen 0,0.6,1.0,1.4] [--beam 1,4,8] [--lenpen-form gnmt|fairseq]
#                        [--out DIR] [nmt eval options ...]
# Tunes the length penalty and the beam on the VALIDATION set (never the test set): runs
# `nmt eval` (several -m: an ensemble) for every cell of the grid, prints a table of BLEU (rows:
# lenpen, columns: beam) and the best cell, chosen by BLEU on that set (a tie keeps the first
# cell in the order of the grid), with the flags to decode the test set with. The validation text
# `nmt prepare` wrote is DATA_DIR/valid.src and DATA_DIR/valid.tgt. With --out, each cell's
# eval JSON and translations are kept in DIR (beamB-lenpenA.json, .hyp) and the table is
# written to DIR/lenpen.md. Other options (--batch-tokens, --threads, --max-len-a ...) go to
# nmt eval as they are.
# nmt is $NMT, else the one on PATH, else the repository's build.
set -euo pipefail
models=() extra=() src="" ref="" lenpens=0,0.6,1.0,1.4 beams=1,4,8 out=""
while [ $# -gt 0 ]; do
    case "$1" in
        -m|--model) models+=(-m "$2"); shift ;;
        --src) src=$2; shift ;;
        --ref) ref=$2; shift ;;
        --lenpen) lenpens=$2; shift ;;
        --beam) beams=$2; shift ;;
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        -*) [ $# -ge 2 ] || { echo "tune-lenpen.sh: option $1 needs a value" >&2; exit 2; }
            extra+=("$1" "$2"); shift ;;
        *) echo "tune-lenpen.sh: unexpected argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ ${#models[@]} -gt 0 ] && [ -n "$src" ] && [ -n "$ref" ] ||
    { echo "tune-lenpen.sh: -m, --src and --ref are required (see --help)" >&2; exit 2; }
nmt=${NMT:-$(command -v nmt || true)}
[ -n "$nmt" ] || nmt=$(cd "$(dirname "$0")/.." && pwd)/build/release/bin/nmt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=${out:-$tmp}
mkdir -p "$dir"
IFS=, read -r -a B <<< "$beams"
IFS=, read -r -a L <<< "$lenpens"
table="| lenpen \\ beam |"
rule="|---|"
for b in "${B[@]}"; do table+=" $b |"; rule+="---|"; done
table+=$'\n'"$rule"
best="" best_bleu=-1
for a in "${L[@]}"; do
    row="| $a |"
    for b in "${B[@]}"; do
        cell=$dir/beam$b-lenpen$a
        "$nmt" eval "${models[@]}" --src "$src" --ref "$ref" --beam "$b" --lenpen "$a" \
            "${extra[@]}" -o "$cell.hyp" > "$cell.json" 2> "$cell.err" ||
            { cat "$cell.err" >&2; exit 1; }
        bleu=$(grep -o '"bleu":[0-9.]*' "$cell.json" | cut -d: -f2)
        echo "beam $b lenpen $a: BLEU $bleu" >&2
        row+=" $bleu |"
        if awk -v x="$bleu" -v y="$best_bleu" 'BEGIN { exit !(x > y) }'; then
            best_bleu=$bleu best="--beam $b --lenpen $a"
        fi
    done
    table+=$'\n'"$row"
done
form=$(grep -o '"lenpen_form":"[a-z]*"' "$cell.json" | cut -d'"' -f4)
{
    echo "BLEU on $src (length penalty form $form)"
    echo
    echo "$table"
    echo
    echo "best on $src: $best (BLEU $best_bleu)"
} | tee ${out:+"$out/lenpen.md"}
