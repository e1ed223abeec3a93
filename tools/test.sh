#!/usr/bin/env bash
# Runs the whole test suite (unit, golden and CLI tests) of an already built tree.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ctest --test-dir "$root/build" --output-on-failure --parallel "$(nproc)"
