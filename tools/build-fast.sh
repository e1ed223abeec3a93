#!/usr/bin/env bash
# Builds the fastest bindersim CLI into build-fast/ (binary: build-fast/bindersim): link-time
# optimisation plus profile-guided optimisation trained on the shipped scenarios. Results are
# byte-identical to the plain build's; only the speed differs. Takes about three times as long as
# tools/setup.sh's build (an instrumented build, the training runs, then the final build).
#
#   tools/build-fast.sh                 (after tools/setup.sh has installed the dependencies)
#   BINDERSIM_BUILD_DIR=build-fast tools/bench.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/build-fast"
profiles="$dir/pgo-profiles"
configure() {
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBINDERSIM_TESTS=OFF \
    -DBINDERSIM_LTO=ON -DBINDERSIM_PGO="$1" -DBINDERSIM_PGO_DIR="$profiles" >/dev/null
}

echo "build-fast: instrumented build"
rm -rf "$profiles"
configure GENERATE
cmake --build "$dir" --parallel "$(nproc)" --target bindersim

# Training: every scenario with every selector (short runs), and the placements, so that the
# profiles cover the paths that long runs take.
echo "build-fast: training runs"
export BINDERSIM_DATA_DIR="$root"
train() { "$dir/bindersim" run "$@" >/dev/null; }
for scenario in "$root"/scenarios/*.json; do
  for selector in fifo ctabs ctabs-nudge; do
    train "$scenario" --selector "$selector" --set 'clients.*.iterations=2000'
  done
done
train "$root/scenarios/binder-throughput.json" --set 'clients.*.iterations=20000'
for placement in mainline walt; do
  train "$root/scenarios/binder-throughput.json" --placement "$placement" \
    --set 'clients.*.iterations=2000'
done

echo "build-fast: optimised build"
configure USE
cmake --build "$dir" --parallel "$(nproc)" --target bindersim
echo "build-fast: built $dir/bindersim"
