#!/usr/bin/env bash
# test_install.sh BUILD_DIR SOURCE_DIR: `cmake --install` into a fresh prefix gives a working
# tree used from another directory: bin/nmt runs, share/nmt/configs holds every preset (read by
# the installed nmt), share/nmt/scripts the user helpers, executable.
set -uo pipefail
build=$1 src=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

cmake --install "$build" --prefix "$prefix/usr" > "$prefix/install.log" 2>&1 ||
    { cat "$prefix/install.log"; fail "cmake --install"; exit 1; }
mkdir "$prefix/elsewhere" && cd "$prefix/elsewhere"
nmt=$prefix/usr/bin/nmt
[ -x "$nmt" ] || fail "no executable at bin/nmt"
"$nmt" --help 2>&1 | grep -q "commands:" || fail "installed nmt --help"

share=$prefix/usr/share/nmt
for cfg in "$src"/configs/*.yaml; do
    name=${cfg##*/}
    cmp -s "$cfg" "$share/configs/$name" || fail "preset $name not installed as is"
done
# The installed nmt reads an installed preset: heads 3 does not divide its d_model 32.
out=$("$nmt" train -c "$share/configs/tiny-test.yaml" --set model.heads=3 2>&1)
echo "$out" | grep -q "d_model" || fail "installed preset not read: $out"

for s in sweep-dk.sh convert-dk.sh tune-lenpen.sh get-wmt14.sh plot-log.py plot-analyze.py; do
    [ -x "$share/scripts/$s" ] || fail "script $s not installed executable"
done
"$share/scripts/sweep-dk.sh" --help | grep -q "concat" || fail "installed sweep-dk.sh --help"
"$share/scripts/convert-dk.sh" --help | grep -q "reparam" || fail "installed convert-dk.sh --help"
"$share/scripts/tune-lenpen.sh" --help | grep -q "lenpen" || fail "installed tune-lenpen.sh --help"
[ -e "$share/scripts/test.sh" ] && fail "a development script is installed"

[ $failed -eq 0 ] && echo "install: all checks passed"
exit $((failed > 0))
