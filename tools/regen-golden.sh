#!/usr/bin/env bash
# Regenerates tests/golden/*.json after an intended model change, then shows what moved.
# Review the diff before committing it: every changed number must have a reason.
#
#   tools/regen-golden.sh                      build dir: build/
#   BINDERSIM_BUILD_DIR=path tools/regen-golden.sh
#
# Each golden is what `bindersim run --out` writes for a shipped scenario scaled down to
# 1000 iterations. Two tests compare with them: tests/golden/check_golden.sh (the same run
# through the CLI and `bindersim check --exact`) and tests/sim/golden_test.cpp (the library
# path). Both ignore provenance.version. The cases are every shipped scenario under every
# selector, as in both tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BINDERSIM_BUILD_DIR:-$root/build}"
iterations=1000

cmake --build "$build" --target bindersim
export BINDERSIM_DATA_DIR="$root"
# Every shipped scenario under every selector the binary registers.
mapfile -t selectors < <("$build/bindersim" run --list-selectors | awk '{print $1}')
cases=()
for file in "$root"/scenarios/*.json; do
  for selector in "${selectors[@]}"; do cases+=("$(basename "$file" .json) $selector"); done
done
for case in "${cases[@]}"; do
  read -r scenario selector <<<"$case"
  out="$root/tests/golden/$scenario-$selector.json"
  "$build/bindersim" run "$root/scenarios/$scenario.json" --selector "$selector" \
    --set "clients.*.iterations=$iterations" --out "$out" >/dev/null
  echo "regenerated $out"
done
# docs/result-schema.md shows the schd-dbg golden as its example (tests/io/schema_test.sh checks).
python3 - "$root/docs/result-schema.md" "$root/tests/golden/schd-dbg-fifo.json" <<'PY'
import sys
doc_path, golden_path = sys.argv[1], sys.argv[2]
doc = open(doc_path).read()
start = doc.index("```json\n", doc.index("`tests/golden/schd-dbg-fifo.json`")) + len("```json\n")
end = doc.index("```", start)
open(doc_path, "w").write(doc[:start] + open(golden_path).read() + doc[end:])
PY
git -C "$root" diff --stat -- tests/golden docs/result-schema.md || true
