#!/usr/bin/env bash
# End-to-end checks of `bindersim run --trace`: traces of whole runs pass check_trace.py (and
# broken ones do not), the trace changes nothing in the result, windows, bad options and failed
# runs leave no file, and the progress line appears on a terminal only.
#
# usage: trace_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

HERE="$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source-path=SCRIPTDIR source=../cli/lib.sh
source "$HERE/../cli/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"
CHECK=("python3" "$HERE/check_trace.py")

# check NAME TRACE ARGS...: the validator accepts TRACE (with ARGS, e.g. --partial).
check() {
  local name=$1 trace=$2
  shift 2
  if "${CHECK[@]}" "$trace" "$@" >"$TMP/check" 2>&1; then
    pass "$name"
  else
    fail "$name" "$(grep -m5 -E 'problem|Error|error' "$TMP/check")"
  fi
}

# rejects NAME TRACE: the validator finds TRACE invalid.
rejects() {
  if "${CHECK[@]}" "$2" >"$TMP/check" 2>&1; then
    fail "the validator rejects a trace with $1"
  elif grep -q "^problem: " "$TMP/check"; then
    pass "the validator rejects a trace with $1"
  else
    fail "the validator rejects a trace with $1" "$(tail -3 "$TMP/check")"
  fi
}

# no_file NAME PATH: neither PATH nor a temporary of it (PATH.<pid>-<n>.tmp) exists.
no_file() {
  if [[ ! -e $2 ]] && ! compgen -G "$2.*.tmp" >/dev/null; then pass "$1"; else fail "$1" "$(ls "$2"*)"; fi
}

# --- whole runs ------------------------------------------------------------------------------
run run schd-dbg --selector ctabs --set clients.0.iterations=2000 --out "$TMP/plain.json"
run run schd-dbg --selector ctabs --set clients.0.iterations=2000 --out "$TMP/traced.json" \
  --trace "$TMP/schd-dbg.trace"
if [[ $rc -eq 0 && -s $TMP/schd-dbg.trace ]] && grep -q "^trace: [0-9]* events written to" "$TMP/out"; then
  pass "run --trace writes the trace and says so"
else
  fail "run --trace writes the trace and says so" "exit $rc: $(head -c 300 "$TMP/err")"
fi
if cmp -s "$TMP/plain.json" "$TMP/traced.json"; then
  pass "the result is byte-identical with and without --trace"
else
  fail "the result is byte-identical with and without --trace"
fi
check "schd-dbg under ctabs: a valid trace of its 4000 two-way calls" "$TMP/schd-dbg.trace" \
  --expect-calls 4000
if [[ $(head -1 "$TMP/schd-dbg.trace") == "# tracer: nop" ]]; then
  pass "the trace opens with ftrace's header"
else
  fail "the trace opens with ftrace's header" "$(head -1 "$TMP/schd-dbg.trace")"
fi

run run schd-dbg --selector ctabs --set clients.0.iterations=2000 --trace "$TMP/again.trace"
if cmp -s "$TMP/schd-dbg.trace" "$TMP/again.trace"; then
  pass "the same run gives a byte-identical trace"
else
  fail "the same run gives a byte-identical trace"
fi

# Memory pressure starts kswapd0 before the first event: the trace still opens with every
# CPU's frequency and idle state (it used to start without them, with idle exits never entered).
# The run stops once the clients are done, while the background threads' oneway calls may be
# in flight.
run run alloc-contention --set 'clients.*.iterations=50' --trace "$TMP/alloc.trace"
check "alloc-contention (memory pressure): a valid trace" "$TMP/alloc.trace" --open-at-end
if [[ $(grep -c " 0\.000000: cpu_frequency: " "$TMP/alloc.trace") -eq 8 ]]; then
  pass "the memory-pressure trace opens with the frequency of all 8 CPUs"
else
  fail "the memory-pressure trace opens with the frequency of all 8 CPUs"
fi

# An active misfit migration moves a running task (tests/trace/misfit.json): it is switched out
# on its CPU before it is migrated from there.
run run "$HERE/misfit.json" --trace "$TMP/misfit.trace"
check "a misfit migration: a valid trace" "$TMP/misfit.trace"
if grep -A1 "prev_comm=hog .* prev_state=R+ ==> next_comm=swapper/" "$TMP/misfit.trace" |
  grep -q "\[002\] .... .*sched_migrate_task: comm=hog .* orig_cpu=2 dest_cpu=4$"; then
  pass "the misfit task leaves its CPU, then migrates from there"
else
  fail "the misfit task leaves its CPU, then migrates from there" \
    "$(grep -m3 -e "sched_migrate_task: comm=hog" "$TMP/misfit.trace")"
fi

# Calls whose request, or whose reply, finds no buffer space: the trace shows each one sent and
# never received, and the caller gets BR_FAILED_REPLY, as the result counts them failed.
run run sync-wakeup --set clients.0.iterations=3 --set clients.0.iteration.1.payload_bytes=8192 \
  --set processes.0.buffer_space_bytes=4096 --trace "$TMP/failed-send.trace"
check "sends without buffer space: three BR_FAILED_REPLY and no call" "$TMP/failed-send.trace" \
  --expect-failed 3 --expect-calls 0
run run sync-wakeup --set clients.0.iterations=3 --set processes.0.nodes.0.reply_bytes=8192 \
  --set processes.1.buffer_space_bytes=4096 --trace "$TMP/failed-reply.trace"
check "replies without buffer space: three BR_FAILED_REPLY and no call" "$TMP/failed-reply.trace" \
  --expect-failed 3 --expect-calls 0

# A callback into the caller's process that finds no buffer space (tests/trace/callback.json):
# its binder_transaction still names the waiting caller thread, as binder.c fills in to_thread
# from the transaction stack before the tracepoint.
run run "$HERE/callback.json" --set processes.1.nodes.0.handler.1.payload_bytes=5000 \
  --trace "$TMP/callback.trace"
check "callbacks without buffer space: 50 BR_FAILED_REPLY" "$TMP/callback.trace" --expect-failed 50
ui=$(grep -m1 -o "comm=ui pid=[0-9]*" "$TMP/callback.trace" | cut -d= -f3)
if grep -B1 BR_FAILED_REPLY "$TMP/callback.trace" | grep -q "dest_thread=$ui reply=0"; then
  pass "a failed callback names the waiting caller as its destination thread"
else
  fail "a failed callback names the waiting caller as its destination thread" \
    "$(grep -m1 -B1 BR_FAILED_REPLY "$TMP/callback.trace")"
fi

# Nested two-way calls and oneway transactions (tests/trace/nested.json).
run run "$HERE/nested.json" --trace "$TMP/nested.trace"
check "nested and oneway transactions: a valid trace of 1000 two-way calls" "$TMP/nested.trace" \
  --expect-calls 1000
if grep -q ", 500 oneway transactions received" "$TMP/check"; then
  pass "the nested trace shows its 500 oneway transactions received"
else
  fail "the nested trace shows its 500 oneway transactions received" "$(head -1 "$TMP/check")"
fi

# --- windows ---------------------------------------------------------------------------------
run run schd-dbg --selector ctabs-nudge --set clients.0.iterations=2000 \
  --trace "$TMP/window.trace" --trace-window 0.1:0.15
check "a window of a run is a valid partial trace" "$TMP/window.trace" --partial
stamps=$(grep -v '^#' "$TMP/window.trace" | sed -E 's/.* ([0-9]+\.[0-9]{6}): .*/\1/' |
  awk 'NR == 1 { first = $1 } { last = $1 } END { print first, last, NR }')
read -r first last count <<<"$stamps"
if [[ $count -gt 100 ]] && awk -v f="$first" -v l="$last" 'BEGIN { exit !(f >= 0.1 && l <= 0.15) }'; then
  pass "a window's events lie between its START and END ($count events, $first..$last)"
else
  fail "a window's events lie between its START and END" "$stamps"
fi

for window in "0.2" "0.2:0.1" "x:" "1:2:3"; do
  run run schd-dbg --trace "$TMP/bad.trace" --trace-window "$window"
  if [[ $rc -eq 2 && $(wc -l <"$TMP/err") -eq 1 ]] && grep -q "START:END" "$TMP/err"; then
    pass "--trace-window $window exits 2 with one line showing START:END"
  else
    fail "--trace-window $window exits 2 with one line showing START:END" "exit $rc: $(cat "$TMP/err")"
  fi
  no_file "--trace-window $window leaves no trace file" "$TMP/bad.trace"
done
run run schd-dbg --trace-window 0:1
if [[ $rc -eq 2 ]] && grep -q "needs --trace" "$TMP/err"; then
  pass "--trace-window without --trace exits 2"
else
  fail "--trace-window without --trace exits 2" "exit $rc: $(cat "$TMP/err")"
fi

# A path that is not a regular file (a FIFO here, /dev/null alike) is written in place, never
# replaced by a rename.
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/from-fifo" &
reader=$!
run run schd-dbg --set clients.0.iterations=50 --trace "$TMP/fifo"
wait "$reader"
if [[ $rc -eq 0 && -p $TMP/fifo ]] && head -1 "$TMP/from-fifo" | grep -q "^# tracer: nop"; then
  pass "--trace to a FIFO writes through it and leaves it a FIFO"
else
  fail "--trace to a FIFO writes through it and leaves it a FIFO" "exit $rc: $(cat "$TMP/err")"
fi

# --- failures leave no file ------------------------------------------------------------------
run run schd-dbg --trace "$TMP/no-such-dir/x.trace"
if [[ $rc -eq 2 ]] && grep -q "no-such-dir/x.trace" "$TMP/err"; then
  pass "an unwritable --trace path exits 2 naming it"
else
  fail "an unwritable --trace path exits 2 naming it" "exit $rc: $(cat "$TMP/err")"
fi
# Handlers that call each other without end stop the run with an error half-way.
cat >"$TMP/endless.json" <<'EOF'
{
  "schema": "bindersim.scenario/1",
  "name": "endless",
  "topology": "sa8155p",
  "processes": [
    {"name": "app"},
    {"name": "ping", "nodes": [{"name": "n", "handler": [{"op": "call", "target": "pong"}]}]},
    {"name": "pong", "nodes": [{"name": "n", "handler": [{"op": "call", "target": "ping"}]}]}
  ],
  "clients": [{"name": "c", "process": "app", "iterations": 1,
               "iteration": [{"op": "call", "target": "ping"}]}]
}
EOF
run run "$TMP/endless.json" --trace "$TMP/endless.trace"
if [[ $rc -eq 2 ]] && grep -q "without end" "$TMP/err"; then
  pass "a run that fails half-way exits 2"
else
  fail "a run that fails half-way exits 2" "exit $rc: $(cat "$TMP/err")"
fi
no_file "a run that fails half-way leaves no trace file" "$TMP/endless.trace"

# --- the validator finds broken traces -------------------------------------------------------
T=$TMP/schd-dbg.trace
# The first wakeup of the server's looper after it slept.
awk '/sched_wakeup: comm=server:binder_1/ && !done { done = 1; next } { print }' "$T" >"$TMP/m1"
rejects "a missing sched_wakeup" "$TMP/m1"
awk '/sched_switch: prev_comm=client / && !done { sub(/prev_pid=[0-9]+/, "prev_pid=4242"); done = 1 }
     { print }' "$T" >"$TMP/m2"
rejects "a sched_switch whose prev is not the running task" "$TMP/m2"
awk '/binder_transaction: .* reply=1 / && !done { done = 1; next } { print }' "$T" >"$TMP/m3"
rejects "a reply missing from a call chain" "$TMP/m3"
# Every BR_TRANSACTION_COMPLETE moved one line later, so that the caller's deferred one follows
# its BR_FAILED_REPLY; and a failed send's transaction received after all.
awk '/BR_TRANSACTION_COMPLETE/ { held = $0; next }
     /BR_FAILED_REPLY/ && !done { done = 1; print; next } { if (held != "") print held; held = ""; print }' \
  "$TMP/failed-reply.trace" >"$TMP/m7"
rejects "a failed reply without the caller's BR_TRANSACTION_COMPLETE first" "$TMP/m7"
awk '{ print } /BR_FAILED_REPLY/ && !done { done = 1; line = $0
       sub(/binder_return: .*/, "binder_transaction_received: transaction=1", line); print line }' \
  "$TMP/failed-send.trace" >"$TMP/m8"
rejects "a failed send received after all" "$TMP/m8"
# The first sched_waking moved to the end, after later events.
awk '/sched_waking/ && !done { held = $0; done = 1; next } { print } END { print held }' "$T" \
  >"$TMP/m4"
rejects "lines out of time order" "$TMP/m4"
sed -E '0,/target_cpu=0([0-9]{2})$/s//target_cpu=\1/' "$T" >"$TMP/m5"
rejects "a field not laid out as TP_printk prints it" "$TMP/m5"
sed -E '0,/cpu_idle: state=4294967295/{/cpu_idle: state=4294967295/d}' "$T" >"$TMP/m6"
rejects "an idle CPU that runs a task without leaving idle" "$TMP/m6"

# --- progress on a terminal only -------------------------------------------------------------
# `script` gives the command a terminal; its stderr lands in the typescript. The run must last
# more than a second for the line to appear: the iterations grow until it does.
if command -v script >/dev/null; then
  shown=no
  for iterations in 150000 400000 1000000; do
    args=(run schd-dbg --selector ctabs --set "clients.0.iterations=$iterations")
    script -qec "$(printf '%q ' "$BIN" "${args[@]}") --out $TMP/tty.json >$TMP/tty.out" \
      "$TMP/typescript" >/dev/null 2>&1 </dev/null
    if grep -q "calls (.*%) | .*/s | ETA " "$TMP/typescript"; then
      shown=yes
      break
    fi
  done
  if [[ $shown == yes ]]; then
    pass "run shows its progress on a terminal"
  else
    fail "run shows its progress on a terminal" "$(tr '\r' '\n' <"$TMP/typescript" | tail -3)"
  fi
  run "${args[@]}" --out "$TMP/notty.json"
  if [[ $rc -eq 0 && ! -s $TMP/err ]]; then
    pass "run writes nothing on stderr when it is not a terminal"
  else
    fail "run writes nothing on stderr when it is not a terminal" "$(head -c 200 "$TMP/err")"
  fi
  if cmp -s "$TMP/tty.json" "$TMP/notty.json"; then
    pass "the result is byte-identical with and without the progress line"
  else
    fail "the result is byte-identical with and without the progress line"
  fi
  compare=(compare schd-dbg --selectors "fifo,ctabs" --seeds 2 --jobs 2
    --set "clients.0.iterations=$((iterations / 2))")
  script -qec "$(printf '%q ' "$BIN" "${compare[@]}") --out $TMP/tty-cmp.json >/dev/null" \
    "$TMP/typescript" >/dev/null 2>&1 </dev/null
  if grep -q "compare: [0-9] of 4 runs done" "$TMP/typescript"; then
    pass "compare shows its progress on a terminal"
  else
    fail "compare shows its progress on a terminal" "$(tr '\r' '\n' <"$TMP/typescript" | tail -3)"
  fi
  run "${compare[@]}" --out "$TMP/notty-cmp.json"
  if [[ $rc -eq 0 ]] && ! grep -q "runs done" "$TMP/err" && cmp -s "$TMP/tty-cmp.json" "$TMP/notty-cmp.json"; then
    pass "compare's output is the same without a terminal, and has no progress line"
  else
    fail "compare's output is the same without a terminal, and has no progress line"
  fi
else
  echo "SKIP  progress checks: no 'script' command (util-linux)"
fi

summary
