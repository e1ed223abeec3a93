#!/usr/bin/env bash
# End-to-end checks of bad input of every kind: one line on stderr, exit 2, no output file or
# directory left behind, and no unbounded memory (each command runs under a memory limit and a
# time limit); and standard output that cannot be written.
#
# usage: robustness_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"

# A binary built with AddressSanitizer reserves terabytes of shadow address space at start-up,
# so it cannot run under an address-space limit: it runs under the time limit alone.
address_limit_kb=1000000
if ldd "$BIN" 2>/dev/null | grep -q libasan; then
  address_limit_kb=unlimited
fi

# bounded ARGS...: runs bindersim as run() does, within 1 GB of address space and 20 s.
bounded() {
  (
    ulimit -v "$address_limit_kb"
    timeout 20 "$BIN" "$@"
  ) >"$TMP/out" 2>"$TMP/err"
  rc=$?
}

# expect_bad NAME REGEX: the last command exited 2 with one stderr line matching REGEX.
expect_bad() {
  local name=$1 pattern=$2
  if [[ $rc -ne 2 ]]; then
    fail "$name" "exit $rc, expected 2; stderr: $(head -c 300 "$TMP/err")"
  elif [[ $(wc -l <"$TMP/err") -ne 1 ]]; then
    fail "$name" "expected one stderr line, got: $(head -c 300 "$TMP/err")"
  elif ! grep -Eq -- "$pattern" "$TMP/err"; then
    fail "$name" "stderr does not match /$pattern/: $(cat "$TMP/err")"
  else
    pass "$name"
  fi
}

# absent NAME PATH...: neither a PATH nor a temporary of it (PATH.<pid>-<n>.tmp) exists.
absent() {
  local name=$1 path
  shift
  for path in "$@"; do
    if [[ -e $path ]] || compgen -G "$path.*.tmp" >/dev/null; then
      fail "$name" "$path or its temporary was left behind"
      return
    fi
  done
  pass "$name"
}

SHORT=(--set clients.0.iterations=20)
GOLDEN="$ROOT/tests/golden/schd-dbg-fifo.json"
cd "$TMP" || exit 2

# --- A: input files that are not regular files, or too large --------------------------------
device='/dev/zero: expected a JSON file, got a character device$'
bounded run /dev/zero
expect_bad "run of a device" "$device"
bounded check "$GOLDEN" --baseline /dev/zero
expect_bad "check --baseline of a device" "$device"
bounded check "$GOLDEN" --baseline "$GOLDEN" --tolerance /dev/zero
expect_bad "check --tolerance of a device" "$device"
bounded report /dev/zero -o "$TMP/x.html"
expect_bad "report of a device" "$device"
absent "report of a device writes no page" "$TMP/x.html"
bounded topology show /dev/zero
expect_bad "topology show of a device" "$device"
printf '{"schema": "bindersim.sweep/1", "name": "z", "scenario": "/dev/zero", "seeds": 1}' \
  >zero-sweep.json
bounded sweep expand zero-sweep.json
expect_bad "a sweep whose scenario is a device" "^bindersim sweep expand: zero-sweep.json: /scenario: $device"
bounded sweep run /dev/zero --out-dir "$TMP/zero-out"
expect_bad "sweep run of a device" '/dev/zero: expected a runs file \(JSON Lines\), got a character device$'
absent "sweep run of a device creates no directory" "$TMP/zero-out"
mkfifo fifo.json
bounded run fifo.json
expect_bad "run of a FIFO" 'fifo.json: expected a JSON file, got a FIFO$'
truncate -s 65M big.json big.jsonl
bounded run big.json
expect_bad "run of a 65 MiB file" 'big.json: expected a JSON file of at most 64 MiB \(67108864 bytes\), got 68157440 bytes$'
bounded sweep run big.jsonl --out-dir "$TMP/big-out"
expect_bad "sweep run of a 65 MiB runs file" 'big.jsonl: expected a runs file \(JSON Lines\) of at most 64 MiB'

# --- B: a sweep of too many runs --------------------------------------------------------------
values=$(seq -s, 1 20)
axes=""
for a in 0 1 2 3 4 5; do
  axes+="${axes:+,}{\"key\": \"clients.0.iterations\", \"name\": \"a$a\", \"values\": [$values]}"
done
printf '{"schema": "bindersim.sweep/1", "name": "many", "scenario": "schd-dbg", "axes": [%s], "seeds": 3}' \
  "$axes" >many.json
bounded sweep expand many.json --out many.jsonl
expect_bad "a sweep of 192 million runs" '^bindersim sweep expand: many.json: /axes: expected at most 100000 runs \(points x selectors x seeds\), got 192000000 '
absent "a refused sweep writes no runs file" many.jsonl

# --- C: sweep run checks every run before creating the directory -----------------------------
cat >small-sweep.json <<JSON
{"schema": "bindersim.sweep/1", "name": "small", "scenario": "scenario.json",
 "set": {"clients.0.iterations": 20}, "selectors": ["fifo"], "seeds": 2}
JSON
cp "$ROOT/scenarios/schd-dbg.json" scenario.json
run sweep expand small-sweep.json --out runs.jsonl
[[ $rc -eq 0 ]] || fail "sweep expand of a small sweep" "exit $rc: $(cat "$TMP/err")"
sed -i 's/"description": "/"description": "changed /' scenario.json
bounded sweep run runs.jsonl --out-dir "$TMP/results"
expect_bad "sweep run of a changed scenario" 'has changed since the sweep was expanded'
absent "sweep run of a changed scenario creates no directory" "$TMP/results"
sed 's/"scenario":"scenario.json"/"scenario":"nonexistent"/' runs.jsonl >unknown.jsonl
bounded sweep run unknown.jsonl --out-dir "$TMP/results"
expect_bad "sweep run of an unknown scenario" 'unknown scenario "nonexistent"'
absent "sweep run of an unknown scenario creates no directory" "$TMP/results"

# --- D: the result and the trace land together or not at all ---------------------------------
bounded run schd-dbg "${SHORT[@]}" --out "$TMP/nodir/o.json" --trace "$TMP/t.trace"
expect_bad "run --out into a missing directory" 'nodir/o.json: cannot write file$'
absent "run --out into a missing directory leaves no trace" "$TMP/t.trace"
bounded run schd-dbg "${SHORT[@]}" --out same.out --trace ./same.out
expect_bad "run --out X --trace X" '^bindersim run: --out and --trace both name "./same.out"; expected two different files'
absent "run --out X --trace X writes nothing" same.out
# A trace named as the result's temporary once was: each output has a temporary of its own.
bounded run schd-dbg "${SHORT[@]}" --out both.out --trace both.out.tmp
if [[ $rc -eq 0 ]] && grep -q '"schema"' both.out && grep -q '^# tracer: nop' both.out.tmp; then
  pass "run --out X --trace X.tmp writes the result to X and the trace to X.tmp"
else
  fail "run --out X --trace X.tmp writes the result to X and the trace to X.tmp" \
    "exit $rc; $(head -c 80 both.out 2>&1)"
fi
# A file name of 251 bytes (the limit is 255) still gets a temporary beside it.
long_name=$(printf 'a%.0s' {1..246}).json
bounded run schd-dbg "${SHORT[@]}" --out "$long_name"
if [[ $rc -eq 0 ]] && grep -q '"schema"' "$long_name"; then
  pass "run --out a 251-byte file name"
else
  fail "run --out a 251-byte file name" "exit $rc: $(cat "$TMP/err")"
fi

# await_temporaries PATH...: waits (up to 20 s) until each PATH has a temporary.
await_temporaries() {
  local path
  for path in "$@"; do
    for ((i = 0; i < 400; i++)); do
      compgen -G "$path.*.tmp" >/dev/null && break
      sleep 0.05
    done
  done
}
# An interrupted run (Ctrl-C, kill, a closed terminal) leaves neither output nor temporary.
# interrupted SIGNAL: starts a long run with --out and --trace, sends SIGNAL once both
# temporaries exist, and sets $rc to the run's exit status. The shell runs with job control
# (set -m), as an interactive one does: otherwise its background job would ignore SIGINT.
interrupted() {
  local signal=$1
  (
    set -m
    "$BIN" run binder-throughput --set 'clients.*.iterations=1000000' --out stopped.json \
      --trace stopped.trace >/dev/null 2>"$TMP/err" &
    pid=$!
    await_temporaries stopped.json stopped.trace
    kill "-$signal" "$pid"
    wait "$pid"
  ) 2>/dev/null  # the shell's note of the job's end
  rc=$?
}
for signal in INT TERM HUP; do
  interrupted "$signal"
  expected=$((128 + $(kill -l "$signal")))
  if [[ $rc -ne $expected ]]; then
    fail "a run stopped by SIG$signal" "exit $rc, expected $expected: $(head -c 300 "$TMP/err")"
  else
    absent "a run stopped by SIG$signal leaves no file" stopped.json stopped.trace
  fi
done
# A signal ignored from the start stays ignored (nohup, a script's background job: without job
# control, the shell starts it with SIGINT ignored).
"$BIN" run binder-throughput --set 'clients.*.iterations=1000000' --out ignored.json \
  >/dev/null 2>&1 &
pid=$!
await_temporaries ignored.json
kill -INT "$pid"
sleep 0.5
if kill -0 "$pid" 2>/dev/null; then
  pass "a run started with SIGINT ignored goes on after SIGINT"
else
  fail "a run started with SIGINT ignored goes on after SIGINT"
fi
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
absent "a run so stopped by SIGTERM leaves no file" ignored.json

# A reader that has closed its end of the pipe: exit 2 and the line saying so (after expand's
# count), not SIGPIPE's 141.
python3 -S - "$BIN" "$ROOT/sweeps/ctabs-sensitivity.json" <<'PY' >"$TMP/pipe" 2>&1
import os, subprocess, sys
read_end, write_end = os.pipe()
os.close(read_end)
done = subprocess.run([sys.argv[1], "sweep", "expand", sys.argv[2]], stdout=write_end,
                      stderr=subprocess.PIPE, text=True)
print(done.returncode, done.stderr.splitlines()[-1])
PY
if grep -qx '2 bindersim: writing standard output failed' "$TMP/pipe"; then
  pass "a closed pipe on stdout: exit 2"
else
  fail "a closed pipe on stdout: exit 2" "$(cat "$TMP/pipe")"
fi

# --- E: an output that names one of the command's inputs is refused, the input left whole -----
mkdir inputs
cp "$ROOT/topologies/sa8155p.json" inputs/t.json
sed 's/"topology": *"sa8155p"/"topology": "t.json"/' "$ROOT/scenarios/schd-dbg.json" >inputs/s.json
cp "$GOLDEN" inputs/r.json
printf '%s\n' '{"schema": "bindersim.sweep/1", "name": "in", "scenario": "s.json",' \
  '"set": {"clients.0.iterations": 20}, "seeds": 1}' >inputs/sw.json
run sweep expand inputs/sw.json --out inputs/runs.jsonl
run sweep run inputs/runs.jsonl --out-dir inputs/merged
merged=$(cd inputs && ls merged/*.json)
(cd inputs && sha256sum t.json s.json r.json sw.json runs.jsonl "$merged") >inputs.sha
expect_input_refused() {
  local name=$1 pattern=$2
  shift 2
  bounded "$@"
  expect_bad "$name" "$pattern"
  if (cd inputs && sha256sum --quiet -c ../inputs.sha >/dev/null 2>&1); then
    pass "$name: the inputs are unchanged"
  else
    fail "$name: the inputs are unchanged" "an input file changed"
  fi
}
expect_input_refused "run --out the scenario" \
  '^bindersim: --out: "inputs/s.json" is an input \(the scenario\); expected another file$' \
  run inputs/s.json "${SHORT[@]}" --out inputs/s.json
ln inputs/s.json inputs/hard-link.json
expect_input_refused "run --out a hard link to the scenario" \
  '^bindersim: --out: "inputs/hard-link.json" is an input \(the scenario\)' \
  run inputs/s.json "${SHORT[@]}" --out inputs/hard-link.json
expect_input_refused "run --trace the topology, by another path" \
  '^bindersim: --trace: "inputs/../inputs/t.json" is an input \(the topology\)' \
  run inputs/s.json "${SHORT[@]}" --trace inputs/../inputs/t.json
expect_input_refused "compare --out a column's topology" \
  '^bindersim compare: --out: "'"$TMP"'/inputs/t.json" is an input \(a topology of the comparison\)' \
  compare inputs/s.json "${SHORT[@]}" --out "$TMP/inputs/t.json"
expect_input_refused "report --out its input" \
  '^bindersim report: --out: "./inputs/r.json" is an input \(a document to report\)' \
  report inputs/r.json --out ./inputs/r.json
expect_input_refused "sweep expand --out its scenario" \
  '^bindersim sweep expand: --out: "inputs/s.json" is an input \(the sweep.s scenario\)' \
  sweep expand inputs/sw.json --out inputs/s.json
expect_input_refused "sweep expand --out its runs' topology" \
  '^bindersim sweep expand: --out: "inputs/t.json" is an input \(a run.s topology\)' \
  sweep expand inputs/sw.json --out inputs/t.json
expect_input_refused "sweep merge --out a result it merges" \
  '^bindersim sweep merge: --out: "inputs/'"$merged"'" is an input \(a result to merge\)' \
  sweep merge inputs/merged --out "inputs/$merged"
expect_input_refused "sweep merge --out its runs file" \
  '^bindersim sweep merge: --out: "inputs/runs.jsonl" is an input \(the runs file\)' \
  sweep merge inputs/merged --runs inputs/runs.jsonl --out inputs/runs.jsonl

# --- F: command-line values in a message keep it on one line and away from the terminal -------
bounded run schd-dbg --selector $'a\nb'
expect_bad "run --selector with a newline" '^bindersim: --selector: unknown selector "a\\nb"; valid selectors: '
bounded $'ru\x1bn'
expect_bad "an unknown command with an escape" '^bindersim: unknown command "ru\\x1bn"'
bounded compare schd-dbg --seeds 2 --jobs 1 --selectors $'fifo,\xc2\x9bx,\x9by'
expect_bad "compare --selectors with C1 controls, in UTF-8 and as a lone byte" '"\\u009bx"'
bounded compare schd-dbg --seeds 2 --jobs 1 --selectors $'fifo,\x9by'
expect_bad "compare --selectors with a lone byte that is not UTF-8" '"\\x9by"'
bounded run schd-dbg $'--bad\nopt'
expect_bad "an unknown option with a newline" "^bindersim run: unrecognised option '--bad\\\\nopt'"
bounded run $'no\nfile.json'
expect_bad "run of a missing file whose name has a newline" '^bindersim: no\\nfile.json: cannot open file$'
bounded sweep merge $'no\ndir'
expect_bad "sweep merge of a missing directory whose name has a newline" '^bindersim sweep merge: no\\ndir: no such directory$'

# --- G: a key given twice ---------------------------------------------------------------------
sed '0,/"name":/s//"name": "first", "name":/' "$ROOT/scenarios/schd-dbg.json" >dup.json
bounded run dup.json --out dup-result.json
expect_bad "a scenario with a key given twice" '^bindersim: dup.json: line [0-9]+, column [0-9]+: /name: expected each key at most once in an object, got "name" again \(first at line'
absent "a scenario with a key given twice writes no result" dup-result.json
bounded run schd-dbg --set 'kernel={"selector":"bogus","selector":"fifo"}'
expect_bad "run --set with a key given twice" '^bindersim: --set kernel=\{.*\}: line 1, column 21: /selector: expected each key at most once'
bounded compare schd-dbg --set 'kernel={"selector":"bogus","selector":"fifo"}'
expect_bad "compare --set with a key given twice" '^bindersim compare: --set kernel=\{.*\}: line 1, column 21: /selector: '

# --- H: a data directory that does not exist ---------------------------------------------------
BINDERSIM_DATA_DIR="$TMP/nonexistent" bounded topology list
expect_bad "topology list without a data directory" "nonexistent/topologies: expected the directory of the topologies, found none"

# --- I: standard output that cannot be written ------------------------------------------------
# Where stdout carries data (runs, a page, tables), a failed write exits 2 with one line saying
# so; stdout on /dev/full (every write fails) or closed.
# to_stdout HOW ARGS...: runs bindersim with stdout on /dev/full (HOW=full) or closed (HOW=closed).
to_stdout() {
  local how=$1
  shift
  if [[ $how == full ]]; then
    "$BIN" "$@" >/dev/full 2>"$TMP/err"
  else
    "$BIN" "$@" >&- 2>"$TMP/err"
  fi
  rc=$?
}
# expect_write_failed NAME: exit 2 and one stderr line, saying that stdout failed (no summary
# or warning of the command before it).
expect_write_failed() {
  if [[ $rc -eq 2 ]] && [[ $(cat "$TMP/err") == "bindersim: writing standard output failed" ]]; then
    pass "$1"
  else
    fail "$1" "exit $rc; stderr: $(head -c 300 "$TMP/err")"
  fi
}
cat >out-sweep.json <<JSON
{"schema": "bindersim.sweep/1", "name": "out", "scenario": "schd-dbg",
 "set": {"clients.*.iterations": 20}, "selectors": ["fifo"], "seeds": 1}
JSON
to_stdout full sweep expand out-sweep.json
expect_write_failed "sweep expand > /dev/full"
run sweep expand out-sweep.json --out out-runs.jsonl
run sweep run out-runs.jsonl --out-dir out-results
[[ $rc -eq 0 ]] || fail "sweep run of a small sweep" "exit $rc: $(cat "$TMP/err")"
to_stdout full sweep merge out-results
expect_write_failed "sweep merge > /dev/full"
to_stdout full sweep run out-runs.jsonl --out-dir out-results
expect_write_failed "sweep run > /dev/full (its results exist: skipped)"
to_stdout full compare schd-dbg --selectors fifo,ctabs --seeds 1 "${SHORT[@]}"
expect_write_failed "compare > /dev/full"
to_stdout full run schd-dbg --set clients.0.iterations=20 --set time_limit_s=0.001
expect_write_failed "run > /dev/full, with the unfinished clients' warning"
run run schd-dbg "${SHORT[@]}" --out out-result.json
to_stdout full report out-result.json -o -
expect_write_failed "report -o - > /dev/full"
to_stdout closed report out-result.json -o -
expect_write_failed "report -o - with stdout closed"
to_stdout full topology show sa8155p
expect_write_failed "topology show > /dev/full (a short output, written at exit)"
# A directory where a run's result would be is bad input, not a result to skip.
run sweep expand out-sweep.json --out out-runs2.jsonl
mkdir -p out-results2
mkdir "out-results2/$(sed -n 's/.*"run_id": *"\([0-9a-f]*\)".*/\1/p' out-runs2.jsonl | head -n 1).json"
bounded sweep run out-runs2.jsonl --out-dir out-results2
expect_bad "sweep run with a directory named as a result" ': expected a run.s result file \(or none\), got a directory$'
# A result path that cannot be looked at (a link to itself) is said before any run, not taken
# for a missing result.
mkdir -p out-results3
ln -s "$(sed -n 's/.*"run_id": *"\([0-9a-f]*\)".*/\1/p' out-runs2.jsonl | head -n 1).json" \
  "out-results3/$(sed -n 's/.*"run_id": *"\([0-9a-f]*\)".*/\1/p' out-runs2.jsonl | head -n 1).json"
bounded sweep run out-runs2.jsonl --out-dir out-results3
expect_bad "sweep run with a result path that loops" '\.json: cannot read: Too many levels of symbolic links$'
to_stdout full sweep expand no-such-sweep.json
expect_bad "bad input with stdout on /dev/full: its own line only" 'no-such-sweep.json: '

summary
