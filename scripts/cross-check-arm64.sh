#!/usr/bin/env bash
# scripts/cross-check-arm64.sh [--install]: proves the arm64 (aarch64) build on an x86 machine.
# Cross-compiles the whole project (NMT_ARCH=generic: no x86 code, the portable micro-kernel and
# OpenBLAS) with Debian's aarch64-linux-gnu toolchain and arm64 libraries into build/arm64, then
# runs the unit tests of the kernels and the model there under qemu-user.
#   --install   first installs what it needs with apt-get: the cross compilers, qemu-user and,
#               after `dpkg --add-architecture arm64`, libopenblas-openmp-dev:arm64,
#               libyaml-dev:arm64, zlib1g-dev:arm64 and libstdc++6:arm64 (SentencePiece's
#               runtime, which the tests linking it load under qemu).
# libsentencepiece-dev:arm64 cannot be installed beside the amd64 package (apt removes that one),
# so its two packages are downloaded (apt-get download) and unpacked into build/arm64/spm.
#   NMT_JOBS    build parallelism (default: number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build/arm64
# the tests of the kernels and the model that take minutes, not hours, under qemu
tests='^test_(gemm|shares|fma_peak|vecmath|flops|attention|determinism)$'
jobs=${NMT_JOBS:-$(nproc)}

if [ "${1:-}" = --install ]; then
    dpkg --add-architecture arm64
    apt-get update
    apt-get install -y gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user pkg-config \
        libopenblas-openmp-dev:arm64 libyaml-dev:arm64 zlib1g-dev:arm64 libstdc++6:arm64
fi
for tool in aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ qemu-aarch64; do
    command -v "$tool" >/dev/null || { echo "$tool is missing: run $0 --install" >&2; exit 1; }
done
libdir=/usr/lib/aarch64-linux-gnu
pcdir=$libdir/pkgconfig
for pc in openblas yaml-0.1 zlib; do
    [ -f "$pcdir/$pc.pc" ] || { echo "arm64 $pc is missing: run $0 --install" >&2; exit 1; }
done
[ -f "$libdir/libstdc++.so.6" ] ||
    { echo "arm64 libstdc++6 is missing: run $0 --install" >&2; exit 1; }

mkdir -p "$dir/spm"
spm=$(cd "$dir/spm" && pwd)
if [ ! -f "$spm/pc/sentencepiece.pc" ]; then
    (cd "$spm" && apt-get download libsentencepiece-dev:arm64 libsentencepiece0:arm64 2>/dev/null &&
        for deb in *.deb; do dpkg -x "$deb" root; done)
    mkdir -p "$spm/pc"
    sed "s|^prefix=.*|prefix=$spm/root/usr|" \
        "$spm/root/usr/lib/aarch64-linux-gnu/pkgconfig/sentencepiece.pc" > "$spm/pc/sentencepiece.pc"
fi

cat > "$dir/toolchain.cmake" <<'TC'
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
TC
export PKG_CONFIG_LIBDIR=$pcdir:/usr/share/pkgconfig:$spm/pc
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$PWD/$dir/toolchain.cmake" -DNMT_ARCH=generic \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$dir" -j "$jobs"
file "$dir/bin/nmt"
# The loader of libc6:arm64 is in /lib; the unpacked SentencePiece is not on its path.
export LD_LIBRARY_PATH=$spm/root/usr/lib/aarch64-linux-gnu
(cd "$dir" && ctest --output-on-failure --timeout 1800 -R "$tests")
