#!/usr/bin/env bash
# scripts/demo.sh [--full] [--attention concat|collab]: the whole pipeline on Multi30k EN->DE.
# Installs what is missing (Debian packages), builds, prepares the data (joint SentencePiece 8k),
# trains configs/multi30k-small.yaml for 25 minutes on the machine's cores (--full: until the
# validation BLEU has not improved for 4 validations), tunes the length penalty on the validation
# set (scripts/tune-lenpen.sh), translates test2016 with beam 4 and prints sacreBLEU-format BLEU
# and chrF. --attention collab trains collaborative attention with D~k = D/4 = 64.
#   NMT_DATA  where multi30k/ lives (default ../shared/data beside the repository); the files
#             are data/task1/raw/{train,val,test_2016_flickr}.{en,de}.gz of
#             https://github.com/multi30k/dataset (rename test_2016_flickr to test2016)
#   NMT_RUNS  where runs go (default runs/)
# Interrupted during training (Ctrl-C), it stops with status 3; the same command resumes it.
set -euo pipefail
demo_command="$0 $*"
cd "$(dirname "$0")/.."
full=0
attention=concat
while [ $# -gt 0 ]; do
    case "$1" in
        --full) full=1 ;;
        --attention) attention=$2; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "demo.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$attention" in concat|collab) ;; *) echo "demo.sh: --attention concat or collab" >&2; exit 2 ;; esac

source scripts/deps.sh
nmt_install_deps
export NMT_DATA=${NMT_DATA:-$(cd .. && pwd)/shared/data}
for f in train val test2016; do
    for l in en de; do
        if [ ! -f "$NMT_DATA/multi30k/$f.$l.gz" ]; then
            echo "demo.sh: $NMT_DATA/multi30k/$f.$l.gz is missing; download Multi30k task 1 from" >&2
            echo "  https://github.com/multi30k/dataset (data/task1/raw) and set NMT_DATA" >&2
            exit 1
        fi
    done
done

echo "== build"
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/release -j "$(nproc)" > /dev/null
nmt=build/release/bin/nmt

runs=${NMT_RUNS:-runs}
name=multi30k-$attention$([ $full = 1 ] && echo -full || true)
run=$runs/$name
sets=(--set "data.dir=$runs/multi30k-data" --set "train.run_dir=$run")
[ "$attention" = collab ] && sets+=(-c configs/collab-dk64.yaml)
[ $full = 1 ] && sets+=(--set train.max_time=0 --set train.max_epochs=60 --set train.patience=4)

echo "== prepare"
$nmt prepare -c configs/multi30k-small.yaml "${sets[@]}"
echo "== train ($run; the log is in $run/train.log)"
status=0
$nmt train -c configs/multi30k-small.yaml "${sets[@]}" || status=$?
if [ $status = 3 ]; then  # nmt train's exit status after SIGINT/SIGTERM
    echo "== training was interrupted; $run/checkpoint.last is saved. To resume, run the same" >&2
    echo "   command again: $demo_command" >&2
    exit 3
fi
[ $status = 0 ] || exit $status

echo "== length penalty: tuned on the validation set (beam 4; table in $run/lenpen/lenpen.md)"
data=$runs/multi30k-data
lenpen=$(NMT=$nmt scripts/tune-lenpen.sh -m "$run/checkpoint.best" --src "$data/valid.src" \
    --ref "$data/valid.tgt" --beam 4 --lenpen 0.6,1.0,1.4,2.0,2.5 --out "$run/lenpen" 2> /dev/null |
    sed -n 's/^best on .*--lenpen \([0-9.]*\) .*/\1/p')
[ -n "$lenpen" ] || { echo "demo.sh: tuning the length penalty failed" >&2; exit 1; }
echo "== translate test2016 (beam 4, lenpen $lenpen)"
gunzip -c "$NMT_DATA/multi30k/test2016.de.gz" > "$run/test2016.ref.de"
$nmt translate -m "$run/checkpoint.best" -i "$NMT_DATA/multi30k/test2016.en.gz" --beam 4 \
    --lenpen "$lenpen" > "$run/test2016.hyp.de"
echo "== test2016 scores (checkpoint.best)"
$nmt bleu "$run/test2016.ref.de" -i "$run/test2016.hyp.de" -m bleu chrf -f text
