#!/bin/sh
# The device side of bindersim's device tools: prints what the kernel shows as records.
#
#   sh collect.sh topology          for tools/capture-topology.py: the CPUs, clusters,
#                                   capacities, caches, idle states and energy model
#   sh collect.sh run [COMMAND...]  for tools/device-facts.py: runs a benchmark (default
#                                   binderThroughputTest, 8 workers, 100,000 iterations) and
#                                   records where it ran
#
# Records:
#   @@file PATH   then the file's text (device-tree strings with their NULs as newlines)
#   @@hex PATH    then the file's bytes in hex (device-tree integers, big-endian cells)
#   @@prop NAME   then an Android system property (getprop)
#   @@sample N    (run) a sample during the run starts; @@file records of it follow
#   @@counters    (run) how the counters were taken: the simpleperf command, or none and why
#   @@exit        (run) the command's exit status
#   @@output      (run) the command's output (and simpleperf's), to the end
# Files that do not exist or cannot be read are left out. POSIX sh and toybox: runs on Android
# (`adb shell sh`) and on Linux. With BINDERSIM_CAPTURE_ROOT set to a directory, files are read
# from a copy of the device's trees under it (for tests), except the running processes'
# (/proc/self, /proc/PID), which are always this machine's; the paths printed are the device's.
root=${BINDERSIM_CAPTURE_ROOT:-}

# The file as this script reads it.
at() {
  case "$1" in
    /proc/self/* | /proc/[0-9]*) echo "$1" ;;
    *) echo "$root$1" ;;
  esac
}

# Records of the readable files among PATH...: `file` records their text, `hex` their bytes.
records() {
  kind=$1
  shift
  for path in "$@"; do
    file=$(at "$path")
    [ -f "$file" ] && [ -r "$file" ] || continue
    echo "@@$kind $path"
    if [ "$kind" = hex ]; then
      od -An -tx1 -v "$file" 2>/dev/null
    else
      tr '\000' '\n' < "$file" 2>/dev/null
      echo
    fi
  done
}

text() { records file "$@"; }
hex() { records hex "$@"; }

# The device paths matching a pattern.
under() {
  for match in "$root"$1; do
    [ -e "$match" ] && echo "${match#"$root"}"
  done
}

props() {
  command -v getprop > /dev/null 2>&1 || return 0
  for prop in "$@"; do
    echo "@@prop $prop"
    getprop "$prop"
  done
}

topology() {
  text /proc/cpuinfo /sys/devices/system/cpu/possible /sys/devices/system/cpu/online
  text /sys/firmware/devicetree/base/model /sys/firmware/devicetree/base/compatible
  for cpu in $(under '/sys/devices/system/cpu/cpu[0-9]*'); do
    text "$cpu/cpu_capacity"
    for key in cluster_id physical_package_id; do
      text "$cpu/topology/$key"
    done
    for key in related_cpus cpuinfo_max_freq cpuinfo_transition_latency; do
      text "$cpu/cpufreq/$key"
    done
    for index in $(under "$cpu/cache/index[0-9]*"); do
      for key in level type size shared_cpu_list coherency_line_size; do
        text "$index/$key"
      done
    done
    for state in $(under "$cpu/cpuidle/state[0-9]*"); do
      for key in name latency residency disable; do
        text "$state/$key"
      done
    done
    hex "$cpu/of_node/capacity-dmips-mhz" "$cpu/of_node/cpu-idle-states"
  done
  for node in $(under '/sys/firmware/devicetree/base/cpus/idle-states/*'); do
    text "$node/idle-state-name"
    hex "$node/phandle" "$node/entry-latency-us" "$node/exit-latency-us" \
      "$node/min-residency-us"
  done
  # The energy model (debugfs: root, and debugfs mounted): one directory per performance
  # domain with its CPUs and one per operating point (cs:FREQ before Linux 5.9, ps:FREQ since).
  for domain in $(under '/sys/kernel/debug/energy_model/*'); do
    text "$domain/cpus"
    for point in $(under "$domain/*:*"); do
      text "$point/frequency" "$point/power"
    done
  done
  props ro.board.platform ro.product.model ro.build.fingerprint
}

# The CPUs' state: online CPUs, Qualcomm's core control.
cpu_state() {
  text /sys/devices/system/cpu/online
  for file in $(under '/sys/devices/system/cpu/cpu[0-9]*/core_ctl/*'); do
    text "$file"
  done
}

# The first line of a file as a record, read by the shell itself: the sampler forks nothing
# per process or thread, so as not to disturb what it measures.
first_line() {
  first=
  IFS= read -r first 2>/dev/null < "$1" || [ -n "$first" ] || return 0
  echo "@@file $1"
  echo "$first"
}

# Every process named $name (/proc/PID/comm holds 15 characters) and its threads.
sample() {
  echo "@@sample $1"
  cpu_state
  for dir in /proc/[0-9]*; do
    comm=
    IFS= read -r comm 2>/dev/null < "$dir/comm"
    [ "$comm" = "$name" ] || continue
    first_line "$dir/cpuset"
    while IFS= read -r entry; do
      case "$entry" in Cpus_allowed_list*) echo "@@file $dir/status"; echo "$entry" ;; esac
    done 2>/dev/null < "$dir/status"
    for task in "$dir"/task/[0-9]*; do
      first_line "$task/stat"
    done
  done
}

EVENTS=cpu-cycles,cache-references,cache-misses,cpu-migrations,context-switches

# Why the run goes without simpleperf; nothing when simpleperf can count per core system-wide.
no_counters() {
  if ! command -v simpleperf > /dev/null 2>&1; then
    echo "simpleperf is not installed"
  elif [ "$(id -u 2>/dev/null)" != 0 ]; then
    echo "not root (adb root): simpleperf stat -a needs it"
  elif ! simpleperf stat -a --per-core -e "$EVENTS" -- sleep 0 > /dev/null 2>&1; then
    echo "a trial of simpleperf stat -a --per-core -e $EVENTS failed"
  fi
}

run() {
  if [ $# -eq 0 ]; then
    set -- /data/nativetest64/binderThroughputTest/binderThroughputTest -w 8 -i 100000
  fi
  name=$(basename "$1" | cut -c1-15)
  tmp=${TMPDIR:-/data/local/tmp}
  [ -d "$tmp" ] || tmp=/tmp
  out=$tmp/bindersim-run-facts.$$
  status_file=$out.status
  props ro.cpuset.default ro.board.platform ro.build.fingerprint
  text /proc/self/cpuset
  for file in $(under '/dev/cpuset/cpus') $(under '/dev/cpuset/*/cpus'); do
    text "$file"
  done
  cpu_state
  why=$(no_counters)
  echo "@@counters"
  # The command runs under sh -c, which keeps its exit status apart from simpleperf's.
  if [ -z "$why" ]; then
    echo "simpleperf stat -a --per-core -e $EVENTS"
    simpleperf stat -a --per-core -e "$EVENTS" -- \
      sh -c '"$@"; echo $? > "$0"' "$status_file" "$@" > "$out" 2>&1 &
  else
    echo "none: $why"
    sh -c '"$@"; echo $? > "$0"' "$status_file" "$@" > "$out" 2>&1 &
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
  echo "@@exit"
  cat "$status_file" 2>/dev/null || echo "?"
  echo "@@output"
  cat "$out"
  rm -f "$out" "$status_file"
}

case "$1" in
  topology) topology ;;
  run) shift; run "$@" ;;
  *) echo "usage: collect.sh topology | collect.sh run [COMMAND [ARGS...]]" >&2; exit 2 ;;
esac
