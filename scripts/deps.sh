#!/usr/bin/env bash
# Installs every Debian package Vigil needs to build, test and benchmark.
# The one list of dependencies: add a package here, nowhere else.
# Usage: scripts/deps.sh [build|test|bench]   (each level includes the previous)
set -euo pipefail
level=${1:-build}

build_pkgs=(build-essential cmake ninja-build ccache pkg-config
  libboost-dev libzstd-dev zlib1g-dev libsqlite3-dev libre2-dev libuchardet-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev
  libcurl4-openssl-dev libssl-dev)
# The web UI is bundled with node/npm (scripts/web.sh); Debian's nodejs and npm
# are installed only when no npm is present (another node install would conflict).
command -v npm >/dev/null 2>&1 || build_pkgs+=(nodejs npm)
# chromium drives the UI's browser test; the CJK fonts make Chinese legible in
# its screenshots.
# python3-prometheus-client is the real peer of the push test (push_to_gateway);
# python3-torch and python3-tqdm run a real training loop (torch_e2e_test);
# python3-aiosmtpd is the real SMTP server of notify_email_sms_e2e_test.
test_pkgs=(prometheus prometheus-node-exporter python3 python3-prometheus-client python3-aiosmtpd curl procps chromium
  fonts-noto-cjk python3-torch python3-tqdm)
bench_pkgs=(libbenchmark-dev victoria-metrics netdata rsyslog ripgrep zstd)

pkgs=("${build_pkgs[@]}")
case "$level" in
  build) ;;
  test) pkgs+=("${test_pkgs[@]}") ;;
  bench) pkgs+=("${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
  *) echo "usage: $0 [build|test|bench]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "vigil: installing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# Packaged daemons (prometheus, node-exporter, netdata) must not start as services:
# Vigil's tests and benchmarks run them by hand on private ports.
policy_added=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
  $SUDO chmod +x /usr/sbin/policy-rc.d
  policy_added=1
fi
trap '[ -n "$policy_added" ] && $SUDO rm -f /usr/sbin/policy-rc.d' EXIT
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
