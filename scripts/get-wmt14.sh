#!/usr/bin/env bash
# scripts/get-wmt14.sh [DEST]: downloads the WMT14 English-German data from statmt.org and unpacks
# the files `nmt prepare` reads into DEST (default ./wmt14-data):
#   train: Europarl v7, Common Crawl, News Commentary v9 (about 4.5M pairs, plain text)
#   dev:   newstest2013 (3000 pairs, plain text)
#   test:  newstest2014 full (3003 pairs) and filtered (2737 pairs, the official en-de set), SGM
# The test archives are checked against the md5 sums sacreBLEU uses (a mismatch stops the script);
# the unpacked training and dev files against their published line counts (a mismatch is reported,
# `nmt prepare` then checks that both sides agree). Needs curl or wget, tar, md5sum, ~3.5 GB disk.
set -euo pipefail

dest=${1:-wmt14-data}
mkdir -p "$dest/archives"
cd "$dest"

fetch() {  # url: downloads into archives/ unless it is already there
    local file="archives/${1##*/}"
    [ -s "$file" ] && return 0
    echo "downloading $1"
    if command -v curl >/dev/null; then
        curl -fL --retry 3 -o "$file.part" "$1"
    else
        wget -q --show-progress -O "$file.part" "$1"
    fi
    mv "$file.part" "$file"
}

check_md5() {  # file, expected md5
    local got
    got=$(md5sum "$1" | cut -d' ' -f1)
    [ "$got" = "$2" ] || { echo "error: $1 has md5 $got, expected $2" >&2; exit 1; }
}

check_lines() {  # expected count, files...: warns about a file with another number of lines
    local want=$1 f n
    shift
    for f in "$@"; do
        n=$(wc -l < "$f")
        [ "$n" -eq "$want" ] ||
            echo "warning: $f has $n lines, published: $want (damaged download?)" >&2
    done
}

fetch http://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz
fetch http://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz
fetch http://www.statmt.org/wmt14/training-parallel-nc-v9.tgz
fetch http://www.statmt.org/wmt14/dev.tgz
fetch http://www.statmt.org/wmt14/test-full.tgz
fetch http://www.statmt.org/wmt14/test-filtered.tgz
check_md5 archives/test-full.tgz a8cd784e006feb32ac6f3d9ec7eb389a
check_md5 archives/test-filtered.tgz 84c597844c1542e29c2aff23aaee4310

echo "unpacking"
tar -xzf archives/training-parallel-europarl-v7.tgz \
    training/europarl-v7.de-en.en training/europarl-v7.de-en.de
tar -xzf archives/training-parallel-nc-v9.tgz \
    training/news-commentary-v9.de-en.en training/news-commentary-v9.de-en.de
mkdir -p commoncrawl
tar -xzf archives/training-parallel-commoncrawl.tgz -C commoncrawl \
    commoncrawl.de-en.en commoncrawl.de-en.de
tar -xzf archives/dev.tgz dev/newstest2013.en dev/newstest2013.de
tar -xzf archives/test-full.tgz \
    test-full/newstest2014-deen-src.en.sgm test-full/newstest2014-deen-ref.de.sgm
tar -xzf archives/test-filtered.tgz \
    test/newstest2014-deen-src.en.sgm test/newstest2014-deen-ref.de.sgm

check_lines 1920209 training/europarl-v7.de-en.en training/europarl-v7.de-en.de
check_lines 2399123 commoncrawl/commoncrawl.de-en.en commoncrawl/commoncrawl.de-en.de
check_lines 201288 training/news-commentary-v9.de-en.en training/news-commentary-v9.de-en.de
check_lines 3000 dev/newstest2013.en dev/newstest2013.de

root=$(pwd)
t=$root/training
cat <<EOF
WMT14 EN-DE is in $root (archives/ can be deleted). For the data: section of a config:
  train:
    - {src: $t/europarl-v7.de-en.en, tgt: $t/europarl-v7.de-en.de}
    - {src: $root/commoncrawl/commoncrawl.de-en.en, tgt: $root/commoncrawl/commoncrawl.de-en.de}
    - {src: $t/news-commentary-v9.de-en.en, tgt: $t/news-commentary-v9.de-en.de}
  valid:
    - {src: $root/dev/newstest2013.en, tgt: $root/dev/newstest2013.de}
  test:   # newstest2014: full (3003 pairs, sacreBLEU wmt14/full), then filtered (2737, wmt14)
    - {src: $root/test-full/newstest2014-deen-src.en.sgm,
       tgt: $root/test-full/newstest2014-deen-ref.de.sgm}
    - {src: $root/test/newstest2014-deen-src.en.sgm, tgt: $root/test/newstest2014-deen-ref.de.sgm}
EOF
