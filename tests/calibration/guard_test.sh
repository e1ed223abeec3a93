#!/usr/bin/env bash
# Calibration guard: the shipped SA8155P model still reproduces what the calibration reproduces
# of the measured baseline (tools/calibration/sa8155p-reference.json; docs/calibration.md),
# with bounds loose enough for short runs and tight enough to catch a broken calibration: a
# kernel-path cost 25% off, a background that no longer spreads SCHED_OTHER calls, a lost
# sync-wakeup rule, cross-cluster calls that no longer find an idle CPU powered down. Each check is one run of tools/calibrate.py (the rows of the full check)
# with two seeds averaged, its bounds multiplied, and only the named rows counted. Rows the
# calibration does not meet (docs/calibration.md) are not counted.
#
# usage: guard_test.sh <path to bindersim binary> <repo root>
# Prints one line per check (and the table of a failed one); exits non-zero on any failure.
set -u

# shellcheck source-path=SCRIPTDIR source=../cli/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
init_test 2 "<path to bindersim binary> <repo root>" "$@"

# guard NAME ARGS...: passes when tools/calibrate.py ARGS exits 0.
guard() {
  local name=$1
  shift
  if python3 -S "$ROOT/tools/calibrate.py" --bindersim "$BIN" --seeds 2 "$@" >"$TMP/table" 2>&1
  then
    pass "$name"
  else
    fail "$name"
    cat "$TMP/table"
  fi
}

# schd-dbg runs at the reference's 10,000 iterations (well under a second); binder-throughput,
# the costly one, at a twentieth or a tenth of its 8 x 100,000 calls (steady state).
guard "binder path: SCHED_FIFO same-core latency within 15%, share within 7.5 points" \
  --schd-scale 1 --bt-scale 0 --bound-factor 1.5 --only 'sched_fifo same_core'
guard "SCHED_OTHER spread: same-core share within 12.5 points, the three tier means within 25%" \
  --schd-scale 1 --bt-scale 0 --bound-factor 2.5 \
  --only 'sched_other (same_core|same_cluster mean|cross_cluster mean)'
guard "binder-throughput migrations and context switches per call within 75%" \
  --schd-scale 0 --bt-scale 0.05 --bound-factor 2.5 --only '(migrations|context switches) per'
guard "binder-throughput confined to the silver CPUs: iterations/s within 25%" \
  --schd-scale 0 --bt-scale 0.1 --silver-throughput --bound-factor 2.5 --only 'iterations/s'

summary
