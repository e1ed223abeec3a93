#!/usr/bin/env bash
# Golden check through the CLI: runs one shipped scenario scaled down exactly as
# tools/regen-golden.sh does, under every selector the binary registers (`run
# --list-selectors`), and requires `bindersim check --exact` to find each result identical to
# tests/golden/<scenario>-<selector>.json (all but provenance.version).
#
# usage: check_golden.sh <path to bindersim binary> <repo root> <scenario>
# Prints one line per selector and a summary "N passed, M failed"; exits non-zero on any
# failure, 2 on bad usage.
set -u

# shellcheck source-path=SCRIPTDIR source=../cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
init_test 3 "<path to bindersim binary> <repo root> <scenario>" "$@"
SCENARIO=$3
# Must match tools/regen-golden.sh and tests/sim/golden_test.cpp.
ITERATIONS=1000

mapfile -t selectors < <("$BIN" run --list-selectors | awk '{print $1}')
((${#selectors[@]} > 0)) || fail "bindersim run --list-selectors names no selector"
for selector in "${selectors[@]}"; do
  golden="$ROOT/tests/golden/$SCENARIO-$selector.json"
  if [[ ! -f "$golden" ]]; then
    fail "$SCENARIO under $selector" "no golden file $golden; run tools/regen-golden.sh"
    continue
  fi
  run run "$ROOT/scenarios/$SCENARIO.json" --selector "$selector" \
    --set "clients.*.iterations=$ITERATIONS" --out "$TMP/result.json"
  if [[ $rc -ne 0 ]]; then
    fail "$SCENARIO under $selector" "bindersim run exited $rc: $(head -c 300 "$TMP/err")"
    continue
  fi
  if run check "$TMP/result.json" --baseline "$golden" --exact && [[ $rc -eq 0 ]]; then
    pass "$SCENARIO under $selector matches $golden"
  else
    cat "$TMP/out"
    fail "$SCENARIO under $selector differs from $golden (exit $rc)" \
      "after an intended model change run tools/regen-golden.sh and review the diff"
  fi
done
summary
