# scripts/deps.sh: sourced by test.sh and demo.sh. Installs the Debian packages the build needs,
# only those missing, non-interactively (run as root, or with sudo available).
NMT_DEBIAN_PACKAGES="build-essential cmake pkg-config zlib1g-dev libyaml-dev libopenblas-openmp-dev libsentencepiece-dev libopenmpi-dev openmpi-bin"

nmt_install_deps() {
    local missing=() p
    for p in $NMT_DEBIAN_PACKAGES "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
