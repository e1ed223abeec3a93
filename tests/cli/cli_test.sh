#!/usr/bin/env bash
# End-to-end checks of the bindersim CLI: exit codes, result files, one-line errors and no
# partial output on bad input.
#
# usage: cli_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"
SCENARIO="$ROOT/scenarios/schd-dbg.json"
TOPOLOGY="$ROOT/topologies/sa8155p.json"

# --- run: the shipped schd-dbg under each selector -------------------------------------------
ran=""
for selector in fifo ctabs ctabs-nudge; do
  run run "$SCENARIO" --selector "$selector" --out "$TMP/$selector.json"
  if [[ $rc -eq 0 && -s "$TMP/$selector.json" ]]; then
    pass "run schd-dbg --selector $selector exits 0 and writes the result"
    ran="$ran $selector"
  else
    fail "run schd-dbg --selector $selector exits 0 and writes the result" \
      "exit $rc: $(head -c 300 "$TMP/err")"
  fi
done

run run "$SCENARIO" --selector fifo --out "$TMP/fifo-again.json"
if [[ $rc -eq 0 ]] && cmp -s "$TMP/fifo.json" "$TMP/fifo-again.json"; then
  pass "two runs with the same seed are byte-identical"
else
  fail "two runs with the same seed are byte-identical" "exit $rc"
fi

# Every scenario feature at once (tests/data/scenarios/every-feature.json): runs to its end,
# byte-identical twice, under each selector.
for selector in fifo ctabs ctabs-nudge; do
  run run "$ROOT/tests/data/scenarios/every-feature.json" --selector "$selector" \
    --out "$TMP/every-$selector.json"
  rc_first=$rc
  finished=$(grep -c 'did not finish' "$TMP/err")
  run run "$ROOT/tests/data/scenarios/every-feature.json" --selector "$selector" \
    --out "$TMP/every-$selector-again.json"
  if [[ $rc_first -eq 0 && $rc -eq 0 && $finished -eq 0 ]] &&
    cmp -s "$TMP/every-$selector.json" "$TMP/every-$selector-again.json"; then
    pass "every-feature under $selector finishes its clients, byte-identical twice"
  else
    fail "every-feature under $selector finishes its clients, byte-identical twice" \
      "exit $rc_first/$rc: $(head -c 300 "$TMP/err")"
  fi
done

# --log-level debug: every wakeup decision on stderr, the same for the same run, and the
# result unchanged by the logging.
SHORT=(--set clients.0.iterations=30)
run run "$SCENARIO" "${SHORT[@]}" --out "$TMP/quiet.json"
run run "$SCENARIO" "${SHORT[@]}" --log-level debug --out "$TMP/logged.json"
cp "$TMP/err" "$TMP/log1"
run run "$SCENARIO" "${SHORT[@]}" --log-level debug --out "$TMP/logged.json"
if [[ $rc -eq 0 ]] && grep -q '^\[sched\] \[debug\] \[[0-9]* ns\] wake ' "$TMP/log1" &&
  cmp -s "$TMP/log1" "$TMP/err" && cmp -s "$TMP/quiet.json" "$TMP/logged.json"; then
  pass "--log-level debug logs each wakeup, the same on every run, and leaves the result as is"
else
  fail "--log-level debug logs each wakeup, the same on every run" "exit $rc: $(head -c 300 "$TMP/err")"
fi

run run "$SCENARIO" --selector fifo --seed 2 --out "$TMP/fifo-seed2.json"
[[ $rc -eq 0 ]] || fail "run --seed 2 exits 0" "exit $rc: $(head -c 300 "$TMP/err")"

# The result files, checked in one Python process (its start-up dominates the check time).
# shellcheck disable=SC2086  # $ran is a list of selector names
python3 -S - "$TMP" $ran <<'PY' >"$TMP/checks" 2>&1
import json, os, sys

tmp, selectors = sys.argv[1], sys.argv[2:]
CLASSES = ("sched_fifo", "sched_other")
RELATIONS = ("same_core", "same_cluster", "cross_cluster")
FIELDS = {"count", "share", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns"}

def load(name):
    path = os.path.join(tmp, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None

def check(ok, what):
    print(("PASS  " if ok else "FAIL  ") + what)

results = {s: load(s) for s in selectors}
for s, r in results.items():
    try:
        ok = r["selector"] == s and all(FIELDS <= set(r["tiers"][c][t])
                                        for c in CLASSES for t in RELATIONS)
    except (KeyError, TypeError):
        ok = False
    check(ok, "run schd-dbg --selector %s: result holds all six tiers" % s)
    # schd-dbg makes one call per iteration from each class: 10,000 calls per class.
    try:
        ok = all(sum(r["tiers"][c][t]["count"] for t in RELATIONS) == 10000 for c in CLASSES)
    except (KeyError, TypeError):
        ok = False
    check(ok, "run schd-dbg --selector %s: 10000 calls per scheduling class" % s)

base, seed2 = results.get("fifo"), load("fifo-seed2")
try:
    ok = seed2["seed"] == 2 and (
        seed2["provenance"]["fingerprint"] != base["provenance"]["fingerprint"])
except (KeyError, TypeError):
    ok = False
check(ok, "--seed 2 gives another provenance.fingerprint")

ctabs = results.get("ctabs")
try:
    ok = base["selection"]["decisions"] != ctabs["selection"]["decisions"]
except (KeyError, TypeError):
    ok = False
check(ok, "fifo and ctabs differ in selection.decisions")
PY
tally "$TMP/checks" $?

# --- selector parameters, through --set ------------------------------------------------------
# ctabs-nudge as patched declines every nudge on schd-dbg's sync calls (the caller's CPU is busy
# at selection); without the idle check it applies them. Parameters of a selector the run does
# not use change nothing.
PARAM=kernel.selector_params.ctabs-nudge.check_caller_idle
SHORT_RUN=(--set clients.0.iterations=300)
run run "$SCENARIO" "${SHORT_RUN[@]}" --selector ctabs-nudge --out "$TMP/nudge-patched.json"
rc_patched=$rc
run run "$SCENARIO" "${SHORT_RUN[@]}" --selector ctabs-nudge --set "$PARAM=false" \
  --out "$TMP/nudge-unchecked.json"
rc_unchecked=$rc
run run "$SCENARIO" "${SHORT_RUN[@]}" --selector fifo --out "$TMP/fifo-plain.json"
run run "$SCENARIO" "${SHORT_RUN[@]}" --selector fifo --set "$PARAM=false" \
  --out "$TMP/fifo-with-params.json"
if [[ $rc_patched -eq 0 && $rc_unchecked -eq 0 && $rc -eq 0 ]] &&
  same_run "$TMP/fifo-plain.json" "$TMP/fifo-with-params.json" &&
  python3 - "$TMP" <<'PY'; then
import json, sys
load = lambda name: json.load(open(f"{sys.argv[1]}/{name}.json"))
patched, unchecked = load("nudge-patched"), load("nudge-unchecked")
p, u = patched["selection"]["nudges"], unchecked["selection"]["nudges"]
sys.exit(not (p["applied"] == 0 and p["declined"] > 0 and u["applied"] > 0 and
              u["declined"] == 0 and "selector_params" not in patched and
              unchecked["selector_params"] == {"check_caller_idle": False}))
PY
  pass "ctabs-nudge's check_caller_idle=false applies the nudges the patch declines"
else
  fail "ctabs-nudge's check_caller_idle=false applies the nudges the patch declines" \
    "exit $rc_patched/$rc_unchecked/$rc: $(head -c 300 "$TMP/err")"
fi
# A default spelled out is no parameter at all: the same result, its --set recorded.
run run "$SCENARIO" "${SHORT_RUN[@]}" --selector ctabs-nudge --set "$PARAM=true" \
  --out "$TMP/nudge-explicit.json"
if [[ $rc -eq 0 ]] && same_run "$TMP/nudge-patched.json" "$TMP/nudge-explicit.json" &&
  python3 - "$TMP/nudge-explicit.json" "$PARAM" <<'PY'; then
import json, sys
overrides = json.load(open(sys.argv[1]))["provenance"]["overrides"]
sys.exit(overrides != [["clients.0.iterations", 300], [sys.argv[2], True]])
PY
  pass "ctabs-nudge with check_caller_idle=true spelled out gives the default's result"
else
  fail "ctabs-nudge with check_caller_idle=true spelled out gives the default's result" "exit $rc"
fi
# The result records the parameters, and check holds them to the baseline's.
run check "$TMP/nudge-unchecked.json" --baseline "$TMP/nudge-patched.json"
if [[ $rc -eq 1 ]] && grep -qE '^selector_params .*\{\}.*check_caller_idle.*false' "$TMP/out"; then
  pass "check fails a result whose selector ran with other parameters than the baseline's"
else
  fail "check fails a result whose selector ran with other parameters than the baseline's" \
    "exit $rc: $(grep selector_params "$TMP/out" | head -c 300)"
fi

# --- what a result was made from --------------------------------------------------------------
# The provenance records the scenario's and topology's document hashes and the overrides in the
# order given: by name or by path, with or without overrides, the scenario hash is the file's.
# A copy of the scenario laid out otherwise hashes alike; one with another value does not, and
# check holds the result to the baseline's inputs.
run run schd-dbg --set clients.0.iterations=300 --set kernel.placement=mainline \
  --out "$TMP/inputs-named.json"
rc_named=$rc
python3 - "$SCENARIO" "$TMP/relaid.json" "$TMP/edited.json" <<'PY'
import json, sys
scenario = json.load(open(sys.argv[1]))
json.dump(dict(reversed(list(scenario.items()))), open(sys.argv[2], "w"))  # keys reversed, one line
scenario["description"] += " (edited)"
json.dump(scenario, open(sys.argv[3], "w"), indent=4)
PY
run run "$TMP/relaid.json" --set clients.0.iterations=300 --out "$TMP/inputs-relaid.json"
rc_relaid=$rc
run run "$TMP/edited.json" --set clients.0.iterations=300 --out "$TMP/inputs-edited.json"
rc_edited=$rc
if [[ $rc_named -eq 0 && $rc_relaid -eq 0 && $rc_edited -eq 0 ]] &&
  python3 - "$TMP" <<'PY'; then
import json, sys
load = lambda name: json.load(open(f"{sys.argv[1]}/{name}.json"))["provenance"]
plain, named, relaid, edited = (load(n) for n in ("fifo", "inputs-named", "inputs-relaid",
                                                  "inputs-edited"))
sys.exit(not (plain["overrides"] == [] and
              named["overrides"] == [["clients.0.iterations", 300],
                                     ["kernel.placement", "mainline"]] and
              relaid["overrides"] == [["clients.0.iterations", 300]] and
              plain["scenario_hash"] == named["scenario_hash"] == relaid["scenario_hash"] and
              edited["scenario_hash"] != plain["scenario_hash"] and
              plain["topology_hash"] == named["topology_hash"] == edited["topology_hash"]))
PY
  pass "a result records its scenario's and topology's hashes and its overrides in order"
else
  fail "a result records its scenario's and topology's hashes and its overrides in order" \
    "exit $rc_named/$rc_relaid/$rc_edited: $(head -c 300 "$TMP/err")"
fi
run check "$TMP/inputs-edited.json" --baseline "$TMP/inputs-relaid.json"
if [[ $rc -eq 1 ]] && grep -qE '^scenario_hash .* FAIL \(differs\)' "$TMP/out" &&
  grep -qE '^overrides .* OK' "$TMP/out"; then
  pass "check fails a result made from another scenario document than the baseline's"
else
  fail "check fails a result made from another scenario document than the baseline's" \
    "exit $rc: $(grep -E '^(scenario_hash|overrides) ' "$TMP/out" | head -c 300)"
fi

# --- the topology's values --------------------------------------------------------------------
# --set topology.<path> changes a value of the scenario's topology: the run changes, the
# topology hash stays the file's, the override is recorded, and check holds it to the
# baseline's. The shipped value spelled out gives the plain run.
WAKEUP=$(python3 -S -c 'import json, sys; print(json.load(open(sys.argv[1]))["costs"]["wakeup_ref_ns"])' \
  "$ROOT/topologies/sa8155p.json")
run run "$SCENARIO" "${SHORT_RUN[@]}" --selector fifo \
  --set "topology.costs.wakeup_ref_ns=$((WAKEUP * 4))" --out "$TMP/wakeup-x4.json"
rc_x4=$rc
run run "$SCENARIO" "${SHORT_RUN[@]}" --selector fifo --set "topology.costs.wakeup_ref_ns=$WAKEUP" \
  --out "$TMP/wakeup-same.json"
rc_same=$rc
if [[ $rc_x4 -eq 0 && $rc_same -eq 0 ]] && same_run "$TMP/fifo-plain.json" "$TMP/wakeup-same.json" &&
  python3 - "$TMP" "$((WAKEUP * 4))" <<'PY'; then
import json, sys
load = lambda name: json.load(open(f"{sys.argv[1]}/{name}.json"))["provenance"]
plain, x4 = load("fifo-plain"), load("wakeup-x4")
sys.exit(not (x4["overrides"] == [["clients.0.iterations", 300],
                                  ["topology.costs.wakeup_ref_ns", int(sys.argv[2])]] and
              x4["topology_hash"] == plain["topology_hash"] and
              x4["fingerprint"] != plain["fingerprint"]))
PY
  pass "--set topology.costs.wakeup_ref_ns changes the run and is recorded beside the file's hash"
else
  fail "--set topology.costs.wakeup_ref_ns changes the run and is recorded beside the file's hash" \
    "exit $rc_x4/$rc_same: $(head -c 300 "$TMP/err")"
fi
run check "$TMP/wakeup-x4.json" --baseline "$TMP/fifo-plain.json"
if [[ $rc -eq 1 ]] && grep -qE '^overrides .* FAIL \(differs\)' "$TMP/out" &&
  grep -qE '^topology_hash .* OK' "$TMP/out"; then
  pass "check fails a result run with other topology values than the baseline's"
else
  fail "check fails a result run with other topology values than the baseline's" \
    "exit $rc: $(grep -E '^(topology_hash|overrides) ' "$TMP/out" | head -c 300)"
fi
# A topology value is checked as strictly as the topology file: one line, exit 2, no result.
rm -f "$TMP/bad-topology.json"
run run "$SCENARIO" --set topology.costs.wakeup_refns=1 --out "$TMP/bad-topology.json"
if [[ $rc -eq 2 && ! -e "$TMP/bad-topology.json" && $(wc -l <"$TMP/err") -eq 1 ]] &&
  grep -q "topologies/sa8155p.json (with --set): /costs/wakeup_refns: unknown key" "$TMP/err"; then
  pass "a misspelt topology value is one line naming the topology file and pointer, exit 2"
else
  fail "a misspelt topology value is one line naming the topology file and pointer, exit 2" \
    "exit $rc: $(head -c 300 "$TMP/err")"
fi

# --- listing and help ------------------------------------------------------------------------
run run --list-selectors
missing=""
for selector in fifo ctabs ctabs-nudge; do
  grep -qE "^${selector}[[:space:]]" "$TMP/out" || missing="$missing $selector"
done
if [[ $rc -eq 0 && -z "$missing" ]]; then
  pass "run --list-selectors lists fifo, ctabs, ctabs-nudge"
else
  fail "run --list-selectors lists fifo, ctabs, ctabs-nudge" "exit $rc, missing:$missing"
fi

run run --list-selectors --seed notanumber
if [[ $rc -eq 2 && ! -s "$TMP/out" ]] &&
  grep -q -- '--list-selectors takes no other option; found --seed' "$TMP/err"; then
  pass "run --list-selectors with another option exits 2 instead of ignoring it"
else
  fail "run --list-selectors with another option exits 2 instead of ignoring it" "exit $rc"
fi

for args in "--help" "run --help" "topology --help"; do
  # shellcheck disable=SC2086  # split on purpose
  run $args
  if [[ $rc -eq 0 ]] && grep -qi "example" "$TMP/out"; then
    pass "$args exits 0 and shows an example"
  else
    fail "$args exits 0 and shows an example" "exit $rc"
  fi
done

# --- bad input: exit 2, one line naming file and pointer, no output file ---------------------
# Expects exit 2, exactly one line on stderr containing $2, nothing on stdout and no --out file
# (nor its temporary) left behind. $1 describes the check; the rest are bindersim's arguments.
expect_bad_input() {
  local what=$1 needle=$2
  shift 2
  local out="$TMP/must-not-exist.json"
  run "$@" --out "$out"
  local lines
  lines=$(wc -l <"$TMP/err")
  if [[ $rc -ne 2 ]]; then
    fail "$what" "exit $rc, expected 2"
  elif [[ $lines -ne 1 ]]; then
    fail "$what" "$lines lines on stderr, expected 1"
  elif ! grep -qF -- "$needle" "$TMP/err"; then
    fail "$what" "stderr lacks '$needle': $(cat "$TMP/err")"
  elif [[ -s "$TMP/out" ]]; then
    fail "$what" "stdout not empty"
  elif [[ -e "$out" ]] || compgen -G "$out.*.tmp" >/dev/null; then
    fail "$what" "output file written"
  else
    pass "$what"
  fi
  rm -f "$out" "$out".*.tmp
}

# Bad copies of the shipped files: a wrong type, a missing key, an unknown key, and a topology
# with a bad capacity type that a scenario names by path.
python3 -S - "$SCENARIO" "$TOPOLOGY" "$TMP" <<'PY'
import copy, json, os, sys

scenario, topology = (json.load(open(p)) for p in sys.argv[1:3])
tmp = sys.argv[3]

def write(name, value):
    json.dump(value, open(os.path.join(tmp, name), "w"), indent=2)

d = copy.deepcopy(scenario)
d["clients"][0]["iterations"] = "many"
write("wrong-type.json", d)
d = copy.deepcopy(scenario)
del d["clients"][0]["iteration"]
write("missing-key.json", d)
d = copy.deepcopy(scenario)
d["kernel"]["selecter"] = d["kernel"].pop("selector")
write("unknown-key.json", d)
d = copy.deepcopy(topology)
d["clusters"][1]["capacity_dmips_mhz"] = "big"
write("bad-capacity.json", d)
d = copy.deepcopy(scenario)
d["topology"] = os.path.join(tmp, "bad-capacity.json")
write("uses-bad-topology.json", d)
d = copy.deepcopy(scenario)
d["processes"][0]["cpuset"] = [0, 9]
write("cpuset-cpu.json", d)
d = copy.deepcopy(scenario)
owner = next(p for p in d["processes"] if p["name"] == d["clients"][0]["process"])
owner["cpuset"] = [0, 1]
d["clients"][0]["affinity"] = [4]
write("affinity-outside-cpuset.json", d)
PY

expect_bad_input "scenario with a wrong type: exit 2, one line, no output" \
  "$TMP/wrong-type.json: /clients/0/iterations: expected an integer" \
  run "$TMP/wrong-type.json"

expect_bad_input "scenario with a missing key: exit 2, one line, no output" \
  "$TMP/missing-key.json: /clients/0: missing required key \"iteration\"" \
  run "$TMP/missing-key.json"

expect_bad_input "scenario with an unknown key: exit 2, one line, no output" \
  "$TMP/unknown-key.json: /kernel/selecter: unknown key (did you mean \"selector\"?)" \
  run "$TMP/unknown-key.json"

expect_bad_input "topology with a bad capacity type: exit 2, one line, no output" \
  "$TMP/bad-capacity.json: /clusters/1/capacity_dmips_mhz: expected" \
  run "$TMP/uses-bad-topology.json"

expect_bad_input "cpuset with a CPU the topology lacks: exit 2, one line, no output" \
  "$TMP/cpuset-cpu.json: /processes/0/cpuset: CPU 9 is not in topology" \
  run "$TMP/cpuset-cpu.json"

expect_bad_input "client affinity outside its process's cpuset: exit 2, one line, no output" \
  "$TMP/affinity-outside-cpuset.json: /clients/0/affinity: expected at least one CPU of" \
  run "$TMP/affinity-outside-cpuset.json"

expect_bad_input "unknown --selector: exit 2, names the option, lists the valid selectors" \
  "--selector: unknown selector \"ctabz\" (did you mean \"ctabs\"?); valid selectors: fifo, ctabs, ctabs-nudge" \
  run "$SCENARIO" --selector ctabz

expect_bad_input "a selector parameter of the wrong type: exit 2, at its pointer" \
  "(with --set): /kernel/selector_params/ctabs-nudge/check_caller_idle: expected true or false, got \"maybe\"" \
  run "$SCENARIO" --set kernel.selector_params.ctabs-nudge.check_caller_idle=maybe

expect_bad_input "unknown --placement: exit 2, names the option, lists the valid placements" \
  "--placement: unknown placement \"eas\"; valid placements: mainline, gki, walt" \
  run "$SCENARIO" --placement eas

expect_bad_input "missing scenario file: exit 2, one line" \
  "$TMP/no-such.json" \
  run "$TMP/no-such.json"

# Hostile files and options: each one line, exit 2, nothing written.
mkdir "$TMP/dir.json"
expect_bad_input "a directory as the scenario: exit 2, one line naming it" \
  "$TMP/dir.json: expected a JSON file, got a directory" \
  run "$TMP/dir.json"

printf '{"schema": "bindersim.scenario/1", "name": "\xff"}' >"$TMP/not-utf8.json"
expect_bad_input "a byte that is not UTF-8: exit 2, the whole reason, the byte escaped" \
  "invalid string: ill-formed UTF-8 byte; last read: '\"\\xff'" \
  run "$TMP/not-utf8.json"

# 100000 levels deep: copying it for --set overflowed the stack.
python3 -S -c 'print("[" * 100000 + "]" * 100000)' >"$TMP/deep.json"
expect_bad_input "a document nested 100000 deep, with --set: exit 2, one line" \
  "$TMP/deep.json: line 1, column 257: /0/0/0/" \
  run "$TMP/deep.json" --set seed=2

# A number beyond a double's range escaped the JSON reader as an internal error (exit 3).
sed 's/"seed": 1,/"seed": 1e999,/' "$SCENARIO" >"$TMP/overflow.json"
expect_bad_input "a number beyond a double's range: exit 2, its line and what it is" \
  ": invalid JSON: a number beyond a double's range, got 1e999" \
  run "$TMP/overflow.json"

# The parser took a NUL for the end of the text and ignored what followed.
{ cat "$SCENARIO"; printf '\0garbage'; } >"$TMP/nul.json"
expect_bad_input "text after a NUL character: exit 2, the NUL's position" \
  ": invalid JSON: expected text, got a NUL character" \
  run "$TMP/nul.json"

expect_bad_input "a topology that names no file: exit 2, at the scenario's /topology" \
  "$SCENARIO (with --set): /topology: unknown topology \"sa8155\" (did you mean \"sa8155p\"?)" \
  run "$SCENARIO" --set topology=sa8155

expect_bad_input "--seed -1: exit 2, not wrapped to 2^64 - 1" \
  "--seed: expected an integer in [0, 18446744073709551615], got \"-1\"" \
  run "$SCENARIO" --seed -1

# An error a --set caused says so, also where it is found after the scenario is parsed.
expect_bad_input "a --set topology that is no file: exit 2, marked as with --set" \
  "$SCENARIO (with --set): /topology: expected a topology name or the path of a topology file" \
  run "$SCENARIO" --set topology=/
expect_bad_input "a --set affinity outside the topology: exit 2, marked as with --set" \
  "$SCENARIO (with --set): /clients/0/affinity: CPU 8 is not in topology sa8155p" \
  run "$SCENARIO" --set 'clients.0.affinity=[8]'

# --selector, --placement and --seed win over the scenario: a --set of the same value would be
# recorded in the result without having any effect.
expect_bad_input "--seed with --set seed: exit 2, names the option that chooses" \
  "--set seed: seed is chosen by --seed; drop one of them" \
  run "$SCENARIO" --seed 5 --set seed=6
expect_bad_input "--selector with --set kernel.selector: exit 2" \
  "--set kernel.selector: kernel.selector is chosen by --selector; drop one of them" \
  run "$SCENARIO" --selector ctabs --set kernel.selector=fifo
expect_bad_input "--selector with a --set of the object holding it: exit 2" \
  "--set kernel: kernel holds kernel.selector, which is chosen by --selector; drop one of them" \
  run "$SCENARIO" --selector ctabs --set 'kernel={"selector":"fifo"}'
expect_bad_input "--selector with a --set below the selector: the path's own error" \
  "--set kernel.selector.x=1: \"x\" is below a value that is neither an object nor an array" \
  run "$SCENARIO" --selector ctabs --set kernel.selector.x=1
expect_bad_input "--placement with --set kernel.placement: exit 2" \
  "--set kernel.placement: kernel.placement is chosen by --placement; drop one of them" \
  run "$SCENARIO" --placement walt --set kernel.placement=gki

# --- topology --------------------------------------------------------------------------------
run topology show sa8155p
# The transfer matrix: a header naming cpu0..cpu7, then one row per CPU with 8 numbers.
matrix_ok=$(awk '
  /^Transfer cost/ { in_matrix = 1; next }
  in_matrix && /from\\to/ { header = (NF == 9 && $2 == "cpu0" && $9 == "cpu7"); next }
  in_matrix && $1 ~ /^cpu[0-9]+$/ {
    ok = (NF == 9)
    for (i = 2; i <= NF; ++i) if ($i !~ /^[0-9.]+$/) ok = 0
    rows += ok
  }
  END { print (header && rows == 8) ? "yes" : "no" }' "$TMP/out")
if [[ $rc -eq 0 && $matrix_ok == yes ]]; then
  pass "topology show sa8155p prints the 8x8 transfer matrix"
else
  fail "topology show sa8155p prints the 8x8 transfer matrix" "exit $rc"
fi

run topology show sa8155p --dot
if [[ $rc -eq 0 ]] && head -n 1 "$TMP/out" | grep -q '^digraph' && tail -n 1 "$TMP/out" | grep -q '^}'; then
  pass "topology show sa8155p --dot prints a digraph"
else
  fail "topology show sa8155p --dot prints a digraph" "exit $rc"
fi

# --set changes a value as a run's topology.KEY=VALUE does: the L3 at 45 ns puts 45 in every
# cell between two CPUs, and the shipped file's 34.1 nowhere.
run topology show sa8155p --set topology.shared_caches.0.latency_ns=45
if [[ $rc -eq 0 ]] && grep -qE '^  cpu0 +2\.2( +45){7}$' "$TMP/out" && ! grep -q '34\.1' "$TMP/out"; then
  pass "topology show --set topology.shared_caches.0.latency_ns=45 shows the changed matrix"
else
  fail "topology show --set topology.shared_caches.0.latency_ns=45 shows the changed matrix" \
    "exit $rc: $(grep -E '^  cpu0 ' "$TMP/out")"
fi
run topology show sa8155p --set clients.0.iterations=5
if [[ $rc -eq 2 && ! -s "$TMP/out" && $(wc -l <"$TMP/err") -eq 1 ]] &&
  grep -qF -- '--set "clients.0.iterations=5": expected topology.KEY=VALUE, a value of the topology' \
    "$TMP/err"; then
  pass "topology show --set of a scenario path: exit 2, one line, nothing on stdout"
else
  fail "topology show --set of a scenario path: exit 2, one line, nothing on stdout" "exit $rc"
fi

# --json writes the topology document: the shipped file's as it is, and with --set a file that
# shows, and runs, as the shipped one with the same --set does.
run topology show sa8155p --json
if [[ $rc -eq 0 ]] && python3 -S -c 'import json, sys
sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
  "$TMP/out" "$ROOT/topologies/sa8155p.json"; then
  pass "topology show sa8155p --json prints the shipped document"
else
  fail "topology show sa8155p --json prints the shipped document" "exit $rc"
fi
run topology show sa8155p --json --set topology.costs.context_switch_ref_ns=900
cp "$TMP/out" "$TMP/fast-switch.json"
run topology show "$TMP/fast-switch.json"
cp "$TMP/out" "$TMP/fast-switch.txt"
run topology show sa8155p --set topology.costs.context_switch_ref_ns=900
if [[ $rc -eq 0 ]] && cmp -s "$TMP/out" "$TMP/fast-switch.txt" &&
  grep -q '"context_switch_ref_ns": 900' "$TMP/fast-switch.json"; then
  pass "topology show --json --set writes a topology that shows as the --set one"
else
  fail "topology show --json --set writes a topology that shows as the --set one" "exit $rc"
fi
run run "$SCENARIO" --set clients.0.iterations=200 --set "topology=$TMP/fast-switch.json" \
  --out "$TMP/fast-file.json"
run run "$SCENARIO" --set clients.0.iterations=200 \
  --set topology.costs.context_switch_ref_ns=900 --out "$TMP/fast-set.json"
if python3 -S -c 'import json, sys
a, b = (json.load(open(f))["provenance"]["fingerprint"] for f in sys.argv[1:])
sys.exit(a != b)' "$TMP/fast-file.json" "$TMP/fast-set.json"; then
  pass "a run on the --json topology has the fingerprint of the run with --set"
else
  fail "a run on the --json topology has the fingerprint of the run with --set"
fi
run topology show sa8155p --json --dot
if [[ $rc -eq 2 && ! -s "$TMP/out" ]] && grep -q -- '--dot and --json exclude each other' "$TMP/err"; then
  pass "topology show --json --dot: exit 2, nothing on stdout"
else
  fail "topology show --json --dot: exit 2, nothing on stdout" "exit $rc"
fi

run topology show "$TMP/bad-capacity.json"
if [[ $rc -eq 2 && ! -s "$TMP/out" && $(wc -l <"$TMP/err") -eq 1 ]] &&
  grep -qF "$TMP/bad-capacity.json: /clusters/1/capacity_dmips_mhz: " "$TMP/err"; then
  pass "topology show of a bad topology: exit 2, one line, nothing on stdout"
else
  fail "topology show of a bad topology: exit 2, one line, nothing on stdout" "exit $rc"
fi

# --- --out to something that is not a regular file --------------------------------------------
# A FIFO (like /dev/null or a terminal) is written in place, never renamed over.
mkfifo "$TMP/pipe"
cat "$TMP/pipe" >"$TMP/from-pipe" &
reader=$!
run run "$SCENARIO" --set 'clients.*.iterations=20' --out "$TMP/pipe"
wait "$reader"
if [[ $rc -eq 0 && -p "$TMP/pipe" ]] && grep -q '"schema"' "$TMP/from-pipe"; then
  pass "--out to a FIFO writes through it and leaves it a FIFO"
else
  fail "--out to a FIFO writes through it and leaves it a FIFO" "exit $rc"
fi

# --- command dispatch ------------------------------------------------------------------------
run frobnicate
if [[ $rc -eq 2 ]] && grep -q 'unknown command "frobnicate"' "$TMP/err"; then
  pass "an unknown command exits 2"
else
  fail "an unknown command exits 2" "exit $rc"
fi

run
if [[ $rc -eq 2 && ! -s "$TMP/out" && $(wc -l < "$TMP/err") -eq 1 ]] &&
  grep -q '^bindersim: missing command; valid commands: run, compare' "$TMP/err"; then
  pass "no command exits 2 with one line naming the commands, nothing on stdout"
else
  fail "no command exits 2 with one line naming the commands, nothing on stdout" "exit $rc"
fi

run --help
if [[ $rc -eq 0 ]] && grep -q '^usage: bindersim <command>' "$TMP/out"; then
  pass "--help prints the usage on stdout and exits 0"
else
  fail "--help prints the usage on stdout and exits 0" "exit $rc"
fi

for flag in --version --help; do
  run "$flag" extra
  if [[ $rc -eq 2 && ! -s "$TMP/out" && $(wc -l < "$TMP/err") -eq 1 ]] &&
    grep -q -- "$flag takes no arguments; found \"extra\"" "$TMP/err"; then
    pass "$flag with an argument exits 2 with one line"
  else
    fail "$flag with an argument exits 2 with one line" "exit $rc"
  fi
done

run sweep
if [[ $rc -eq 2 && ! -s "$TMP/out" && $(wc -l < "$TMP/err") -eq 1 ]] &&
  grep -q '^bindersim sweep: missing subcommand; valid subcommands: expand, run, merge' \
    "$TMP/err"; then
  pass "sweep without a subcommand exits 2 with one line"
else
  fail "sweep without a subcommand exits 2 with one line" "exit $rc"
fi

summary
