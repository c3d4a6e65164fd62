#!/usr/bin/env bash
# scripts/test.sh: the one test command. Installs missing Debian packages, builds a Release and an
# ASan+UBSan build, and runs every test through ctest in both; then builds the libFuzzer targets
# with clang and runs each for a fixed number of inputs from seed 1 (scripts/fuzz.sh; about a
# minute on 2 cores; NMT_FUZZ_RUNS changes the number).
#   NMT_DATA    data directory (default ../shared/data beside the repository)
#   NMT_JOBS    build and test parallelism (default: number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
nmt_install_deps

jobs=${NMT_JOBS:-$(nproc)}
run_suite() {  # build dir, cmake options...
    local dir=$1
    shift
    cmake -S . -B "$dir" "$@" >/dev/null
    cmake --build "$dir" -j "$jobs"
    (cd "$dir" && ctest --output-on-failure --timeout 900 -j "$jobs")
}

echo "== Release build =="
run_suite build/release -DCMAKE_BUILD_TYPE=Release
echo "== ASan+UBSan build =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_suite build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNMT_SANITIZE=ON
echo "== Fuzz targets (clang, libFuzzer, ASan+UBSan) =="
nmt_install_deps clang libfuzzer-14-dev libclang-rt-14-dev libomp-14-dev
NMT_JOBS=$jobs scripts/fuzz.sh --runs "${NMT_FUZZ_RUNS:-20000}" all
