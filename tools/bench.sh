#!/usr/bin/env bash
# End-to-end speed and memory of `bindersim run` on the shipped scenarios: the median of
# several runs' wall time, with calls/s, events/s and peak RSS.
#
#   tools/bench.sh                 each scenario 3 times
#   tools/bench.sh --runs 5
#   tools/bench.sh --memory        also peak RSS at 10,000 vs 1,000,000 schd-dbg iterations
#   tools/bench.sh --jobs          also `compare` with --jobs 1 .. nproc: wall time and speed-up
#   tools/bench.sh --instructions  only binder-throughput's instructions per simulated call,
#                                  which do not depend on the host's speed (callgrind, 8 x 2,000
#                                  and 8 x 5,000 calls: the difference over the 24,000 between),
#                                  and where they go, by component and by function
#   tools/bench.sh --against DIR   only binder-throughput, with this build and DIR/bindersim in
#                                  turn (the host's speed drifts from minute to minute): the
#                                  median and fastest wall time of each over --runs rounds, and
#                                  whether their result files are byte-identical
#
# Uses build/bindersim (BINDERSIM_BUILD_DIR to change) and GNU time (/usr/bin/time); valgrind
# for --instructions.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${BINDERSIM_BUILD_DIR:-$root/build}/bindersim"
runs=3
memory=0
jobs=0
instructions=0
against=""
while [[ $# -gt 0 ]]; do
  if [[ ( $1 == --runs || $1 == --against ) && $# -lt 2 ]]; then
    echo "tools/bench.sh: $1 needs a value" >&2
    exit 2
  fi
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --memory) memory=1; shift ;;
    --jobs) jobs=1; shift ;;
    --instructions) instructions=1; shift ;;
    --against) against="$2"; shift 2 ;;
    -h|--help) sed -n 2,19p "$0"; exit 0 ;;
    *) echo "tools/bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -x "$bin" ]] || { echo "tools/bench.sh: no $bin (run tools/setup.sh)" >&2; exit 2; }
export BINDERSIM_DATA_DIR="$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [[ $instructions -eq 1 ]]; then
  command -v valgrind >/dev/null ||
    { echo "tools/bench.sh: --instructions needs valgrind (apt-get install valgrind)" >&2; exit 2; }
  # Instructions of one whole run of binder-throughput with `iterations` calls per worker; the
  # profile stays in $tmp/cg-<iterations>.out.
  count() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg-$1.out" "$bin" run \
      "$root/scenarios/binder-throughput.json" --set "clients.*.iterations=$1" \
      >/dev/null 2>"$tmp/valgrind.log" || { cat "$tmp/valgrind.log" >&2; exit 1; }
    sed -n 's/^summary: \([0-9]*\).*/\1/p' "$tmp/cg-$1.out"
  }
  workers=8  # binder-throughput's clients
  short=$(count 2000)
  long=$(count 5000)
  [[ $short =~ ^[0-9]+$ && $long =~ ^[0-9]+$ && $long -gt $short ]] ||
    { echo "tools/bench.sh: callgrind gave no usable counts ('$short', '$long')" >&2; exit 1; }
  awk -v short="$short" -v long="$long" -v w="$workers" 'BEGIN {
    per_call = (long - short) / (w * 3000)
    printf "binder-throughput: %.1f M instructions at %d x 2,000 calls, %.1f M at %d x 5,000\n",
      short / 1e6, w, long / 1e6, w
    printf "%.0f instructions per simulated call, %.1f M at start-up\n",
      per_call, (short - w * 2000 * per_call) / 1e6 }'
  # Where they go: each function's own instructions per call, the same difference of the two
  # runs, with the code inlined into a function counted in it.
  if command -v callgrind_annotate >/dev/null && command -v python3 >/dev/null; then
    callgrind_annotate --threshold=100 "$tmp/cg-2000.out" >"$tmp/short.txt"
    callgrind_annotate --threshold=100 "$tmp/cg-5000.out" >"$tmp/long.txt"
    python3 "$root/tools/profile-by-function.py" "$tmp/short.txt" "$tmp/long.txt" \
      $((workers * 3000))
  fi
  exit 0
fi
if [[ -n "$against" ]]; then
  other="$against/bindersim"
  [[ -x "$other" ]] || { echo "tools/bench.sh: no $other" >&2; exit 2; }
  # Rounds of one run of each build, in turn; each run's result goes to <build>.json.
  for ((i = 0; i < runs; ++i)); do
    for which in this other; do
      build_bin="$bin"
      [[ $which == other ]] && build_bin="$other"
      start=$(date +%s%N)
      "$build_bin" run "$root/scenarios/binder-throughput.json" --out "$tmp/$which.json" \
        >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
      end=$(date +%s%N)
      echo "$which $((end - start))" >>"$tmp/walls"
    done
  done
  echo "binder-throughput (8x100k), $runs round(s) of each build in turn"
  for which in this other; do
    label="$bin"
    [[ $which == other ]] && label="$other"
    sed -n "s/^$which //p" "$tmp/walls" | sort -n | awk -v label="$label" '{ t[NR] = $1 / 1e9 }
      END { printf "%-40s median %.3f s, fastest %.3f s\n", label, t[int((NR + 1) / 2)], t[1] }'
  done
  if cmp -s "$tmp/this.json" "$tmp/other.json"; then
    echo "results: byte-identical"
  else
    echo "results: different (compare their provenance.fingerprint)"
  fi
  exit 0
fi
[[ -x /usr/bin/time ]] || { echo "tools/bench.sh: needs GNU time (apt-get install time)" >&2; exit 2; }

# One run: prints "wall_s rss_kb calls events". The wall time is the whole process's, to the
# microsecond (GNU time's %e has 10 ms steps: short runs would show 0); GNU time gives the RSS.
measure() {
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$tmp/time" "$bin" run "$@" >"$tmp/out" 2>/dev/null
  end=$(date +%s%N)
  local calls events
  calls=$(sed -n '1s/.* | \([0-9,]*\) calls | .*/\1/p' "$tmp/out" | tr -d ,)
  events=$(sed -n 's/^simulated .* s, \([0-9]*\) events in .*/\1/p' "$tmp/out")
  echo "$(awk -v ns=$((end - start)) 'BEGIN { printf "%.6f", ns / 1e9 }') $(cat "$tmp/time") $calls $events"
}

# Median wall time of $runs runs, with that run's figures.
bench() {
  local label="$1"
  shift
  for ((i = 0; i < runs; ++i)); do measure "$@"; done | sort -n | sed -n "$(((runs + 1) / 2))p" |
    awk -v label="$label" '{ printf "%-28s %8.3f s %12.0f calls/s %8.2f M events/s %8.1f MB\n",
      label, $1, ($1 > 0 ? $3 / $1 : 0), ($1 > 0 ? $4 / $1 / 1e6 : 0), $2 / 1024 }'
}

echo "bindersim $("$bin" --version | cut -d' ' -f2) on $(nproc) CPU(s), $(uname -m); median of $runs"
printf '%-28s %10s %18s %17s %11s\n' scenario wall calls/s events/s "peak RSS"
bench "schd-dbg (10,000 iter.)" "$root/scenarios/schd-dbg.json"
bench "sync-wakeup (2,000 iter.)" "$root/scenarios/sync-wakeup.json"
bench "binder-throughput (8x100k)" "$root/scenarios/binder-throughput.json"
if [[ $memory -eq 1 ]]; then
  bench "schd-dbg 10,000 iter." "$root/scenarios/schd-dbg.json" --set 'clients.*.iterations=10000'
  bench "schd-dbg 1,000,000 iter." "$root/scenarios/schd-dbg.json" \
    --set 'clients.*.iterations=1000000'
fi
if [[ $jobs -eq 1 ]]; then
  # 3 selectors x 4 seeds of schd-dbg: 12 independent runs to share out.
  # shellcheck disable=SC2054  # the commas separate selectors within one argument
  compare_args=("$root/scenarios/schd-dbg.json" --selectors fifo,ctabs,ctabs-nudge --seeds 4)
  printf '\n%-28s %10s %9s\n' "compare, 12 runs" wall speed-up
  one=""
  for ((j = 1; j <= $(nproc); ++j)); do
    wall=$(for ((i = 0; i < runs; ++i)); do
      /usr/bin/time -f "%e" -o "$tmp/time" "$bin" compare "${compare_args[@]}" --jobs "$j" \
        >/dev/null 2>&1
      cat "$tmp/time"
    done | sort -n | sed -n "$(((runs + 1) / 2))p")
    [[ -n "$one" ]] || one="$wall"
    awk -v j="$j" -v wall="$wall" -v one="$one" \
      'BEGIN { printf "%-28s %8.2f s %8.2fx\n", "--jobs " j, wall, one / wall }'
  done
fi
