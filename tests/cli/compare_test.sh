#!/usr/bin/env bash
# End-to-end checks of `bindersim compare`: the table, JSON independent of --jobs, --vary
# columns, and one-line errors with exit 2 and no output file on bad input.
#
# usage: compare_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"
SCENARIO="$ROOT/scenarios/schd-dbg.json"
# 200 iterations per client keep every run short.
FAST=(--set clients.0.iterations=200)

# check NAME COMMAND...: passes when COMMAND succeeds.
check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}

# line_matches FILE N REGEX: line N of FILE matches the extended regular expression.
line_matches() {
  local line
  line=$(sed -n "${2}p" "$1")
  [[ $line =~ $3 ]]
}

# --- the table -------------------------------------------------------------------------------
run compare "$SCENARIO" --selectors fifo,ctabs,ctabs-nudge --seeds 3 "${FAST[@]}" --jobs 2 \
  --out "$TMP/jobs2.json"
check "fifo,ctabs,ctabs-nudge --seeds 3 exits 0" test "$rc" -eq 0
check "the header names scenario, topology and seeds" \
  grep -q '^scenario schd-dbg | topology sa8155p | placement gki | seeds 1\.\.3$' "$TMP/out"
check "the heading has a column per selector and Δ% after each non-first one" \
  line_matches "$TMP/out" 2 '^metric.*fifo.*ctabs.*Δ%.*ctabs-nudge.*Δ%$'
for row in "throughput" "latency mean" "latency p50" "latency p99" \
  "SCHED_FIFO same core share" "SCHED_OTHER cross cluster mean" "cpu cycles" \
  "context switches" "selection none idle" "nudges applied" "nudges declined"; do
  check "the table has a row \"$row\"" grep -q "^$row " "$TMP/out"
done
check "means carry a confidence half-width" grep -q '^throughput .* ± ' "$TMP/out"
check "a legend explains the ~ mark" grep -q '~ = not significant' "$TMP/out"
check "the job count is not on stdout" test "$(grep -c thread "$TMP/out")" -eq 0
check "wall time and runs/s go to stderr" grep -q 'runs/s' "$TMP/err"
check "runs that finish give no warning" test "$(grep -c 'did not finish' "$TMP/err")" -eq 0
cp "$TMP/out" "$TMP/table-jobs2"

# --- seeds that would wrap past the largest seed are refused -------------------------------
rm -f "$TMP/wrap.json"
run compare "$SCENARIO" --set seed=18446744073709551615 --seeds 2 --out "$TMP/wrap.json"
check "seeds past 2^64-1 exit 2 with one line and no output file" \
  test "$rc" -eq 2 -a "$(wc -l <"$TMP/err")" -eq 1 -a ! -e "$TMP/wrap.json"
check "the line names the largest scenario seed that fits" \
  grep -q 'expected a scenario seed of at most 18446744073709551614$' "$TMP/err"

# --- runs cut short by the time limit are named on stderr ------------------------------------
run compare "$SCENARIO" --selectors fifo,ctabs --seeds 2 --set time_limit_s=0.05
check "a comparison of runs cut short still exits 0" test "$rc" -eq 0
check "it names the runs whose clients did not finish" grep -q \
  'warning: in 4 of 4 runs the clients did not finish .*: fifo seed 1, fifo seed 2, ctabs seed 1, ctabs seed 2$' \
  "$TMP/err"

# --- --jobs does not change the output -------------------------------------------------------
run compare "$SCENARIO" --selectors fifo,ctabs,ctabs-nudge --seeds 3 "${FAST[@]}" --jobs 1 \
  --out "$TMP/jobs1.json"
check "--jobs 1 exits 0" test "$rc" -eq 0
check "--jobs 1 and --jobs 2 write byte-identical JSON" cmp -s "$TMP/jobs1.json" "$TMP/jobs2.json"
check "--jobs 1 and --jobs 2 print the same table" cmp -s "$TMP/out" "$TMP/table-jobs2"

# The JSON's layout, checked in one Python process.
python3 -S - "$TMP/jobs2.json" <<'PY' >"$TMP/checks" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
def check(name, ok):
    print(("PASS  " if ok else "FAIL  ") + name)
check("JSON top-level keys in order",
      list(d) == ["schema", "scenario", "topology", "seeds", "columns", "runs", "summary"])
check("JSON schema is bindersim.compare/1", d["schema"] == "bindersim.compare/1")
check("JSON seeds are 1, 2, 3", d["seeds"] == [1, 2, 3])
check("JSON has the three columns in order",
      [c["label"] for c in d["columns"]] == ["fifo", "ctabs", "ctabs-nudge"])
check("JSON runs are column by column, seeds in order",
      [(r["column"], r["seed"]) for r in d["runs"]] == [(c, s) for c in range(3) for s in (1, 2, 3)])
check("each run's result is its own selector and seed",
      all(r["result"]["selector"] == d["columns"][r["column"]]["selector"] and
          r["result"]["seed"] == r["seed"] for r in d["runs"]))
p99 = d["summary"]["latency.p99"]
check("summary cells: first column without delta or significance",
      p99["columns"][0]["delta_pct"] is None and p99["columns"][0]["significant"] is None)
check("summary cells: other columns with a delta and a verdict",
      all(c["delta_pct"] is not None and isinstance(c["significant"], bool)
          for c in p99["columns"][1:]))
PY
status=$?
tally "$TMP/checks" "$status" "JSON checker exited with $status"

# --- --vary ----------------------------------------------------------------------------------
run compare "$SCENARIO" --vary kernel.priority_inheritance=android,upstream "${FAST[@]}" \
  --out "$TMP/vary.json"
check "--vary with two values exits 0" test "$rc" -eq 0
check "--vary with two values gives two columns" \
  python3 -S -c 'import json, sys; d = json.load(open(sys.argv[1]))
sys.exit(not ([c["label"] for c in d["columns"]] == ["android", "upstream"] and
              d["columns"][1]["overrides"]["kernel.priority_inheritance"] == "upstream"))' \
  "$TMP/vary.json"
check "--vary columns are headed by their values" \
  line_matches "$TMP/out" 2 'android.*upstream'
check "the header names the varied key, not the --set one all columns share" \
  line_matches "$TMP/out" 1 ' \| seed 1 \| varies kernel\.priority_inheritance$'
# A column's run is the run of its --set and then its --vary value, and records them so.
run run "$SCENARIO" "${FAST[@]}" --set kernel.priority_inheritance=upstream --out "$TMP/upstream.json"
check "a --vary column's result is run --out's with its value as the last --set" \
  python3 -S -c 'import json, sys; d = json.load(open(sys.argv[1]))
run = json.load(open(sys.argv[2]))
sys.exit(not (d["runs"][1]["result"] == run and run["provenance"]["overrides"] ==
              [["clients.0.iterations", 200], ["kernel.priority_inheritance", "upstream"]]))' \
  "$TMP/vary.json" "$TMP/upstream.json"

run compare "$SCENARIO" --selectors fifo,ctabs --vary kernel.priority_inheritance=android,upstream \
  "${FAST[@]}"
check "--selectors with --vary gives a column per (selector, value)" \
  line_matches "$TMP/out" 2 'fifo android.*fifo upstream.*ctabs android.*ctabs upstream'

# A value that is a JSON array keeps its commas: two columns, not four.
run compare "$SCENARIO" --vary 'processes.*.cpuset=[0,1,2,3],[4,5,6,7]' "${FAST[@]}" \
  --out "$TMP/vary-array.json"
check "--vary of JSON arrays splits only between them" \
  python3 -S -c 'import json, sys; d = json.load(open(sys.argv[1]))
sys.exit(not ([c["label"] for c in d["columns"]] == ["[0,1,2,3]", "[4,5,6,7]"] and
              d["columns"][1]["overrides"]["processes.*.cpuset"] == [4, 5, 6, 7]))' \
  "$TMP/vary-array.json"

# A topology value varies like a scenario value; the topology it changes may be chosen by --set.
run compare "$SCENARIO" --vary topology.costs.context_switch_ref_ns=1800,7200 \
  --set topology=sa8155p "${FAST[@]}" --out "$TMP/vary-topology.json"
check "--vary of a topology value exits 0 beside a --set of the topology" test "$rc" -eq 0
check "--vary of a topology value gives columns that differ in their runs, not their topology" \
  python3 -S -c 'import json, sys; d = json.load(open(sys.argv[1]))
a, b = (run["result"]["provenance"] for run in d["runs"])
sys.exit(not ([c["label"] for c in d["columns"]] == ["1800", "7200"] and
              a["topology_hash"] == b["topology_hash"] and a["fingerprint"] != b["fingerprint"] and
              b["overrides"][-1] == ["topology.costs.context_switch_ref_ns", 7200]))' \
  "$TMP/vary-topology.json"

# --- bad input: exit 2, one line, no file ----------------------------------------------------
expect_error() {
  local name=$1
  shift
  rm -f "$TMP/bad.json"
  run compare "$SCENARIO" "${FAST[@]}" "$@" --out "$TMP/bad.json"
  if [[ $rc -ne 2 ]]; then
    fail "$name exits 2" "exit $rc"
  elif [[ $(wc -l <"$TMP/err") -ne 1 ]]; then
    fail "$name prints one line" "$(cat "$TMP/err")"
  elif [[ -e "$TMP/bad.json" ]]; then
    fail "$name writes no file"
  else
    pass "$name: exit 2, one line, no file"
  fi
}
expect_error "an unknown selector" --selectors fifo,nosuch
expect_error "an empty selector name" --selectors fifo,,ctabs
expect_error "--vary without values" --vary kernel.priority_inheritance
expect_error "--vary with an invalid value" --vary kernel.priority_inheritance=android,bogus
expect_error "--vary with an unknown key" --vary kernel.nosuch=1,2
expect_error "--vary with a bad index" --vary clients.00.iterations=20,30
check "--vary with a bad index names --vary" grep -q '^bindersim compare: --vary clients.00.iterations=20: "00" is not an index' \
  "$TMP/err"
expect_error "--vary with a value given twice" --vary kernel.priority_inheritance=android,android
check "--vary with a value given twice quotes the option as given" grep -qx \
  'bindersim compare: --vary kernel.priority_inheritance=android,android: "android" given twice' \
  "$TMP/err"
expect_error "--vary with one value spelt two ways" --vary 'kernel.placement="gki",gki'
check "--vary with one value spelt two ways names both spellings" grep -qx \
  'bindersim compare: --vary kernel.placement="gki",gki: "gki" and gki are the same value' \
  "$TMP/err"
expect_error "--vary with one number spelt two ways" --vary clients.0.iterations=10,1e1
# An open quote or bracket would take the rest of the list into one value.
expect_error "--vary with a quote left open" --vary 'name=a"b,c'
expect_error "--vary with a bracket left open" --vary 'processes.*.cpuset=[0,1,[2,3]'
expect_error "a bad --set" --set clients.7.iterations=3
expect_error "--vary with a topology value out of range" \
  --vary topology.costs.context_switch_ref_ns=1800,-1
expect_error "--vary of a topology value that --set sets too" \
  --vary topology.costs.context_switch_ref_ns=1800,7200 --set topology.costs=null
expect_error "--seeds 0" --seeds 0
# Each run keeps its result until the end: 2^31 - 1 seeds ran out of memory (exit 3).
expect_error "--seeds beyond the bound" --seeds 2147483647
expect_error "--jobs 0" --jobs 0
# 3 selectors x 1,700 values x 2 seeds: more runs than a comparison holds (a sweep's job).
expect_error "more than 10,000 runs" --selectors fifo,ctabs,ctabs-nudge --seeds 2 \
  --vary "kernel.schedutil_rate_limit_us=$(seq -s, 0 1699)"
expect_error "an unknown placement" --placement nosuch
# --selectors and --placement choose for every column: the same option set or varied as well
# would be overridden without a word (the columns' labels would not be what ran).
expect_error "--vary of the selector with --selectors" --selectors fifo,ctabs \
  --vary kernel.selector=fifo,ctabs
expect_error "--set of the selector with --selectors" --selectors fifo --set kernel.selector=ctabs
expect_error "--vary of the placement with --placement" --placement walt \
  --vary kernel.placement=gki,mainline
expect_error "--set of the placement with --placement" --placement gki --set kernel.placement=walt
expect_error "--vary of an object holding the selector with --selectors" --selectors fifo \
  --vary 'kernel={"selector":"fifo"},{"selector":"ctabs"}'
run compare "$SCENARIO" --placement walt --vary kernel.placement=gki,mainline "${FAST[@]}"
check "that error says which option chooses" grep -q 'kernel.placement is chosen by --placement' \
  "$TMP/err"
# A --set of the varied key would be overridden by each column's value (as a sweep refuses).
expect_error "--vary and --set of the same key" --vary clients.0.iterations=100,300
run compare "$SCENARIO" "${FAST[@]}" --vary clients.0.iterations=100,300
check "that error names both options" grep -qx -- 'bindersim compare: --vary clients.0.iterations: clients.0.iterations is also set by --set clients.0.iterations=200; drop one of them' \
  "$TMP/err"
run compare "$SCENARIO" "${FAST[@]}" --set kernel.selector_params.ctabs-nudge.check_caller_idle=false \
  --vary 'kernel.selector_params.ctabs-nudge={},{"check_caller_idle":true}'
check "a --vary around a --set's path is refused too" grep -qx -- 'bindersim compare: --vary kernel.selector_params.ctabs-nudge: kernel.selector_params.ctabs-nudge overlaps --set kernel.selector_params.ctabs-nudge.check_caller_idle=false; drop one of them' \
  "$TMP/err"
run compare "$SCENARIO" "${FAST[@]}" --selectors fifo,ctabs \
  --vary kernel.selector_params.ctabs-nudge.check_caller_idle=true,false
check "a --vary of the parameters of a selector no column runs is refused" grep -qx -- "bindersim compare: --vary kernel.selector_params.ctabs-nudge.check_caller_idle: it changes the parameters of no column's selector (ctabs, fifo), so the columns would be alike; choose the selector it sets with --selectors" \
  "$TMP/err"
run compare "$SCENARIO" "${FAST[@]}" --selectors fifo \
  --vary 'kernel.selector_params={},{"ctabs-nudge":{"check_caller_idle":false}}'
check "so is a --vary of the whole parameters object that changes no column's" grep -q -- \
  "it changes the parameters of no column's selector (fifo)" "$TMP/err"
run compare "$SCENARIO" "${FAST[@]}" --selectors ctabs-nudge \
  --vary 'kernel.selector_params.ctabs-nudge={},{"check_caller_idle":true}'
check "so is a --vary between a default and the same default spelled out" grep -q -- \
  "it changes the parameters of no column's selector (ctabs-nudge)" "$TMP/err"
run compare "$SCENARIO" "${FAST[@]}" --selectors fifo,ctabs-nudge \
  --vary kernel.selector_params.ctabs-nudge.check_caller_idle=true,false
check "a --vary that changes one column's selector runs (fifo's columns as baselines)" \
  test "$rc" -eq 0
run compare "$SCENARIO" --selectors nosuch
check "an unknown selector lists the valid ones" grep -q 'valid selectors: fifo' "$TMP/err"
check "an unknown selector names the option" grep -q -- '--selectors: unknown selector' "$TMP/err"
run compare "$SCENARIO" --placement nosuch
check "an unknown placement names the option" grep -q -- '--placement: unknown placement' \
  "$TMP/err"

# --- help ------------------------------------------------------------------------------------
run compare --help
check "--help exits 0" test "$rc" -eq 0
check "--help shows examples" grep -q '^examples:' "$TMP/out"

summary
