#!/usr/bin/env bash
# End-to-end checks of `compare --jobs` and `sweep run --jobs` when the system refuses threads
# (here a limit on address space, each thread's stack taking 250 MB of it, so that at most one
# worker starts and a second one is refused): the work runs on the threads that started, with
# the same output as on one thread.
#
# usage: thread_limit_test.sh <path to bindersim binary> <repo root>
# Prints one line per check and a summary "N passed, M failed"; exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"
cd "$TMP" || exit 2

# A binary built with AddressSanitizer reserves terabytes of shadow address space at start-up,
# so it cannot run under an address-space limit: skipped (exit 77, which CTest reports as such).
if ldd "$BIN" 2>/dev/null | grep -q libasan; then
  echo "skipped: the binary is built with AddressSanitizer"
  exit 77
fi

# limited ARGS...: runs bindersim as run() does, within 400 MB of address space, with 250 MB
# stacks for new threads (glibc sizes them by the stack limit): room for one, and 20 s.
limited() {
  (
    ulimit -v 400000
    ulimit -s 250000
    timeout 20 "$BIN" "$@"
  ) >"$TMP/out" 2>"$TMP/err"
  rc=$?
}
# On a machine with more than one hardware thread (the most --jobs runs at once) a second
# worker was asked for and refused: the runs report one thread (a worker, or the calling thread
# when none started).
refused_line='on 1 thread(s)'
(($(nproc) > 1)) || refused_line=

run compare schd-dbg --seeds 40 --set clients.0.iterations=5 --jobs 1 --out one.json
cp "$TMP/out" one.txt
limited compare schd-dbg --seeds 40 --set clients.0.iterations=5 --jobs 3000 --out many.json
if [[ $rc -ne 0 ]]; then
  fail "compare --jobs 3000 under a memory limit" "exit $rc: $(head -c 300 "$TMP/err")"
elif ! cmp -s one.json many.json || ! cmp -s one.txt "$TMP/out"; then
  fail "compare --jobs 3000 under a memory limit" "the output differs from --jobs 1"
else
  pass "compare --jobs 3000 under a memory limit: the output of --jobs 1"
fi
if [[ -n $refused_line ]] && ! grep -q "$refused_line" "$TMP/err"; then
  fail "compare --jobs 3000 under a memory limit: the refused threads' runs go to one" "$(cat "$TMP/err")"
else
  pass "compare --jobs 3000 under a memory limit: the refused threads' runs go to one"
fi

cat >threads-sweep.json <<JSON
{"schema": "bindersim.sweep/1", "name": "threads", "scenario": "schd-dbg",
 "set": {"clients.0.iterations": 5}, "selectors": ["fifo"], "seeds": 40}
JSON
run sweep expand threads-sweep.json --out threads.jsonl
run sweep run threads.jsonl --out-dir one --jobs 1
limited sweep run threads.jsonl --out-dir many --jobs 3000
if [[ $rc -ne 0 ]]; then
  fail "sweep run --jobs 3000 under a memory limit" "exit $rc: $(head -c 300 "$TMP/err")"
elif [[ $(find many -name '*.json' | wc -l) -ne 40 ]] || ! diff -r one many >/dev/null; then
  fail "sweep run --jobs 3000 under a memory limit" "the result files differ from --jobs 1"
else
  pass "sweep run --jobs 3000 under a memory limit: the result files of --jobs 1"
fi
if [[ -n $refused_line ]] && ! grep -q "$refused_line" "$TMP/err"; then
  fail "sweep run --jobs 3000 under a memory limit: the refused threads' runs go to one" "$(cat "$TMP/err")"
else
  pass "sweep run --jobs 3000 under a memory limit: the refused threads' runs go to one"
fi

summary
