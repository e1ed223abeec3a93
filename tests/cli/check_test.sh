#!/usr/bin/env bash
# End-to-end checks of `bindersim check`: exit codes 0 (within tolerance), 1 (regression) and
# 2 (bad input: one line on stderr naming the file, and nothing on stdout).
#
# usage: check_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"

# expect NAME CODE [REGEX]: the last run exited CODE and, if given, its output matches REGEX
# (stdout for 0 and 1; for 2, the single stderr line, with stdout empty).
expect() {
  local name=$1 code=$2 pattern=${3:-}
  if [[ $rc -ne $code ]]; then
    fail "$name" "exit $rc, expected $code; stderr: $(head -c 300 "$TMP/err")"
    return
  fi
  if [[ $code -eq 2 ]]; then
    if [[ -s "$TMP/out" ]]; then
      fail "$name" "wrote to stdout on bad input"
      return
    fi
    if [[ $(wc -l <"$TMP/err") -ne 1 ]]; then
      fail "$name" "expected one stderr line, got: $(head -c 300 "$TMP/err")"
      return
    fi
    if [[ -n $pattern ]] && ! grep -Eq -- "$pattern" "$TMP/err"; then
      fail "$name" "stderr does not match /$pattern/: $(cat "$TMP/err")"
      return
    fi
  elif [[ -n $pattern ]] && ! grep -Eq -- "$pattern" "$TMP/out"; then
    fail "$name" "stdout does not match /$pattern/: $(tail -n 3 "$TMP/out")"
    return
  fi
  pass "$name"
}

# edit IN OUT PYTHON: writes OUT, the JSON of IN with the Python statement applied to `d`.
edit() {
  python3 -S - "$1" "$2" "$3" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
exec(sys.argv[3])
with open(sys.argv[2], "w") as f:
    json.dump(d, f, indent=2)
PY
}

# --- a baseline from a real run --------------------------------------------------------------
run run "$ROOT/scenarios/schd-dbg.json" --selector ctabs --set clients.0.iterations=200 \
  --out "$TMP/base.json"
if [[ $rc -ne 0 ]]; then
  fail "bindersim run writes a baseline" "exit $rc: $(head -c 300 "$TMP/err")"
  summary
  exit 1
fi
BASE="$TMP/base.json"
# Which tiers carry calls differs by model version: pick the largest one of SCHED_OTHER.
TIER=$(python3 -S -c '
import json, sys
t = json.load(open(sys.argv[1]))["tiers"]["sched_other"]
print(max(t, key=lambda k: t[k]["share"]))' "$BASE")

# --- exit 0 ----------------------------------------------------------------------------------
run check "$BASE" --baseline "$BASE"
expect "a result checked against itself exits 0" 0 "^check: OK: all [0-9]+ gated metrics"

edit "$BASE" "$TMP/small.json" "
t = d['tiers']['sched_other']['$TIER']
t['mean_ns'] = t['mean_ns'] * 103 // 100"
run check "$TMP/small.json" --baseline "$BASE"
expect "a tier mean 3% higher is within the default ±5% (exit 0)" 0 \
  "^tiers\.sched_other\.$TIER\.mean_ns .* OK$"

edit "$BASE" "$TMP/seed.json" "d['seed'] = 99"
run check "$TMP/seed.json" --baseline "$BASE"
expect "another seed alone is reported, not a failure (exit 0)" 0 "^seed .* info$"

run check "$BASE" --baseline "$BASE" --exact
expect "--exact on identical documents exits 0" 0 "^check: OK: identical runs"

edit "$BASE" "$TMP/version.json" "d['provenance']['version'] = '99.0.0'"
run check "$TMP/version.json" --baseline "$BASE" --exact
expect "--exact ignores provenance.version (exit 0)" 0 "^check: OK: identical runs"

run check --help
expect "--help exits 0 and lists the default tolerances" 0 "tiers\.share +±2 percentage points"

# --- exit 1 ----------------------------------------------------------------------------------
edit "$BASE" "$TMP/slow.json" "
for t in d['tiers']['sched_other'].values():
    t['mean_ns'] = t['mean_ns'] * 3 // 2"
run check "$TMP/slow.json" --baseline "$BASE"
expect "tier means 50% higher exit 1" 1 "^tiers\.sched_other\.$TIER\.mean_ns .*\+50\.00%.* FAIL \(higher\)$"
if grep -q "^check: REGRESSION: " "$TMP/out"; then
  pass "the regression verdict is printed"
else
  fail "the regression verdict is printed" "$(tail -n 1 "$TMP/out")"
fi

edit "$BASE" "$TMP/fast.json" "
t = d['tiers']['sched_other']['$TIER']
t['p99_ns'] = t['p99_ns'] // 2"
run check "$TMP/fast.json" --baseline "$BASE"
expect "a p99 halved (an improvement) also exits 1" 1 "p99_ns .* FAIL \(lower\)$"

edit "$BASE" "$TMP/share.json" "
t = d['tiers']['sched_other']['$TIER']
t['share'] = round(t['share'] - 0.05, 6)"
run check "$TMP/share.json" --baseline "$BASE"
expect "a share 5 points lower exits 1" 1 "^tiers\.sched_other\.$TIER\.share .*-5\.00 pt .* FAIL \(lower\)$"

cat >"$TMP/wide.json" <<'JSON'
{"schema": "bindersim.tolerances/1", "tolerances": {"tiers.share": 6}}
JSON
run check "$TMP/share.json" --baseline "$BASE" --tolerance "$TMP/wide.json"
expect "a tolerance file widening tiers.share to 6 points makes it exit 0" 0 "±6 pt +OK$"

edit "$BASE" "$TMP/selector.json" "d['selector'] = 'fifo'"
run check "$TMP/selector.json" --baseline "$BASE"
expect "another selector exits 1" 1 "^selector .* FAIL \(differs\)$"

run check "$TMP/small.json" --baseline "$BASE" --exact
expect "--exact on a changed tier mean exits 1 and names the field" 1 \
  "^/tiers/sched_other/$TIER/mean_ns "

# A name with control characters stays on its row, escaped, with no terminal escape.
edit "$BASE" "$TMP/control.json" 'd["scenario"] = "a\nb\x1b[31mRED"'
run check "$TMP/control.json" --baseline "$BASE"
expect "a result of another scenario is a regression (exit 1)" 1 '^scenario .* FAIL \(differs\)$'
if grep -qF 'a\nb\x1b[31mRED   differs' "$TMP/out" && ! grep -q $'\x1b' "$TMP/out"; then
  pass "its scenario's newline and escape are printed escaped"
else
  fail "its scenario's newline and escape are printed escaped" "$(grep -a '^scenario' "$TMP/out")"
fi

# --- exit 2 ----------------------------------------------------------------------------------
printf '{\n  "schema": "bindersim.result/1",\n  "seed": 1,,\n}\n' >"$TMP/malformed.json"
run check "$TMP/malformed.json" --baseline "$BASE"
expect "malformed JSON exits 2 naming file, line and column" 2 \
  "^bindersim: $TMP/malformed.json: line 3, column [0-9]+: invalid JSON"

run check "$BASE" --baseline "$TMP/malformed.json"
expect "a malformed baseline exits 2 naming it" 2 "^bindersim: $TMP/malformed.json: line 3"

edit "$BASE" "$TMP/no-tier.json" "del d['tiers']['sched_fifo']['same_core']"
run check "$TMP/no-tier.json" --baseline "$BASE"
expect "a missing tier exits 2 naming the pointer" 2 \
  "^bindersim: $TMP/no-tier.json: /tiers/sched_fifo: missing required key \"same_core\"$"

edit "$BASE" "$TMP/share15.json" "d['tiers']['sched_other']['same_core']['share'] = 1.5"
run check "$BASE" --baseline "$TMP/share15.json"
expect "a share of 1.5 in the baseline exits 2 naming the pointer" 2 \
  "^bindersim: $TMP/share15.json: /tiers/sched_other/same_core/share: expected a number in \[0, 1\], got 1.5$"

echo '{"schema": "bindersim.scenario/1", "name": "x"}' >"$TMP/scenario.json"
run check "$TMP/scenario.json" --baseline "$BASE"
expect "a document of another schema exits 2" 2 \
  "^bindersim: $TMP/scenario.json: /schema: expected \"bindersim.result/1\", got \"bindersim.scenario/1\"$"

run check "$TMP/missing.json" --baseline "$BASE"
expect "a missing file exits 2" 2 "^bindersim: $TMP/missing.json: cannot open file$"

cat >"$TMP/typo.json" <<'JSON'
{"schema": "bindersim.tolerances/1", "tolerances": {"tiers.mean": 8}}
JSON
run check "$BASE" --baseline "$BASE" --tolerance "$TMP/typo.json"
expect "an unknown metric name in a tolerance file exits 2 naming the pointer" 2 \
  "^bindersim: $TMP/typo.json: /tolerances/tiers\.mean: unknown metric name \(did you mean \"tiers\.mean_ns\"\?\)"

run check "$BASE"
expect "a missing --baseline exits 2" 2 "^bindersim check: missing --baseline FILE"
run check --baseline "$BASE"
expect "a missing RESULT exits 2" 2 "^bindersim check: missing RESULT"
run check "$BASE" --baseline "$BASE" --tolerances "$TMP/wide.json"
expect "an unknown option exits 2" 2 "^bindersim check: .*tolerances"
run check "$BASE" --baseline "$BASE" --exact --tolerance "$TMP/wide.json"
expect "--exact with --tolerance exits 2" 2 "^bindersim check: --exact and --tolerance"

summary
