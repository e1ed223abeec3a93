#!/usr/bin/env bash
# Installs the Debian packages bindersim needs (when missing) and builds it in Release mode
# into build/ (binary: build/bindersim). Safe to run again: it only does what is missing.
#
#   tools/setup.sh            install dependencies and build
#   BINDERSIM_WERROR=ON tools/setup.sh   treat compiler warnings as errors (CI does this)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
packages=(build-essential cmake ninja-build pkg-config
          libboost-graph-dev libboost-program-options-dev nlohmann-json3-dev libspdlog-dev
          libgtest-dev libgmock-dev libbenchmark-dev python3-jsonschema chromium
          fonts-dejavu-core time mksh)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

werror="${BINDERSIM_WERROR:-OFF}"
[[ "${CI:-}" == "true" ]] && werror=ON
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBINDERSIM_WERROR="$werror" >/dev/null
cmake --build "$root/build" --parallel "$(nproc)"
echo "setup: built $root/build/bindersim"
