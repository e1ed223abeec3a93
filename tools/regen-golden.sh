#!/usr/bin/env bash
# Regenerates tests/golden/*.json after an intended model change, then shows what moved.
# Review the diff before committing it: every changed number must have a reason.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmake --build "$root/build" --target sim_test
BINDERSIM_REGEN_GOLDEN=1 "$root/build/tests/sim_test" --gtest_filter='Shipped/GoldenTest.*'
git -C "$root" diff --stat -- tests/golden
