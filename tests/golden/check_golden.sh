#!/usr/bin/env bash
# Golden check through the CLI: runs the shipped scenario scaled down exactly as
# tools/regen-golden.sh does, then requires `bindersim check --exact` to find the result
# identical to tests/golden/<scenario>-<selector>.json (all but provenance.version).
#
# usage: check_golden.sh <path to bindersim binary> <repo root> <scenario> <selector>
# Exits 0 when identical, 1 when the result differs (or a step fails), 2 on bad usage.
set -u

# shellcheck source-path=SCRIPTDIR source=../cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
init_test 4 "<path to bindersim binary> <repo root> <scenario> <selector>" "$@"
SCENARIO=$3
SELECTOR=$4
# Must match tools/regen-golden.sh and tests/sim/golden_test.cpp.
ITERATIONS=1000
GOLDEN="$ROOT/tests/golden/$SCENARIO-$SELECTOR.json"

if [[ ! -f "$GOLDEN" ]]; then
  echo "FAIL  no golden file $GOLDEN; run tools/regen-golden.sh"
  exit 1
fi
if ! "$BIN" run "$ROOT/scenarios/$SCENARIO.json" --selector "$SELECTOR" \
  --set "clients.*.iterations=$ITERATIONS" --out "$TMP/result.json" >"$TMP/run.out" 2>&1; then
  echo "FAIL  bindersim run $SCENARIO --selector $SELECTOR:"
  cat "$TMP/run.out"
  exit 1
fi
"$BIN" check "$TMP/result.json" --baseline "$GOLDEN" --exact
rc=$?
if [[ $rc -ne 0 ]]; then
  echo "FAIL  $SCENARIO under $SELECTOR differs from $GOLDEN (exit $rc); after an intended" \
    "model change run tools/regen-golden.sh and review the diff"
  exit 1
fi
echo "PASS  $SCENARIO under $SELECTOR matches $GOLDEN"
