#!/usr/bin/env bash
# End-to-end checks of `bindersim sweep`: expansion, shards merged to the same summary as one
# shard, a deleted result restored byte for byte by rerunning its shard, --index, missing runs,
# and one-line errors with exit 2 and no output on bad input.
#
# usage: sweep_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"
# 2 payload sizes x 2 selectors x 2 seeds = 8 runs of 100 iterations.
SWEEP="$ROOT/tests/data/sweeps/small.json"
RUNS="$TMP/runs.jsonl"

# check NAME COMMAND...: passes when COMMAND succeeds.
check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}

# same_files DIR1 DIR2: both hold the same file names with the same bytes.
same_files() {
  [[ "$(cd "$1" && ls)" == "$(cd "$2" && ls)" ]] || return 1
  local f
  for f in "$1"/*; do cmp -s "$f" "$2/$(basename "$f")" || return 1; done
}

# --- expand ----------------------------------------------------------------------------------
run sweep expand "$SWEEP"
check "expand exits 0" test "$rc" -eq 0
cp "$TMP/out" "$RUNS"
check "expand writes one line per run (8)" test "$(wc -l <"$RUNS")" -eq 8
check "expand counts the runs on stderr" grep -q '8 runs (2 point(s) x 2 selector(s) x 2 seed(s))' \
  "$TMP/err"
run sweep expand "$SWEEP" --out "$TMP/runs-again.jsonl"
check "expanding again gives the same bytes (--out)" cmp -s "$RUNS" "$TMP/runs-again.jsonl"

python3 -S - "$RUNS" <<'PY' >"$TMP/checks" 2>&1
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
def check(name, ok):
    print(("PASS  " if ok else "FAIL  ") + name)
check("lines are indexed 0..7 in order", [r["index"] for r in runs] == list(range(8)))
check("axis outermost, then selector, then seed",
      [(r["axes"][0][1], r["selector"], r["seed"]) for r in runs] ==
      [(p, s, seed) for p in (16, 4096) for s in ("fifo", "ctabs") for seed in (1, 2)])
check("run ids are 16 hex digits, all distinct",
      len({r["run_id"] for r in runs}) == 8 and
      all(len(r["run_id"]) == 16 and int(r["run_id"], 16) >= 0 for r in runs))
check("each run carries the fixed override, then the axis keys",
      all([o[0] for o in r["overrides"]] == ["clients.0.iterations",
          "clients.0.iteration.0.steps.1.payload_bytes", "clients.0.iteration.2.payload_bytes"]
          for r in runs))
PY
status=$?
tally "$TMP/checks" "$status" "runs checker exited with $status"

# --- one shard, three shards -----------------------------------------------------------------
run sweep run "$RUNS" --shard 0/1 --out-dir "$TMP/one"
check "one shard exits 0" test "$rc" -eq 0
check "one shard writes a result per run" test "$(ls "$TMP/one" | wc -l)" -eq 8
ok=1
for i in 0 1 2; do
  run sweep run "$RUNS" --shard "$i/3" --out-dir "$TMP/three" --jobs 2
  [[ $rc -eq 0 ]] || ok=0
done
check "three shards exit 0" test "$ok" -eq 1
check "shards write the same result files as one shard (names and bytes)" \
  same_files "$TMP/one" "$TMP/three"
check "no temporary file is left behind" test -z "$(find "$TMP/one" "$TMP/three" -name '*.tmp')"

run sweep merge "$TMP/one" --runs "$RUNS" --out "$TMP/summary-one.json"
check "merge of one shard exits 0" test "$rc" -eq 0
cp "$TMP/out" "$TMP/table-one"
run sweep merge "$TMP/three" --runs "$RUNS" --out "$TMP/summary-three.json"
check "merge of three shards exits 0" test "$rc" -eq 0
check "three shards merge to a summary byte-identical to one shard's" \
  cmp -s "$TMP/summary-one.json" "$TMP/summary-three.json"
check "and print the same tables" cmp -s "$TMP/out" "$TMP/table-one"
check "a table per payload size, headed by its value" \
  test "$(grep -c '^== payload_bytes=' "$TMP/out")" -eq 2
check "the tables compare fifo and ctabs" grep -q '^metric .*fifo .*ctabs .*Δ%$' "$TMP/out"
check "the legend says values are pooled" grep -q 'histograms merged bucket by bucket' "$TMP/out"

# --across: one table, a row per payload size, fifo's pooled throughput and ctabs's Δ% as the
# summary has them.
run sweep merge "$TMP/one" --runs "$RUNS" --across throughput,latency.p50
check "merge --across exits 0" test "$rc" -eq 0
check "merge --across prints a row per point with the summary's figures" python3 -S - \
  "$TMP/out" "$TMP/summary-one.json" <<'PY'
import json, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
points = json.load(open(sys.argv[2]))["points"]
def delta(metric):
    d = metric["delta_pct"]
    return f"{round(d, 1):+.1f}%" + ("" if metric["significant"] else "~")
rows = [re.split(r" {2,}", line.strip()) for line in lines[3:-1]]
expected = [[str(p["axes"]["payload_bytes"]),
             delta(p["columns"][1]["metrics"]["throughput"]),
             delta(p["columns"][1]["metrics"]["latency.p50"])] for p in points]
sys.exit(not (lines[0] == "sweep small | seeds 1..2 | Δ% against fifo" and
              "throughput (calls/s)" in lines[1] and "latency p50 (us)" in lines[1] and
              re.split(r" {2,}", lines[2].strip()) ==
              ["payload_bytes", "fifo", "ctabs Δ%", "fifo", "ctabs Δ%"] and
              [[r[0], r[2], r[4]] for r in rows] == expected and
              lines[-1].startswith("values pooled over the calls of each point's seeds; ")))
PY

python3 -S - "$TMP/summary-one.json" "$TMP/one" "$RUNS" <<'PY' >"$TMP/checks" 2>&1
import json, os, sys
summary = json.load(open(sys.argv[1]))
runs = {json.loads(l)["run_id"]: json.loads(l) for l in open(sys.argv[3])}
def check(name, ok):
    print(("PASS  " if ok else "FAIL  ") + name)
check("summary keys in order",
      list(summary) == ["schema", "sweep", "axes", "metrics", "runs", "points"])
check("summary counts 8 listed and 8 merged runs, none missing",
      summary["runs"]["listed"] == 8 and summary["runs"]["merged"] == 8 and
      summary["runs"]["missing"] == [])
check("two points in sweep order",
      [p["axes"] for p in summary["points"]] == [{"payload_bytes": 16}, {"payload_bytes": 4096}])
# The pooled latency count of each column is the sum of its runs' counts, read from the files.
ok = True
for point in summary["points"]:
    for column in point["columns"]:
        counts = [json.load(open(os.path.join(sys.argv[2], rid + ".json")))["result"]["latency"]
                  ["count"] for rid in column["run_ids"]]
        ok &= column["pooled"]["latency"]["count"] == sum(counts) and len(counts) == 2
check("each column pools the latency counts of its two seeds", ok)
record = json.load(open(os.path.join(sys.argv[2], sorted(os.listdir(sys.argv[2]))[0])))
check("a result file holds schema, run, result and exact data",
      list(record) == ["schema", "run", "result", "exact"] and
      record["result"]["schema"] == "bindersim.result/1" and
      record["run"] == runs[record["run"]["run_id"]])
check("its latency histogram buckets add up to the result's count",
      sum(c for _, c in record["exact"]["latency"]["buckets"]) ==
      record["result"]["latency"]["count"])
provenance = record["result"]["provenance"]
check("its result was made from the run's scenario file and overrides",
      provenance["scenario_hash"] == record["run"]["scenario_hash"] and
      provenance["overrides"] == record["run"]["overrides"])
check("each column's pooled run keeps what its runs were made from",
      all(column["pooled"]["provenance"]["overrides"] == runs[column["run_ids"][0]]["overrides"]
          for point in summary["points"] for column in point["columns"]))
PY
status=$?
tally "$TMP/checks" "$status" "summary checker exited with $status"

# A sweep run gives what `bindersim run` gives with the same overrides, selector and seed.
python3 -S - "$RUNS" 5 >"$TMP/run5" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2])]
args = [r["scenario"], "--selector", r["selector"], "--placement", r["placement"],
        "--seed", str(r["seed"])]
for key, value in r["overrides"]:
    args += ["--set", key + "=" + json.dumps(value)]
print(r["run_id"])
print("\n".join(args))
PY
mapfile -t run5 <"$TMP/run5"
run run "${run5[@]:1}" --out "$TMP/direct.json"
check "bindersim run with run 5's options exits 0" test "$rc" -eq 0
check "run 5's result equals bindersim run's" python3 -S -c '
import json, sys
sys.exit(json.load(open(sys.argv[1]))["result"] != json.load(open(sys.argv[2])))' \
  "$TMP/one/${run5[0]}.json" "$TMP/direct.json"

# --- a selector parameter as an axis -----------------------------------------------------------
# The runs record their selector's parameters other than its defaults, and merge pools them
# (records read back exactly).
cat >"$TMP/params.json" <<'JSON'
{"schema": "bindersim.sweep/1", "name": "params", "scenario": "schd-dbg",
 "set": {"clients.*.iterations": 20}, "selectors": ["ctabs-nudge"], "seeds": 2,
 "axes": [{"key": "kernel.selector_params.ctabs-nudge.check_caller_idle", "name": "checked",
           "values": [true, false]}]}
JSON
run sweep expand "$TMP/params.json" --out "$TMP/params.jsonl"
run sweep run "$TMP/params.jsonl" --out-dir "$TMP/params"
run sweep merge "$TMP/params" --runs "$TMP/params.jsonl" --out "$TMP/params-summary.json"
check "a sweep over a selector parameter merges" test "$rc" -eq 0
check "its pooled results keep the parameters other than the defaults" python3 -S -c '
import json, sys
points = json.load(open(sys.argv[1]))["points"]
sys.exit([p["columns"][0]["pooled"].get("selector_params") for p in points] !=
         [None, {"check_caller_idle": False}])' "$TMP/params-summary.json"

# An axis of the parameters of a selector the sweep does not run would repeat its points.
sed 's/"selectors": \["ctabs-nudge"\]/"selectors": ["fifo", "ctabs"]/' "$TMP/params.json" \
  >"$TMP/params-unused.json"
run sweep expand "$TMP/params-unused.json"
check "an axis that changes no selector's parameters is refused" grep -qxF -- \
  "bindersim sweep expand: $TMP/params-unused.json: /axes/0: it changes the parameters of no selector the sweep runs (ctabs, fifo), so its points would be alike" \
  "$TMP/err"

# --- a topology value as an axis --------------------------------------------------------------
# The runs change the topology's value; their results keep the file's topology hash, so the
# seeds of a point pool.
cat >"$TMP/cost.json" <<'JSON'
{"schema": "bindersim.sweep/1", "name": "cost", "scenario": "schd-dbg",
 "set": {"clients.*.iterations": 40}, "selectors": ["fifo"], "seeds": 2,
 "axes": [{"key": "topology.costs.context_switch_ref_ns", "name": "switch",
           "values": [1800, 7200]}]}
JSON
run sweep expand "$TMP/cost.json" --out "$TMP/cost.jsonl"
run sweep run "$TMP/cost.jsonl" --out-dir "$TMP/cost"
run sweep merge "$TMP/cost" --runs "$TMP/cost.jsonl" --out "$TMP/cost-summary.json"
check "a sweep over a topology value merges" test "$rc" -eq 0
check "its points differ" python3 -S -c '
import json, sys
points = json.load(open(sys.argv[1]))["points"]
means = [p["columns"][0]["pooled"]["latency"]["mean_ns"] for p in points]
sys.exit(not (len(means) == 2 and means[0] < means[1]))' "$TMP/cost-summary.json"

# --- control characters in axis values ---------------------------------------------------------
# A string value with a newline or an escape is printed escaped in progress lines and titles.
cat >"$TMP/control.json" <<'JSON'
{"schema": "bindersim.sweep/1", "name": "control", "scenario": "schd-dbg",
 "set": {"clients.*.iterations": 20}, "selectors": ["fifo"], "seeds": 1,
 "axes": [{"key": "description", "name": "d", "values": ["x\ny", "e\u001b[31m"]}]}
JSON
run sweep expand "$TMP/control.json" --out "$TMP/control.jsonl"
run sweep run "$TMP/control.jsonl" --out-dir "$TMP/control"
check "sweep run of values with control characters exits 0" test "$rc" -eq 0
check "its progress lines escape them" test "$(grep -cF -e 'd=x\ny: done' -e 'd=e\x1b[31m: done' \
  "$TMP/out")" -eq 2
run sweep merge "$TMP/control"
check "merge titles escape them" test "$(grep -cxF -e '== d=x\ny ==' -e '== d=e\x1b[31m ==' \
  "$TMP/out")" -eq 2
check "nothing raw reaches the console" test "$(grep -c $'\x1b' "$TMP/out")" -eq 0
sed 's/"sweep":"control"/"sweep":"a\\nb"/' "$TMP/control.jsonl" >"$TMP/control-name.jsonl"
run sweep run "$TMP/control-name.jsonl" --out-dir "$TMP/control-name"
check "a runs file whose sweep name has a newline is refused" \
  grep -qF 'control-name.jsonl:1: /sweep: expected a name without control characters, got "a\nb"' \
  "$TMP/err"

# --- resumption ------------------------------------------------------------------------------
victim="$TMP/three/${run5[0]}.json"  # index 5: shard 2 of 3
cp "$victim" "$TMP/victim.json"
rm "$victim"
run sweep run "$RUNS" --shard 2/3 --out-dir "$TMP/three"
check "rerunning the shard exits 0" test "$rc" -eq 0
check "it restores the deleted result byte for byte" cmp -s "$victim" "$TMP/victim.json"
check "and skips the runs whose result exists" \
  test "$(grep -c 'result exists, skipped' "$TMP/out")" -eq 1
check "stderr counts 1 ran, 1 skipped" grep -q '2 run(s): 1 ran, 1 skipped' "$TMP/err"

# --- --index ---------------------------------------------------------------------------------
run sweep run "$RUNS" --index 5 --out-dir "$TMP/index"
check "--index 5 exits 0" test "$rc" -eq 0
check "--index 5 writes run 5's result only, as the shards did" \
  test "$(ls "$TMP/index")" == "${run5[0]}.json" -a -n "$(cmp "$TMP/index/${run5[0]}.json" \
  "$TMP/victim.json" && echo same)"

# --- missing runs ----------------------------------------------------------------------------
cp -r "$TMP/one" "$TMP/partial"
rm "$TMP/partial/${run5[0]}.json"
run sweep merge "$TMP/partial" --runs "$RUNS" --out "$TMP/summary-partial.json"
check "merge with a missing run exits 1" test "$rc" -eq 1
check "stderr names the missing run" grep -q "missing run 5 ${run5[0]}: fifo seed 2" "$TMP/err"
check "stderr counts it" grep -q '1 of 8 run(s) have no result' "$TMP/err"
check "the table of its point names it" grep -q '^missing runs: fifo seed 2$' "$TMP/out"
check "the summary lists it" python3 -S -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["runs"]["merged"] == 7 and [m["run_id"] for m in d["runs"]["missing"]] ==
              [sys.argv[2]] and d["points"][1]["columns"][0]["missing_seeds"] == [2]))' \
  "$TMP/summary-partial.json" "${run5[0]}"
check "with --runs, the gap is not named twice" test "$(grep -c '^no result for' "$TMP/out")" -eq 0
run sweep merge "$TMP/partial"
check "without --runs, merge of the same directory exits 0" test "$rc" -eq 0
check "without --runs, the table names the seed its column lacks" grep -q \
  '^no result for fifo seed 2 (which other columns have; --runs lists every missing run)$' \
  "$TMP/out"
# 24 runs (6 seeds), none done: stderr names the first 20 and counts the others.
python3 -S -c 'import json, sys; d = json.load(open(sys.argv[1])); d["seeds"] = 6
json.dump(d, open(sys.argv[2], "w"))' "$SWEEP" "$TMP/wide.json"
run sweep expand "$TMP/wide.json" --out "$TMP/wide.jsonl"
mkdir -p "$TMP/none"
run sweep merge "$TMP/none" --runs "$TMP/wide.jsonl" --out "$TMP/summary-none.json"
check "merge with no result exits 1" test "$rc" -eq 1
check "stderr counts 24 missing runs" grep -q '24 of 24 run(s) have no result' "$TMP/err"
check "stderr names 20 of them" test "$(grep -c '^  missing run ' "$TMP/err")" -eq 20
check "stderr counts the 4 others" grep -q '^  and 4 more (the summary lists them all)$' "$TMP/err"
check "the summary lists all 24" python3 -S -c '
import json, sys
sys.exit(len(json.load(open(sys.argv[1]))["runs"]["missing"]) != 24)' "$TMP/summary-none.json"

# --- bad input: exit 2, one line, no output --------------------------------------------------
expect_error() {
  local name=$1 file=$2
  shift 2
  rm -f "$file"
  run sweep "$@"
  if [[ $rc -ne 2 ]]; then
    fail "$name exits 2" "exit $rc"
  elif [[ $(wc -l <"$TMP/err") -ne 1 ]]; then
    fail "$name prints one line" "$(cat "$TMP/err")"
  elif [[ -e "$file" || -s "$TMP/out" ]]; then
    fail "$name writes no output"
  else
    pass "$name: exit 2, one line, no output"
  fi
}
printf '%s\n' '{"schema": "bindersim.sweep/1", "name": "bad", "scenario": "schd-dbg",' \
  '"seeds": 1, "axes": [{"key": "clients.0.iterations", "valeus": [1]}]}' >"$TMP/bad-key.json"
expect_error "a sweep with an unknown key" "$TMP/x.jsonl" expand "$TMP/bad-key.json" \
  --out "$TMP/x.jsonl"
check "its error names the file, the pointer and the closest key" \
  grep -q "bad-key.json: /axes/0/valeus: unknown key (did you mean \"values\"?)" "$TMP/err"
printf '%s\n' '{"schema": "bindersim.sweep/1", "name": "bad", "scenario": "schd-dbg",' \
  '"seeds": 1, "axes": [{"key": "kernel.priority_inheritance", "values": ["android", "x"]}]}' \
  >"$TMP/bad-value.json"
expect_error "a sweep with an invalid axis value" "$TMP/x.jsonl" expand "$TMP/bad-value.json"
check "its error names the value" grep -q "bad-value.json: /axes/0/values/1: " "$TMP/err"
# A scenario whose own topology is bad is at fault, not the sweep's set, however often the
# topology is loaded.
python3 -S - "$ROOT/scenarios/schd-dbg.json" "$TMP/no-topology.json" <<'PY'
import json, sys
scenario = json.load(open(sys.argv[1]))
scenario["topology"] = "nosuch"
json.dump(scenario, open(sys.argv[2], "w"))
PY
cat >"$TMP/bad-topology-sweep.json" <<JSON
{"schema": "bindersim.sweep/1", "name": "bad", "scenario": "$TMP/no-topology.json",
 "set": {"clients.*.iterations": 10}, "selectors": ["fifo"], "seeds": 1,
 "axes": [{"key": "kernel.placement", "values": ["gki"]}]}
JSON
expect_error "a sweep of a scenario with a bad topology" "$TMP/x.jsonl" expand \
  "$TMP/bad-topology-sweep.json"
check "its error is the scenario's, not the set's" grep -q \
  'bad-topology-sweep.json: /scenario: .*no-topology.json: /topology: unknown topology "nosuch"' \
  "$TMP/err"
sed 's/7200/-1/' "$TMP/cost.json" >"$TMP/bad-cost.json"
expect_error "a sweep with a topology value out of range" "$TMP/x.jsonl" expand \
  "$TMP/bad-cost.json"
check "its error names the value and the topology's pointer" grep -q \
  "bad-cost.json: /axes/0/values/1: .*sa8155p.json (with --set): /costs/context_switch_ref_ns: " \
  "$TMP/err"
expect_error "merge --across with an unknown metric" "$TMP/x.json" merge "$TMP/one" \
  --across throughput,latency.p95 --out "$TMP/x.json"
check "its error names the metric and lists the valid ones" grep -q \
  'unknown metric "latency.p95"; valid metrics: throughput, latency.mean, ' "$TMP/err"
expect_error "--shard 3/3" "$TMP/x.jsonl" run "$RUNS" --shard 3/3 --out-dir "$TMP/bad-dir"
expect_error "--shard and --index together" "$TMP/x.jsonl" run "$RUNS" --shard 0/2 --index 1 \
  --out-dir "$TMP/bad-dir"
expect_error "--index beyond the runs" "$TMP/x.jsonl" run "$RUNS" --index 8 \
  --out-dir "$TMP/bad-dir"
sed '3s/"seed":1/"seed":3/' "$RUNS" >"$TMP/edited.jsonl"
expect_error "an edited runs line" "$TMP/x.jsonl" run "$TMP/edited.jsonl" \
  --out-dir "$TMP/bad-dir"
check "its error names the line and /run_id" grep -q "edited.jsonl:3: /run_id: expected" "$TMP/err"
check "bad runs write no result directory" test ! -e "$TMP/bad-dir"
# Runs files edited consistently (each run id recomputed): a run listed twice, a run of an
# unknown selector or placement, an override of what the run's own fields choose.
python3 -S - "$RUNS" "$TMP" <<'PY'
import json, sys
def run_id(r):
    identity = {"overrides": r["overrides"], "placement": r["placement"],
                "scenario": r["scenario_hash"], "seed": r["seed"], "selector": r["selector"]}
    h = 0xcbf29ce484222325
    for b in json.dumps(identity, sort_keys=True, separators=(",", ":")).encode():
        h = ((h ^ b) * 0x100000001b3) % 2**64
    return "%016x" % h
lines = [json.loads(l) for l in open(sys.argv[1])]
def write(name, runs):
    with open(sys.argv[2] + "/" + name, "w") as f:
        for r in runs:
            r["run_id"] = run_id(r)
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
write("twice.jsonl", [lines[0], dict(lines[0], index=99)])
write("selector.jsonl", [lines[0], dict(lines[1], selector="nosuch")])
write("placement.jsonl", [lines[0], dict(lines[1], placement="nosuch")])
write("seed-override.jsonl", [dict(lines[0], overrides=lines[0]["overrides"] + [["seed", 5]])])
write("selector-override.jsonl",
      [dict(lines[0], overrides=lines[0]["overrides"] + [["kernel.selector", "ctabs-nudge"]])])
PY
expect_error "a runs file listing a run twice" "$TMP/x.jsonl" run "$TMP/twice.jsonl" \
  --out-dir "$TMP/bad-dir" --jobs 2
check "its error names the second line and its first" \
  grep -q "twice.jsonl:2: /run_id: run [0-9a-f]* is also the run of line 1" "$TMP/err"
expect_error "a run of an unknown selector" "$TMP/x.jsonl" run "$TMP/selector.jsonl" \
  --out-dir "$TMP/bad-dir"
check "its error names the run and the selector" grep -q 'run 1 .*unknown selector' "$TMP/err"
expect_error "a run of an unknown placement" "$TMP/x.jsonl" run "$TMP/placement.jsonl" \
  --out-dir "$TMP/bad-dir"
expect_error "a run overriding its seed" "$TMP/x.jsonl" run "$TMP/seed-override.jsonl" \
  --out-dir "$TMP/bad-dir"
check "its error names the override" \
  grep -q 'seed-override.jsonl:1: /overrides/.*/0: "seed" is chosen by the run' "$TMP/err"
expect_error "a run whose selector override differs from its selector" "$TMP/x.jsonl" run \
  "$TMP/selector-override.jsonl" --out-dir "$TMP/bad-dir"
check "none of them runs anything or creates the result directory" test ! -e "$TMP/bad-dir"
# A sweep naming no selectors or placement may set or vary them itself: its runs carry the
# override with the value of their own fields, and run and merge.
printf '%s\n' '{"schema": "bindersim.sweep/1", "name": "chosen", "scenario": "schd-dbg",' \
  '"set": {"clients.*.iterations": 20, "kernel.placement": "walt"}, "seeds": 1,' \
  '"axes": [{"name": "sel", "key": "kernel.selector", "values": ["fifo", "ctabs"]}]}' \
  >"$TMP/chosen.json"
run sweep expand "$TMP/chosen.json" --out "$TMP/chosen.jsonl"
run sweep run "$TMP/chosen.jsonl" --out-dir "$TMP/chosen"
check "a sweep setting the placement and varying the selector runs" test "$rc" -eq 0
run sweep merge "$TMP/chosen" --runs "$TMP/chosen.jsonl"
check "and merges" test "$rc" -eq 0
expect_error "merge of a missing directory" "$TMP/x.json" merge "$TMP/nosuch" --out "$TMP/x.json"
check "its error says the directory does not exist" \
  grep -qx "bindersim sweep merge: $TMP/nosuch: no such directory" "$TMP/err"
mkdir -p "$TMP/empty"
expect_error "merge of an empty directory" "$TMP/x.json" merge "$TMP/empty" --out "$TMP/x.json"
check "its error names the directory" \
  grep -qx "bindersim sweep merge: $TMP/empty: no results to merge (no <run_id>.json files)" \
  "$TMP/err"
expect_error "an unknown subcommand" "$TMP/x.json" nosuch

# --- the shipped sweeps ----------------------------------------------------------------------
run sweep expand "$ROOT/sweeps/ctabs-sensitivity.json"
check "sweeps/ctabs-sensitivity.json expands" test "$rc" -eq 0
check "it compares fifo, ctabs and ctabs-nudge" \
  test "$(grep -c '"selector":"ctabs-nudge"' "$TMP/out")" -eq "$(($(wc -l <"$TMP/out") / 3))"
run sweep expand "$ROOT/sweeps/misfit-sensitivity.json"
check "sweeps/misfit-sensitivity.json expands to 2 x 2 points x 3 selectors x 5 seeds" \
  test "$rc" -eq 0 -a "$(wc -l <"$TMP/out")" -eq 60
check "half of its runs turn misfit migration on" \
  test "$(grep -cF '["misfit_migration",true]' "$TMP/out")" -eq 30
run sweep expand "$ROOT/sweeps/silver-sensitivity.json"
check "sweeps/silver-sensitivity.json expands to 2 points x 3 selectors x 20 seeds" \
  test "$rc" -eq 0 -a "$(wc -l <"$TMP/out")" -eq 120
check "half of its runs put every worker process in the silver cpuset" \
  test "$(grep -cF '["processes.7.cpuset",[0,1,2,3]]' "$TMP/out")" -eq 60
check "and the unpinned background with them, never the per-CPU housekeeping" \
  test "$(grep -cF '["background.5.affinity",[0,1,2,3]]' "$TMP/out")" -eq 60 -a \
  "$(grep -cF '"background.6.affinity"' "$TMP/out")" -eq 0
run sweep expand "$ROOT/sweeps/deviation-sensitivity.json"
check "sweeps/deviation-sensitivity.json expands to 8 points x 3 selectors x 10 seeds" \
  test "$rc" -eq 0 -a "$(wc -l <"$TMP/out")" -eq 240
check "half of its runs normalise the vruntime, free before the reply, create as bionic" \
  test "$(grep -cF '["kernel.vruntime_across_rt","normalised"]' "$TMP/out")" -eq 120 -a \
  "$(grep -cF '["processes.0.free_before_reply",true]' "$TMP/out")" -eq 120 -a \
  "$(grep -cF '["processes.1.thread_creation","bionic"]' "$TMP/out")" -eq 120
for sweep in cost-sensitivity cost-throughput; do
  run sweep expand "$ROOT/sweeps/$sweep.json"
  check "sweeps/$sweep.json expands to 3 x 3 points x 2 selectors x 10 seeds" \
    test "$rc" -eq 0 -a "$(wc -l <"$TMP/out")" -eq 180
  check "a third of its runs halve the topology's context switch" \
    test "$(grep -cF '["topology.costs.context_switch_ref_ns",900]' "$TMP/out")" -eq 60
done
for sweep in pelt-clock-sensitivity pelt-clock-throughput; do
  run sweep expand "$ROOT/sweeps/$sweep.json"
  check "sweeps/$sweep.json expands to 2 points x 3 selectors x 10 seeds" \
    test "$rc" -eq 0 -a "$(wc -l <"$TMP/out")" -eq 60
  check "half of its runs use the kernel's PELT clock" \
    test "$(grep -cF '["kernel.pelt_clock","scaled"]' "$TMP/out")" -eq 30
done
run sweep expand "$ROOT/sweeps/free-before-reply-throughput.json"
check "sweeps/free-before-reply-throughput.json expands to 2 points x 3 selectors x 10 seeds" \
  test "$rc" -eq 0 -a "$(wc -l <"$TMP/out")" -eq 60
every_worker_frees_first=0
for w in 0 1 2 3 4 5 6 7; do
  if [ "$(grep -cF "[\"processes.$w.free_before_reply\",true]" "$TMP/out")" -eq 30 ]; then
    every_worker_frees_first=$((every_worker_frees_first + 1))
  fi
done
check "half of its runs have every worker free before the reply" \
  test "$every_worker_frees_first" -eq 8

# --- help ------------------------------------------------------------------------------------
run sweep --help
check "sweep --help exits 0 and shows examples" grep -q '^examples:' "$TMP/out"
for sub in expand run merge; do
  run sweep "$sub" --help
  check "sweep $sub --help exits 0" test "$rc" -eq 0
done

summary
