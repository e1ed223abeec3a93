#!/bin/sh
# Prints the kernel's view of this machine's CPUs for tools/capture-topology.py: the sysfs and
# device-tree files it reads, each as a record
#   @@file PATH   then the file's text (device-tree strings with their NULs as newlines), or
#   @@hex PATH    then the file's bytes in hex (device-tree integers, big-endian cells), or
#   @@prop NAME   then an Android system property.
# Files that do not exist or cannot be read are left out. POSIX sh and toybox: runs on Android
# (`adb shell sh`), on Linux, and, with BINDERSIM_CAPTURE_ROOT set to a directory, on a copy of
# those trees under it (the paths printed are always the device's).
root=${BINDERSIM_CAPTURE_ROOT:-}

text() {
  for path in "$@"; do
    [ -f "$root$path" ] && [ -r "$root$path" ] || continue
    echo "@@file $path"
    tr '\000' '\n' < "$root$path" 2>/dev/null
    echo
  done
}

hex() {
  for path in "$@"; do
    [ -f "$root$path" ] && [ -r "$root$path" ] || continue
    echo "@@hex $path"
    od -An -tx1 -v "$root$path" 2>/dev/null
  done
}

# The paths under $root/DIR that match PATTERN, printed without $root.
under() {
  for match in "$root"$1; do
    [ -e "$match" ] && echo "${match#"$root"}"
  done
}

text /proc/cpuinfo /sys/devices/system/cpu/possible /sys/devices/system/cpu/online
text /sys/firmware/devicetree/base/model /sys/firmware/devicetree/base/compatible

for cpu in $(under '/sys/devices/system/cpu/cpu[0-9]*'); do
  text "$cpu/cpu_capacity"
  for key in cluster_id physical_package_id cluster_cpus_list core_siblings_list; do
    text "$cpu/topology/$key"
  done
  for key in related_cpus cpuinfo_max_freq scaling_available_frequencies \
      cpuinfo_transition_latency scaling_driver; do
    text "$cpu/cpufreq/$key"
  done
  for index in $(under "$cpu/cache/index[0-9]*"); do
    for key in level type size shared_cpu_list coherency_line_size; do
      text "$index/$key"
    done
  done
  for state in $(under "$cpu/cpuidle/state[0-9]*"); do
    for key in name desc latency residency disable; do
      text "$state/$key"
    done
  done
  hex "$cpu/of_node/capacity-dmips-mhz" "$cpu/of_node/cpu-idle-states"
done

for node in $(under '/sys/firmware/devicetree/base/cpus/idle-states/*'); do
  text "$node/idle-state-name" "$node/compatible"
  hex "$node/phandle" "$node/entry-latency-us" "$node/exit-latency-us" \
    "$node/min-residency-us"
done

# The energy model (debugfs: root, and debugfs mounted): one directory per performance domain
# with its CPUs and one directory per operating point.
for domain in $(under '/sys/kernel/debug/energy_model/*'); do
  text "$domain/cpus"
  for point in $(under "$domain/*:*"); do
    text "$point/frequency" "$point/power"
  done
done

if command -v getprop > /dev/null 2>&1; then
  for name in ro.board.platform ro.product.model ro.build.fingerprint; do
    echo "@@prop $name"
    getprop "$name"
  done
fi
