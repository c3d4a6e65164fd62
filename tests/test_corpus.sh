#!/usr/bin/env bash
# test_corpus.sh NMT: scripts/make-corpus.py against `nmt prepare`. A 20000-pair corpus of the
# WMT14 layout (plain, gzip, CRLF with a byte order mark, SGM test set) with injected defects goes
# through prepare with the filter settings the generator names (corpus.json "exact_with"); the
# manifest's drop counts per reason, and its pairs read and kept per corpus, must equal what the
# generator injected, exactly. The generator is deterministic: a second run gives the same bytes.
set -euo pipefail
NMT=$1
SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../scripts" && pwd)
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"  # into a scratch directory
export NMT_DATA=${NMT_DATA:-$SCRIPTS/../../shared/data}

/usr/bin/python3 "$SCRIPTS/make-corpus.py" 20000 corpus 2> gen.out
/usr/bin/python3 "$SCRIPTS/make-corpus.py" 20000 again 2> /dev/null
for f in $(cd corpus && find . -type f ! -name '*.yaml' ! -name corpus.json); do
    cmp -s "corpus/$f" "again/$f" || { echo "FAIL: make-corpus.py is not deterministic: $f"; exit 1; }
done
passed=$((passed + 1))

read -r min_len max_len ratio < <(/usr/bin/python3 -c '
import json; e = json.load(open("corpus/corpus.json"))["exact_with"]
print(e["data.min_len"], e["data.max_len"], e["data.max_len_ratio"])')
cat > cfg.yaml <<YAML
data:
  dir: prepared
  vocab_size: 400
  spm_input_sentences: 2000
  min_len: $min_len
  max_len: $max_len
  max_len_ratio: $ratio
YAML
"$NMT" prepare -c cfg.yaml -c corpus/data.yaml > prepare.out 2>&1 || { tail -5 prepare.out; exit 1; }

/usr/bin/python3 - <<'PY' || failed=$((failed + 1))
import json, sys
want = json.load(open("corpus/corpus.json"))
got = json.load(open("prepared/manifest.json"))["splits"]["train"]
bad = []
if got["dropped"] != want["dropped"]:
    bad.append(f"dropped {got['dropped']}, injected {want['dropped']}")
if got["pairs_read"] != want["pairs"] or got["pairs_kept"] != want["kept"]:
    bad.append(f"read {got['pairs_read']} kept {got['pairs_kept']}, "
               f"made {want['pairs']} of which {want['kept']} clean")
for g, w in zip(got["corpora"], want["corpora"]):
    if (g["pairs_read"], g["pairs_kept"]) != (w["pairs"], w["kept"]):
        bad.append(f"{w['name']}: read {g['pairs_read']} kept {g['pairs_kept']}, "
                   f"made {w['pairs']} with {w['kept']} clean")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
[ "$failed" -eq 0 ] && passed=$((passed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
