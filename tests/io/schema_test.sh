#!/usr/bin/env bash
# Validates real result documents against docs/result.schema.json with python3-jsonschema,
# and checks that broken documents fail both the schema and `bindersim check`'s strict reader
# (so neither can pass vacuously, and the two agree on what a result document is).
#
# usage: schema_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=../cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"
SCHEMA="$ROOT/docs/result.schema.json"
# Debian's interpreter, where the python3-jsonschema package installs (tools/setup.sh).
PYTHON=/usr/bin/python3


if ! "$PYTHON" -c 'import jsonschema' 2>/dev/null; then
  fail "$PYTHON has the jsonschema module" "install the Debian package python3-jsonschema"
  summary
  exit 1
fi

# --- real results, one per selector ----------------------------------------------------------
documents=()
for selector in fifo ctabs ctabs-nudge; do
  if "$BIN" run "$ROOT/scenarios/schd-dbg.json" --selector "$selector" \
    --set clients.0.iterations=100 --out "$TMP/$selector.json" >/dev/null 2>"$TMP/err"; then
    documents+=("$TMP/$selector.json")
  else
    fail "run schd-dbg --selector $selector" "$(head -c 300 "$TMP/err")"
  fi
done
# A selector with parameters records them.
if "$BIN" run "$ROOT/scenarios/schd-dbg.json" --selector ctabs-nudge --set clients.0.iterations=100 \
  --set kernel.selector_params.ctabs-nudge.check_caller_idle=false \
  --out "$TMP/ctabs-nudge-unchecked.json" >/dev/null 2>"$TMP/err"; then
  documents+=("$TMP/ctabs-nudge-unchecked.json")
else
  fail "run schd-dbg --selector ctabs-nudge with a parameter" "$(head -c 300 "$TMP/err")"
fi

# --- broken variants of the first document: each must fail the schema ------------------------
# One file per defect, named after it; the Python below writes them.
mkdir -p "$TMP/broken"
"$PYTHON" - "$TMP/fifo.json" "$TMP/broken" <<'PY' || fail "writing the broken documents"
import json, sys
source, out = sys.argv[1], sys.argv[2]
def broken(name, change):
    with open(source) as f:
        doc = json.load(f)
    change(doc)
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(doc, f, indent=2)
def delete(path):
    def change(doc):
        *parents, key = path
        for p in parents:
            doc = doc[p]
        del doc[key]
    return change
def put(path, value):
    def change(doc):
        *parents, key = path
        for p in parents:
            doc = doc[p]
        doc[key] = value
    return change
broken("missing-tier", delete(["tiers", "sched_fifo", "same_cluster"]))
broken("share-above-one", put(["tiers", "sched_other", "cross_cluster", "share"], 1.5))
broken("negative-share", put(["tiers", "sched_other", "same_core", "share"], -0.1))
broken("extra-key", put(["latency", "p95_ns"], 1))
broken("extra-top-level-key", put(["wall_clock_s"], 1.5))
broken("selector-params-not-an-object", put(["selector_params"], "check_caller_idle=false"))
broken("selector-params-empty", put(["selector_params"], {}))
broken("missing-version", delete(["provenance", "version"]))
broken("missing-counters", delete(["counters"]))
broken("bad-fingerprint", put(["provenance", "fingerprint"], "3F9A0C41D2E7B856"))
broken("short-fingerprint", put(["provenance", "fingerprint"], "3f9a0c41"))
broken("bad-scenario-hash", put(["provenance", "scenario_hash"], "6DC37089A67CC7C6"))
broken("short-topology-hash", put(["provenance", "topology_hash"], "02d70319"))
broken("overrides-not-an-array", put(["provenance", "overrides"], "clients.*.iterations=300"))
broken("override-not-a-pair", put(["provenance", "overrides"], [["kernel.placement", "gki", 1]]))
broken("override-without-path", put(["provenance", "overrides"], [["", 300]]))
broken("negative-count", put(["counters", "migrations"], -1))
broken("fractional-latency", put(["latency", "mean_ns"], 117487.5))
broken("latency-above-2^40", put(["latency", "max_ns"], 2**40 + 1))
broken("string-rate", put(["transactions", "per_second"], "fast"))
broken("other-schema", put(["schema"], "bindersim.result/2"))
broken("seed-as-string", put(["seed"], "1"))
broken("missing-breakdown", delete(["tiers", "sched_other", "same_core", "breakdown"]))
broken("missing-breakdown-part", delete(["tiers", "sched_fifo", "cross_cluster", "breakdown",
                                         "service_ns"]))
broken("negative-kernel-part", put(["tiers", "sched_fifo", "same_core", "breakdown",
                                    "kernel_ns"], -1))
broken("fractional-breakdown-part", put(["tiers", "sched_other", "cross_cluster", "breakdown",
                                         "other_ns"], -0.5))
broken("extra-breakdown-part", put(["tiers", "sched_other", "same_cluster", "breakdown",
                                    "irq_ns"], 0))
PY

# --- validation, in one Python process -------------------------------------------------------
"$PYTHON" - "$SCHEMA" "${documents[@]}" -- "$TMP"/broken/*.json <<'PY' >"$TMP/checks" 2>&1
import json, os, sys
import jsonschema
schema_path, rest = sys.argv[1], sys.argv[2:]
split = rest.index("--")
good, bad = rest[:split], rest[split + 1:]
with open(schema_path) as f:
    schema = json.load(f)
try:
    jsonschema.Draft202012Validator.check_schema(schema)
    print("PASS  docs/result.schema.json is a valid draft 2020-12 schema")
except jsonschema.SchemaError as e:
    print(f"FAIL  docs/result.schema.json is a valid draft 2020-12 schema: {e.message}")
    sys.exit(0)
validator = jsonschema.Draft202012Validator(schema)
for path in good:
    with open(path) as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    name = os.path.basename(path)
    if errors:
        e = errors[0]
        print(f"FAIL  {name} (bindersim run) validates: /{'/'.join(map(str, e.path))}: {e.message}")
    else:
        print(f"PASS  {name} (bindersim run) validates")
if len(bad) < 10:
    print(f"FAIL  the broken documents were written: only {len(bad)}")
for path in bad:
    with open(path) as f:
        doc = json.load(f)
    name = os.path.basename(path)[:-5]
    if validator.is_valid(doc):
        print(f"FAIL  broken document '{name}' fails the schema: it validates")
    else:
        print(f"PASS  broken document '{name}' fails the schema")
PY
tally "$TMP/checks" $? "the validating Python exited non-zero"

# --- the strict reader agrees: real results read, broken ones are bad input (exit 2) ---------
for doc in "${documents[@]}"; do
  run check "$doc" --baseline "$doc"
  if [[ $rc -eq 0 ]]; then
    pass "bindersim check reads $(basename "$doc")"
  else
    fail "bindersim check reads $(basename "$doc")" "exit $rc: $(head -c 300 "$TMP/err")"
  fi
done
for doc in "$TMP"/broken/*.json; do
  name=$(basename "$doc" .json)
  run check "$doc" --baseline "$TMP/fifo.json"
  if [[ $rc -eq 2 ]] && grep -q "^bindersim: $doc: /" "$TMP/err"; then
    pass "bindersim check rejects broken document '$name' (exit 2, file and pointer)"
  else
    fail "bindersim check rejects broken document '$name' (exit 2, file and pointer)" \
      "exit $rc: $(head -c 300 "$TMP/err")"
  fi
done

# The example of docs/result-schema.md is the schd-dbg golden (tools/regen-golden.sh copies it).
if "$PYTHON" - "$ROOT/docs/result-schema.md" "$ROOT/tests/golden/schd-dbg-fifo.json" <<'PY'
import sys
doc = open(sys.argv[1]).read()
start = doc.index("```json\n", doc.index("`tests/golden/schd-dbg-fifo.json`")) + len("```json\n")
sys.exit(0 if doc[start:doc.index("```", start)] == open(sys.argv[2]).read() else 1)
PY
then
  pass "docs/result-schema.md shows tests/golden/schd-dbg-fifo.json as its example"
else
  fail "docs/result-schema.md shows tests/golden/schd-dbg-fifo.json as its example" \
    "run tools/regen-golden.sh"
fi

summary
