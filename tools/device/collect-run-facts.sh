#!/bin/sh
# Runs a benchmark on the device and records where it ran, for tools/device-facts.py: the facts
# a calibration needs that a benchmark's own output leaves out (docs/calibration.md,
# "Facts from the device").
#
#   sh collect-run-facts.sh [COMMAND [ARGS...]]
#
# COMMAND defaults to binderThroughputTest with 8 workers and 100,000 iterations. It runs under
# `simpleperf stat -a --per-core` when simpleperf is installed. Before, during (a sample every 2
# seconds, the first after 1) and after the run, the script prints records:
#   @@prop NAME        an Android system property (getprop)
#   @@file PATH        a file's text: the cpusets, core_ctl's state, the online CPUs
#   @@sample N         a sample starts; then @@file records of /proc/PID/... of every process
#                      of the command (by name): its cpuset, its allowed CPUs and, per thread,
#                      /proc/PID/task/TID/stat (field 39: the CPU it last ran on)
#   @@output           the command's output (and simpleperf's) to the end
# POSIX sh and toybox. Run it as root (`adb root`) for core_ctl and every cpuset. With
# BINDERSIM_CAPTURE_ROOT set, /sys and /dev are read under that directory (for tests).
root=${BINDERSIM_CAPTURE_ROOT:-}
if [ $# -eq 0 ]; then
  set -- /data/nativetest64/binderThroughputTest/binderThroughputTest -w 8 -i 100000
fi
name=$(basename "$1" | cut -c1-15)  # /proc/PID/comm holds 15 characters
tmp=${TMPDIR:-/data/local/tmp}
[ -d "$tmp" ] || tmp=/tmp
out=$tmp/bindersim-run-facts.$$

text() {  # PATH... read as given (under $root with -r)
  prefix=
  if [ "$1" = -r ]; then prefix=$root; shift; fi
  for path in "$@"; do
    [ -f "$prefix$path" ] && [ -r "$prefix$path" ] || continue
    echo "@@file $path"
    cat "$prefix$path" 2>/dev/null
    echo
  done
}

under() {  # the paths under $root matching a pattern, printed without $root
  for match in "$root"$1; do
    [ -e "$match" ] && echo "${match#"$root"}"
  done
}

state() {  # the CPUs' state: online CPUs, core_ctl
  text -r /sys/devices/system/cpu/online
  for file in $(under '/sys/devices/system/cpu/cpu[0-9]*/core_ctl/*'); do
    text -r "$file"
  done
}

sample() {  # every process of the command and its threads
  echo "@@sample $1"
  state
  for dir in /proc/[0-9]*; do
    [ "$(cat "$dir/comm" 2>/dev/null)" = "$name" ] || continue
    text "$dir/cpuset"
    echo "@@file $dir/status"
    grep Cpus_allowed_list "$dir/status" 2>/dev/null
    for task in "$dir"/task/[0-9]*; do
      text "$task/stat"
    done
  done
}

if command -v getprop > /dev/null 2>&1; then
  for prop in ro.cpuset.default ro.board.platform ro.build.fingerprint; do
    echo "@@prop $prop"
    getprop "$prop"
  done
fi
text /proc/self/cpuset
for file in $(under '/dev/cpuset/cpus') $(under '/dev/cpuset/*/cpus'); do
  text -r "$file"
done
state

if command -v simpleperf > /dev/null 2>&1; then
  simpleperf stat -a --per-core -e cpu-cycles,cache-references,cache-misses,cpu-migrations,context-switches \
    -- "$@" > "$out" 2>&1 &
else
  "$@" > "$out" 2>&1 &
fi
pid=$!
sleep 1
count=1
while kill -0 "$pid" 2>/dev/null; do
  sample "$count"
  count=$((count + 1))
  sleep 2
done
wait "$pid"
status=$?
echo "@@exit"
echo "$status"
echo "@@output"
cat "$out"
rm -f "$out"
