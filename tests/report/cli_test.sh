#!/usr/bin/env bash
# End-to-end checks of `bindersim report`: a page from a mix of result and compare files, one
# from a sweep summary, byte-identical output, standard output with -o -, and one-line errors with exit 2 and no
# output file (an existing one left as it was) on bad input.
#
# usage: cli_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=../cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"
SCENARIO="$ROOT/scenarios/schd-dbg.json"
FAST=(--set clients.0.iterations=200)

check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}

run compare "$SCENARIO" --selectors fifo,ctabs --seeds 2 "${FAST[@]}" --out "$TMP/cmp.json"
check "compare writes its JSON" test "$rc" -eq 0
run run "$SCENARIO" --selector ctabs-nudge "${FAST[@]}" --out "$TMP/nudge.json"
check "run writes its result" test "$rc" -eq 0

# --- a mix of inputs -------------------------------------------------------------------------
run report "$TMP/cmp.json" "$TMP/nudge.json" -o "$TMP/a.html"
check "report of a compare and a result exits 0" test "$rc" -eq 0
check "report prints nothing on success" test ! -s "$TMP/out" -a ! -s "$TMP/err"
check "the page starts with a doctype" grep -q '^<!DOCTYPE html>$' "$TMP/a.html"
for label in fifo ctabs ctabs-nudge; do
  check "the page names $label in the tier chart" grep -q ">$label</text>" "$TMP/a.html"
done
check "the page has the compare table" grep -q 'id="table-compare-0"' "$TMP/a.html"
check "the page loads nothing from the network" \
  test "$(grep -c -E 'https?://|<script|<link' "$TMP/a.html")" -eq 0
run report "$TMP/cmp.json" "$TMP/nudge.json" -o "$TMP/b.html"
check "the same inputs give a byte-identical page" cmp -s "$TMP/a.html" "$TMP/b.html"
run report "$TMP/cmp.json" "$TMP/nudge.json" -o -
check "-o - writes the same page to standard output" cmp -s "$TMP/out" "$TMP/a.html"
run report "$TMP/cmp.json" -o "$TMP/t.html" --title 'Policies <&> "x"'
check "--title is escaped into the page" \
  grep -q '<h1>Policies &lt;&amp;&gt; &quot;x&quot;</h1>' "$TMP/t.html"

# --- a sweep summary, alone and beside a result ----------------------------------------------
run sweep expand "$ROOT/tests/data/sweeps/small.json" --out "$TMP/runs.jsonl"
run sweep run "$TMP/runs.jsonl" --out-dir "$TMP/sweep"
run sweep merge "$TMP/sweep" --runs "$TMP/runs.jsonl" --out "$TMP/summary.json"
check "sweep merge writes its summary" test "$rc" -eq 0
run report "$TMP/summary.json" -o "$TMP/s.html"
check "report of a sweep summary alone exits 0" test "$rc" -eq 0
check "the sweep page has the sweep's chart" grep -q 'id="chart-sweep-0"' "$TMP/s.html"
check "the sweep page has the sweep's overview" grep -q 'id="table-sweep-0"' "$TMP/s.html"
check "the sweep page has a table per point" \
  test "$(grep -c -E 'id="table-sweep-0-point-[01]"' "$TMP/s.html")" -eq 2
check "the sweep page has no policy charts" test "$(grep -c 'chart-tier-shares' "$TMP/s.html")" -eq 0
run report "$TMP/nudge.json" "$TMP/summary.json" -o "$TMP/s2.html"
check "a result and a sweep summary give both sections" \
  grep -q '1 policy · 1 sweep(s)' "$TMP/s2.html"
run report "$TMP/nudge.json" "$TMP/summary.json" -o "$TMP/s3.html"
check "the same inputs give a byte-identical sweep page" cmp -s "$TMP/s2.html" "$TMP/s3.html"

# --- bad input: exit 2, one line, no file, an existing file untouched -------------------------
printf '{"schema": ' >"$TMP/truncated.json"
python3 -S - "$TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
result = json.load(open(tmp + "/nudge.json"))
result["tiers"]["sched_fifo"]["same_cluster"]["p50_ns"] = "slow"
json.dump(result, open(tmp + "/bad-result.json", "w"))
result = json.load(open(tmp + "/nudge.json"))
result["schema"] = "bindersim.result/9"
json.dump(result, open(tmp + "/bad-schema.json", "w"))
compare = json.load(open(tmp + "/cmp.json"))
compare["runs"][3]["result"]["counters"]["migrations"] = -1
json.dump(compare, open(tmp + "/bad-compare.json", "w"))
summary = json.load(open(tmp + "/summary.json"))
summary["points"][1]["columns"][0]["pooled"]["tiers"]["sched_other"]["same_core"]["count"] = "x"
json.dump(summary, open(tmp + "/bad-summary.json", "w"))
PY

# expect_error NAME PATTERN ARGS...: `report ARGS -o FILE` exits 2 with one line on stderr
# matching PATTERN (extended regular expression) and leaves FILE as it was.
expect_error() {
  local name=$1 pattern=$2
  shift 2
  echo old >"$TMP/kept.html"
  run report "$@" -o "$TMP/kept.html"
  if [[ $rc -ne 2 ]]; then
    fail "$name exits 2" "exit $rc"
  elif [[ $(wc -l <"$TMP/err") -ne 1 ]]; then
    fail "$name prints one line" "$(cat "$TMP/err")"
  elif ! grep -q -E "$pattern" "$TMP/err"; then
    fail "$name names what is wrong" "$(cat "$TMP/err")"
  elif [[ $(cat "$TMP/kept.html") != old ]] || compgen -G "$TMP/kept.html.*" >/dev/null; then
    fail "$name writes no file"
  else
    pass "$name: exit 2, one line, no file"
  fi
}
expect_error "a missing file" "nosuch\.json" "$TMP/nosuch.json"
expect_error "truncated JSON" "truncated\.json" "$TMP/truncated.json"
expect_error "a mistyped result field" \
  'bad-result\.json: /tiers/sched_fifo/same_cluster/p50_ns: expected .*, got "slow"$' \
  "$TMP/bad-result.json"
expect_error "an unknown schema" \
  'bad-schema\.json: /schema: expected "bindersim\.result/1", "bindersim\.compare/1" or "bindersim\.sweep-summary/1"' \
  "$TMP/bad-schema.json"
expect_error "a bad run inside a compare file" \
  'bad-compare\.json: /runs/3/result/counters/migrations: expected a non-negative integer, got -1$' \
  "$TMP/bad-compare.json"
expect_error "a bad pooled run inside a sweep summary" \
  'bad-summary\.json: /points/1/columns/0/pooled/tiers/sched_other/same_core/count: expected .*, got "x"$' \
  "$TMP/bad-summary.json"
expect_error "one bad input among good ones" "bad-result\.json" \
  "$TMP/cmp.json" "$TMP/bad-result.json" "$TMP/nudge.json"

run report "$TMP/cmp.json"
check "a missing --out is a usage error (exit 2)" test "$rc" -eq 2
check "a missing --out is named" grep -q -- '--out' "$TMP/err"
run report -o "$TMP/x.html"
check "no input is a usage error (exit 2)" test "$rc" -eq 2 -a ! -e "$TMP/x.html"
run report --help
check "--help exits 0 and shows examples" grep -q '^examples:' "$TMP/out"

summary
