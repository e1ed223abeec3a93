# shellcheck shell=bash
# Helpers shared by the end-to-end test scripts: argument check and scratch directory, PASS/FAIL
# counting, and running bindersim with its output captured. Sourced; it runs nothing itself.
# shellcheck disable=SC2034  # BIN, ROOT and rc are read by the scripts that source this file

# init_test N USAGE ARGS...: exits 2 with "usage: $0 USAGE" unless there are N ARGS. Then BIN
# and ROOT are the first two ARGS (the bindersim binary and the repository under test), names
# (schd-dbg, sa8155p) resolve in ROOT rather than the build's source tree, and TMP is a fresh
# directory removed on exit.
init_test() {
  local count=$1 usage=$2
  shift 2
  if [[ $# -ne $count ]]; then
    echo "usage: $0 $usage" >&2
    exit 2
  fi
  BIN=$1
  ROOT=$2
  export BINDERSIM_DATA_DIR="$ROOT"
  TMP=$(mktemp -d)
  trap 'rm -rf "$TMP"' EXIT
}

passed=0
failed=0
pass() {
  echo "PASS  $1"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL  $1${2:+: $2}"
  failed=$((failed + 1))
}

# Prints the summary "N passed, M failed"; its status is the script's: non-zero on any failure.
summary() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}

# Runs bindersim with stdout and stderr captured in $TMP/out and $TMP/err; sets $rc.
run() {
  "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
  rc=$?
}

# same_run A B: the result files A and B are byte for byte the same except for the overrides
# their provenance records (a run given options that change nothing records them all the same).
same_run() {
  python3 - "$1" "$2" <<'PY'
import json, sys
def without_overrides(path):
    result = json.load(open(path))
    result["provenance"].pop("overrides")
    return result
sys.exit(without_overrides(sys.argv[1]) != without_overrides(sys.argv[2]))
PY
}

# tally FILE STATUS [FAILURE]: echoes and counts the PASS/FAIL lines a checker wrote to FILE; a
# checker that exited non-zero (STATUS) counts as one more failure, named FAILURE (default
# "checker exited with STATUS"), and its other output is shown.
tally() {
  local line
  while IFS= read -r line; do
    case $line in
      PASS*) echo "$line" && passed=$((passed + 1)) ;;
      FAIL*) echo "$line" && failed=$((failed + 1)) ;;
      *) echo "      $line" ;;
    esac
  done <"$1"
  [[ $2 -eq 0 ]] || fail "${3:-checker exited with $2}"
}
