#!/usr/bin/env python3
"""Writes a bindersim topology (docs/topology-format.md) for a device from what its kernel
exposes: CPUs, scheduler clusters, capacities, operating points and energy model, idle states
and caches.

    tools/capture-topology.py --adb [--serial S] --out mydevice.json      # an Android device
    tools/capture-topology.py --root / --out thisbox.json                  # this Linux machine
    tools/capture-topology.py --records capture.txt --out mydevice.json   # a saved capture

The device side is `tools/device/collect.sh topology` (POSIX sh, toybox): `--adb` pushes and
runs it, `--root DIR` runs it here on DIR (a machine's `/`, or a copy of its /sys and /proc
trees), and its output, saved with `--save-records`, can be turned into a topology later. Run
`adb root` first on a userdebug build: the energy model is in debugfs.

What the kernel does not expose is filled in and marked so in each object's `source`: cache and
memory latencies are estimates from typical cycle counts, and the kernel-path costs are copied
from a calibrated topology (`--base`, default sa8155p). Refit them against a baseline measured
on the device (docs/calibration.md) before trusting absolute latencies. Then check the file with
`bindersim topology show FILE`.

Bad input ends with one line on stderr, `capture-topology: ...`, exit status 2, and no output
file. The output is the same bytes for the same capture.
"""
import argparse
import os
import re
import subprocess
import sys

import jsonfmt
import topology_file
from tool_support import (ToolError, add_source_options, collect, main_of, natural_key,
                          parse_cpu_list, write_all)

TOOLS = os.path.dirname(os.path.abspath(__file__))
CPU_DIR = "/sys/devices/system/cpu"
MAX_CPUS = 64  # the topology format's limit
MAX_FREQ_KHZ = 10**8
MAX_DMIPS = 2**20
DT_IDLE_DIR = "/sys/firmware/devicetree/base/cpus/idle-states"
EM_DIR = "/sys/kernel/debug/energy_model"

# MIDR implementer and part numbers (/proc/cpuinfo) of the cores found in Android SoCs.
UARCH = {
    (0x41, 0xD03): "cortex-a53", (0x41, 0xD04): "cortex-a35", (0x41, 0xD05): "cortex-a55",
    (0x41, 0xD07): "cortex-a57", (0x41, 0xD08): "cortex-a72", (0x41, 0xD09): "cortex-a73",
    (0x41, 0xD0A): "cortex-a75", (0x41, 0xD0B): "cortex-a76", (0x41, 0xD0D): "cortex-a77",
    (0x41, 0xD41): "cortex-a78", (0x41, 0xD44): "cortex-x1", (0x41, 0xD46): "cortex-a510",
    (0x41, 0xD47): "cortex-a710", (0x41, 0xD48): "cortex-x2", (0x41, 0xD4D): "cortex-a715",
    (0x41, 0xD4E): "cortex-x3", (0x41, 0xD80): "cortex-a520", (0x41, 0xD81): "cortex-a720",
    (0x41, 0xD82): "cortex-x4", (0x41, 0xD85): "cortex-x925", (0x41, 0xD87): "cortex-a725",
    (0x51, 0x802): "kryo-385-gold", (0x51, 0x803): "kryo-385-silver",
    (0x51, 0x804): "kryo-485-gold", (0x51, 0x805): "kryo-485-silver", (0x51, 0x001): "oryon",
}

# Estimates for what the kernel does not expose (each written into the `source` it feeds).
# Load-to-use cycles of a private cache hit, by level, at the cluster's fmax: typical of Arm
# cores (L1D 4 cycles; private L2 9-13; a private L3 is rare).
PRIVATE_CYCLES = {1: 4, 2: 12, 3: 30}
# Shared cache hits, by level, in ns (a DynamIQ L3 about 30 ns with its snoops; a system cache
# about 60 ns), and memory (LPDDR4X/LPDDR5 about 120 ns).
SHARED_NS = {2: 10.0, 3: 30.0}
OUTER_SHARED_NS = 60.0
MEMORY_NS = 120.0
# Cache sizes where cacheinfo has none, by level (KiB): an L1D of the small cores, a typical
# private L2, a typical shared L3.
SIZE_ESTIMATE_KIB = {1: 32, 2: 256, 3: 2048}
# A cpufreq driver that does not know its transition latency reports CPUFREQ_ETERNAL.
CPUFREQ_ETERNAL = 4294967295
TRANSITION_ESTIMATE_US = 40
CLUSTER_NAMES = {1: ["cpu"], 2: ["little", "big"], 3: ["little", "mid", "big"]}


def fail(what, expected, got):
    raise ToolError(f"{what}: expected {expected}, got {got}")


# --- records ----------------------------------------------------------------------------------

def parse_records(text, origin):
    """The collector's output as {path: text} for files and {path: bytes} for hex records."""
    files, blobs, props = {}, {}, {}
    kind, key, lines = None, None, []

    def close():
        if kind == "file":
            files[key] = "\n".join(lines).strip()
        elif kind == "hex":
            try:
                blobs[key] = bytes(int(b, 16) for b in " ".join(lines).split())
            except ValueError:
                fail(f"{origin}: @@hex {key}", "hex bytes", repr(" ".join(lines)[:40]))
        elif kind == "prop":
            props[key] = "\n".join(lines).strip()

    for number, line in enumerate(text.splitlines(), 1):
        match = re.match(r"@@(file|hex|prop) (\S.*)$", line)
        if match:
            close()
            kind, key, lines = match.group(1), match.group(2), []
        elif kind is None:
            if line.strip():
                fail(f"{origin}: line {number}", "a record (@@file, @@hex or @@prop)",
                     repr(line[:40]))
        else:
            lines.append(line)
    close()
    if not files:
        fail(origin, "records of the collector (tools/device/collect.sh topology)", "none")
    return files, blobs, props


# --- reading the capture ----------------------------------------------------------------------

class Capture:
    def __init__(self, files, blobs, props, origin):
        self.files, self.blobs, self.props, self.origin = files, blobs, props, origin

    def text(self, path):
        return self.files.get(path)

    def integer(self, path, required=False):
        value = self.text(path)
        if value is None:
            if required:
                fail(f"{self.origin}: {path}", "the file", "none")
            return None
        if not re.fullmatch(r"-?\d{1,18}", value):
            fail(f"{self.origin}: {path}", "an integer of at most 18 digits", repr(value[:40]))
        return int(value)

    def cells(self, path):
        """A device-tree property of 32-bit big-endian cells, or None."""
        blob = self.blobs.get(path)
        if blob is None:
            return None
        if len(blob) % 4 or not blob:
            fail(f"{self.origin}: {path}", "32-bit cells", f"{len(blob)} bytes")
        return [int.from_bytes(blob[i:i + 4], "big") for i in range(0, len(blob), 4)]

    def cpu_list(self, path):
        value = self.text(path)
        if value is None:
            return None
        try:
            return parse_cpu_list(value, MAX_CPUS)
        except ValueError as e:
            fail(f"{self.origin}: {path}", str(e), repr(value[:40]))

    def children(self, directory, pattern):
        """Names of the entries of `directory` (as seen in the recorded paths) matching it."""
        names = set()
        prefix = directory.rstrip("/") + "/"
        for path in list(self.files) + list(self.blobs):
            if path.startswith(prefix):
                name = path[len(prefix):].split("/", 1)[0]
                if re.fullmatch(pattern, name):
                    names.add(name)
        return sorted(names, key=natural_key)


def cpu_ids(cap):
    cpus = cap.cpu_list(f"{CPU_DIR}/possible")
    if cpus is None:
        cpus = [int(name[3:]) for name in cap.children(CPU_DIR, r"cpu\d+")]
    if not cpus:
        fail(f"{cap.origin}: {CPU_DIR}/possible", "the CPUs", "none")
    if cpus != list(range(len(cpus))):
        fail(f"{cap.origin}: {CPU_DIR}/possible", "CPU ids 0..n-1", ",".join(map(str, cpus)))
    online = cap.cpu_list(f"{CPU_DIR}/online")
    for cpu in cpus:
        if online is not None and cpu not in online:
            fail(f"{cap.origin}: {CPU_DIR}/online", f"every CPU online (cpu{cpu} is offline: "
                 f"echo 1 > {CPU_DIR}/cpu{cpu}/online before capturing)",
                 cap.text(f"{CPU_DIR}/online"))
    return cpus


def uarch_names(cap):
    """CPU id -> core name from /proc/cpuinfo (arm64 lists implementer and part per CPU)."""
    names, cpu, implementer = {}, None, None
    for line in (cap.text("/proc/cpuinfo") or "").splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "processor" and value.isdigit():
            cpu, implementer = int(value), None
        elif key == "CPU implementer" and cpu is not None:
            implementer = hex_number(value)
        elif key == "CPU part" and cpu is not None and implementer is not None:
            part = hex_number(value)
            if part is not None:
                names[cpu] = UARCH.get((implementer, part), f"arm-{implementer:#x}-{part:#x}")
    return names


def hex_number(text):
    return int(text, 16) if re.fullmatch(r"0x[0-9a-fA-F]{1,8}", text) else None


class Cpu:
    """What the capture says about one CPU."""

    def __init__(self, cap, cpu):
        base = f"{CPU_DIR}/cpu{cpu}"
        self.id = cpu
        self.fmax = cap.integer(f"{base}/cpufreq/cpuinfo_max_freq")
        if self.fmax is not None and not 1 <= self.fmax <= MAX_FREQ_KHZ:
            fail(f"{cap.origin}: {base}/cpufreq/cpuinfo_max_freq",
                 f"a frequency of 1..{MAX_FREQ_KHZ} kHz", self.fmax)
        self.transition_ns = cap.integer(f"{base}/cpufreq/cpuinfo_transition_latency")
        self.domain = tuple(cap.cpu_list(f"{base}/cpufreq/related_cpus") or [cpu])
        dmips = cap.cells(f"{base}/of_node/capacity-dmips-mhz")
        self.dmips = dmips[0] if dmips else None
        if self.dmips is not None and not 1 <= self.dmips <= MAX_DMIPS:
            fail(f"{cap.origin}: {base}/of_node/capacity-dmips-mhz", f"1..{MAX_DMIPS}",
                 self.dmips)
        self.capacity = cap.integer(f"{base}/cpu_capacity")
        self.idle_phandles = cap.cells(f"{base}/of_node/cpu-idle-states") or []
        self.cluster_id = cap.integer(f"{base}/topology/cluster_id")
        self.package_id = cap.integer(f"{base}/topology/physical_package_id")
        self.caches = []
        for index in cap.children(f"{base}/cache", r"index\d+"):
            path = f"{base}/cache/{index}"
            kind = cap.text(f"{path}/type")
            size = cap.text(f"{path}/size")
            if kind == "Instruction":
                continue
            level = cap.integer(f"{path}/level", required=True)
            if not 1 <= level <= 16:
                fail(f"{cap.origin}: {path}/level", "a cache level of 1..16", level)
            self.caches.append({
                "level": level,
                "size_kib": size_kib(size, f"{cap.origin}: {path}/size") if size else None,
                "cpus": tuple(cap.cpu_list(f"{path}/shared_cpu_list") or [cpu]),
                "line": cap.integer(f"{path}/coherency_line_size"),
                "path": path})
        self.idle = []
        for state in cap.children(f"{base}/cpuidle", r"state\d+"):
            path = f"{base}/cpuidle/{state}"
            self.idle.append({
                "index": int(state[5:]), "path": path,
                "name": cap.text(f"{path}/name") or state,
                "latency": cap.integer(f"{path}/latency", required=True),
                "residency": cap.integer(f"{path}/residency", required=True),
                "disabled": cap.integer(f"{path}/disable") == 1})


def size_kib(text, what):
    match = re.fullmatch(r"(\d{1,12})\s*([KMG]?)", text.strip())
    if not match:
        fail(what, "a size such as 32K", repr(text[:40]))
    value = int(match.group(1)) * {"": 1, "K": 1, "M": 1024, "G": 1024 * 1024}[match.group(2)]
    if match.group(2) == "" and value >= 1024:
        value //= 1024  # bytes
    if value < 1:
        fail(what, "at least 1 KiB", text)
    return value


# --- clusters ---------------------------------------------------------------------------------

def group_clusters(cap, cpus):
    """The scheduler clusters: CPUs grouped by the kernel's cluster id (cpu-map), or by package
    id on kernels without one, then split where a group mixes frequency domains, maximum
    frequencies or capacities (the format gives those per cluster). Returns (groups, how)."""
    groups, how = None, None
    for attribute, what in (("cluster_id", "topology/cluster_id"),
                            ("package_id", "topology/physical_package_id")):
        values = [getattr(c, attribute) for c in cpus]
        if all(v is not None and 0 <= v < 65535 for v in values) and len(set(values)) > 1:
            groups = [[c for c in cpus if getattr(c, attribute) == v]
                      for v in sorted(set(values), key=lambda v: values.index(v))]
            how = f"the kernel's {what} (cpu-map)"
            break
    if groups is None:
        groups = [cpus]
        how = "one cpu-map cluster (topology ids do not split the CPUs)"
    split = []
    for group in groups:
        parts = {}
        for c in group:
            parts.setdefault((c.domain, c.fmax, c.dmips, c.capacity), []).append(c)
        if len(parts) > 1:
            how += "; split by frequency domain and capacity"
        split.extend(parts.values())
    split.sort(key=lambda g: g[0].id)
    return split, how


def dmips_of(cap, clusters):
    """capacity-dmips-mhz per cluster, from the device tree, or from the kernel's cpu_capacity
    (dmips x fmax scaled to 1024: dmips is capacity / fmax, scaled so the largest is 1024)."""
    firsts = [g[0] for g in clusters]
    if all(c.dmips for c in firsts):
        return [(c.dmips, f"capacity-dmips-mhz {c.dmips}: device tree "
                 f"({CPU_DIR}/cpu{c.id}/of_node)") for c in firsts]
    if all(c.capacity for c in firsts):
        ratio = [c.capacity / c.fmax for c in firsts]
        top = max(ratio)
        return [(max(1, round(1024 * r / top)),
                 f"capacity-dmips-mhz derived from cpu_capacity {c.capacity} and fmax "
                 f"(no capacity-dmips-mhz in the device tree)") for c, r in zip(firsts, ratio)]
    fail(f"{cap.origin}: cpu{firsts[0].id}",
         "capacity-dmips-mhz in the device tree or cpu_capacity in sysfs", "neither")


def cluster_names(clusters, capacities):
    order = sorted(range(len(clusters)), key=lambda i: (capacities[i], i))
    names = [f"cluster{i}" for i in range(len(clusters))]
    ranks = CLUSTER_NAMES.get(len(clusters))
    if ranks and len(set(capacities)) == len(clusters):
        for rank, i in enumerate(order):
            names[i] = ranks[rank]
    return names


def size_of(cache):
    """A cache's size in KiB and where it comes from: cacheinfo, or an estimate by level where
    the device tree gives no cache-size (cacheinfo then has no size file)."""
    if cache["size_kib"] is not None:
        return cache["size_kib"], f"{cache['path']}/size"
    estimate = SIZE_ESTIMATE_KIB.get(cache["level"], SIZE_ESTIMATE_KIB[3])
    return estimate, (f"estimate, {estimate} KiB, typical of the level ({cache['path']} has no "
                      f"size: the device tree gives no cache-size)")


def private_caches(cap, first):
    """The CPU's own caches, L1 first. Without a level-1 data or unified cache in cacheinfo an
    L1 of the estimated size stands in, so that the file always starts at level 1."""
    caches = sorted((c for c in first.caches if c["cpus"] == (first.id,)),
                    key=lambda c: c["level"])
    if not caches or caches[0]["level"] != 1:
        caches.insert(0, {"level": 1, "size_kib": None, "cpus": (first.id,), "line": None,
                          "path": f"{CPU_DIR}/cpu{first.id}/cache (no level-1 entry)"})
    result, previous = [], 0.0
    for cache in caches:
        if result and cache["level"] == result[-1]["level"]:
            fail(f"{cap.origin}: {cache['path']}", "one data or unified cache per level",
                 f"a second level-{cache['level']} cache")
        cycles = PRIVATE_CYCLES.get(cache["level"], 40)
        latency = above(cycles * 1e6 / first.fmax, previous)
        previous = latency
        size, size_source = size_of(cache)
        result.append({
            "level": cache["level"], "size_kib": size, "latency_ns": latency,
            "source": f"size: {size_source}; latency: estimate, {cycles} cycles at "
                      f"fmax (typical of the level; measure with a pointer chase such as "
                      f"lmbench lat_mem_rd)"})
    return result


def above(estimate, previous):
    """The estimate rounded to 0.1 ns, raised where needed to exceed the previous level."""
    value = round(estimate, 1)
    return value if value > previous else round(previous * 1.25 + 0.1, 1)


def shared_caches(cap, cpus, privates):
    """Caches listed by more than one CPU, inner first, with latencies above every member's
    private caches."""
    found = {}
    for c in cpus:
        for cache in c.caches:
            if len(cache["cpus"]) > 1:
                unknown = [m for m in cache["cpus"] if m not in privates]
                if unknown:
                    fail(f"{cap.origin}: {cache['path']}/shared_cpu_list",
                         "CPUs of this capture", f"cpu{unknown[0]}")
                found.setdefault((cache["level"], cache["cpus"]), cache)
    keys = sorted(found, key=lambda k: (k[0], k[1]))
    per_level = {}
    for level, _ in keys:
        per_level[level] = per_level.get(level, 0) + 1
    result, reach = [], {}
    for level, members in keys:
        cache = found[(level, members)]
        inner = max(reach.get(c, privates[c]) for c in members)
        latency = above(SHARED_NS.get(level, OUTER_SHARED_NS), inner)
        for c in members:
            reach[c] = latency
        name = f"l{level}" if per_level[level] == 1 else f"l{level}-cpu{members[0]}"
        while any(r["name"] == name for r in result):
            name += "-b"
        size, size_source = size_of(cache)
        result.append({
            "name": name, "level": level, "cpus": list(members), "size_kib": size,
            "latency_ns": latency,
            "source": f"CPUs: {cache['path']}/shared_cpu_list; size: {size_source}; latency: "
                      f"estimate, typical of a shared level-{level} hit; measure and replace"})
    return result, reach


# --- idle states ------------------------------------------------------------------------------

def dt_idle_nodes(cap):
    """Device-tree idle-state nodes, each (node name, idle-state-name, entry, exit, residency
    in us, path), by phandle and by name: a CPU's cpu-idle-states name them by phandle, while
    with PSCI's OS-initiated mode (power-domains instead of cpu-idle-states) cpuidle's states
    carry the nodes' names."""
    by_phandle, by_name = {}, {}
    for name in cap.children(DT_IDLE_DIR, r"[^/]+"):
        path = f"{DT_IDLE_DIR}/{name}"
        values = [cap.cells(f"{path}/{key}") for key in
                  ("entry-latency-us", "exit-latency-us", "min-residency-us")]
        if not all(values):
            continue
        label = ((cap.text(f"{path}/idle-state-name") or name).splitlines() or [name])[0]
        node = (name, label, *(v[0] for v in values), path)
        by_name.setdefault(name, node)
        phandle = cap.cells(f"{path}/phandle")
        if phandle:
            by_phandle[phandle[0]] = node
    return by_phandle, by_name


def state_name(text, taken):
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "state"
    while name in taken:
        name += "-b"
    taken.add(name)
    return name


def idle_states(cap, first, dt_nodes):
    """The CPU's idle states, shallowest first: state 0 is WFI; deeper states take the device
    tree's entry, exit and residency when its nodes match cpuidle's states (through the CPU's
    cpu-idle-states, in order, or by name), else cpuidle's latency (entry + exit, as the kernel
    holds it) as the exit."""
    if not first.idle:
        return [{"name": "wfi", "entry_latency_us": 0, "exit_latency_us": 1,
                 "min_residency_us": 1,
                 "source": "estimate: no cpuidle states in sysfs; WFI as the ARM cpuidle "
                           "driver's state 0 (1 us exit, 1 us residency)"}], []
    states, skipped, taken = [], [], set()
    deeper = first.idle[1:]
    by_phandle, by_name = dt_nodes
    if first.idle_phandles:
        by_dt = [by_phandle.get(p) for p in first.idle_phandles]
    else:
        by_dt = [by_name.get(state["name"]) for state in deeper]
    use_dt = len(by_dt) == len(deeper) and all(by_dt) and all(
        node[1] == state["name"] or node[0] == state["name"] for node, state in zip(by_dt, deeper))
    zero = first.idle[0]
    states.append({
        "name": state_name("wfi", taken), "entry_latency_us": 0,
        "exit_latency_us": max(zero["latency"], 1), "min_residency_us": max(zero["residency"], 1),
        "source": f"{zero['path']} ({zero['name']!r}, taken as WFI): latency and residency"})
    for i, state in enumerate(deeper):
        if state["disabled"] or "cluster" in state["name"].lower():
            why = "disabled" if state["disabled"] else "a cluster state, which needs every CPU "\
                  "of its domain idle: not modelled"
            skipped.append(f"{state['name']} ({why})")
            continue
        if use_dt:
            node, label, entry, exit_us, residency, path = by_dt[i]
            entry_us, source = entry, (f"device tree {path} (entry-latency-us, exit-latency-us, "
                                       f"min-residency-us), cpuidle {state['path']}")
            name = node
        else:
            entry_us, exit_us, residency = 0, state["latency"], state["residency"]
            source = (f"{state['path']}: latency (entry + exit as the kernel holds it, taken "
                      f"as the exit) and residency; no device-tree idle-state node matched")
            name = state["name"]
        previous = states[-1]
        if exit_us < previous["exit_latency_us"] or residency < previous["min_residency_us"]:
            fail(f"{cap.origin}: {state['path']}",
                 "exit latency and residency at least the shallower state's",
                 f"{exit_us} us and {residency} us after {previous['exit_latency_us']} us and "
                 f"{previous['min_residency_us']} us")
        states.append({"name": state_name(name, taken), "entry_latency_us": entry_us,
                       "exit_latency_us": max(exit_us, 1), "min_residency_us": max(residency, 1),
                       "source": source})
    return states, skipped


# --- operating points -------------------------------------------------------------------------

def energy_model(cap):
    """Performance domains of the energy model: [(cpus, [(kHz, power), ...], directory)]."""
    domains = []
    for name in cap.children(EM_DIR, r"[^/]+"):
        path = f"{EM_DIR}/{name}"
        cpus = cap.cpu_list(f"{path}/cpus")
        if cpus is None and re.fullmatch(r"cpu\d+", name):
            cpus = [int(name[3:])]
        points = []
        for point in cap.children(path, r"\w+:\d+"):
            freq = cap.integer(f"{path}/{point}/frequency")
            power = cap.integer(f"{path}/{point}/power")
            if freq is not None and power is not None:
                points.append((freq, power))
        if cpus and points:
            domains.append((cpus, sorted(points), path))
    return domains


def cpufreq(cap, group, domains):
    first = group[0]
    members = {c.id for c in group}
    domain = next((d for d in domains if members <= set(d[0])), None)
    if domain is None:
        return None
    points = [(f, p) for f, p in domain[1] if f <= first.fmax]
    if not points or points[-1][0] != first.fmax:
        fail(f"{cap.origin}: {domain[2]}", f"an operating point at cpuinfo_max_freq "
             f"{first.fmax} kHz", ", ".join(str(f) for f, _ in domain[1]) or "none")
    points = [(f, p) for f, p in points if f * 100 >= first.fmax]
    for (f0, p0), (f1, p1) in zip(points, points[1:]):
        if p1 < p0 or p0 <= 0:
            fail(f"{cap.origin}: {domain[2]}", "power never decreasing with frequency",
                 f"{p0} at {f0} kHz, then {p1} at {f1} kHz")
    transition = first.transition_ns
    # qcom-cpufreq-hw, among others, leaves it 0: unknown, not instantaneous.
    if transition is None or transition >= CPUFREQ_ETERNAL or transition <= 0:
        transition_us = TRANSITION_ESTIMATE_US
        why = (f"transition latency: estimate, {TRANSITION_ESTIMATE_US} us (cpufreq does not "
               f"report it), typical of a hardware-managed switch")
    else:
        transition_us = transition // 1000 if transition % 1000 == 0 else transition / 1000
        why = f"transition latency: cpuinfo_transition_latency {transition} ns"
    return {"transition_latency_us": transition_us,
            "opps": [{"freq_khz": f, "power": p} for f, p in points],
            "source": f"operating points and power: the kernel's energy model, {domain[2]} "
                      f"(power in its units); {why}"}


# --- the topology -----------------------------------------------------------------------------

def load_base(base):
    try:
        topology = topology_file.load(base)
        return dict(topology["costs"]), topology.get("name", base)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ToolError(f"--base {base}: expected a bindersim topology with costs, got "
                           f"{type(e).__name__}: {e}")


def build(cap, name, base):
    cpus = [Cpu(cap, i) for i in cpu_ids(cap)]
    for c in cpus:
        if c.fmax is None:
            fail(f"{cap.origin}: {CPU_DIR}/cpu{c.id}/cpufreq/cpuinfo_max_freq",
                 "the CPU's maximum frequency (a cpufreq driver, every CPU online)", "none")
    groups, how = group_clusters(cap, cpus)
    dmips = dmips_of(cap, groups)
    capacities = [d * g[0].fmax for (d, _), g in zip(dmips, groups)]
    names = cluster_names(groups, capacities)
    uarchs = uarch_names(cap)
    dt_nodes = dt_idle_nodes(cap)
    domains = energy_model(cap)
    clusters, privates = [], {}
    for index, group in enumerate(groups):
        first = group[0]
        caches = private_caches(cap, first)
        for c in group:
            privates[c.id] = caches[-1]["latency_ns"]
        states, skipped = idle_states(cap, first, dt_nodes)
        source = (f"CPUs: {how}; fmax {first.fmax} kHz: cpufreq cpuinfo_max_freq; "
                  f"{dmips[index][1]}")
        if skipped:
            source += "; idle states left out: " + ", ".join(skipped)
        cluster = {"id": index, "name": names[index],
                   "uarch": uarchs.get(first.id, "unknown"),
                   "cpus": [c.id for c in group], "max_freq_khz": first.fmax,
                   "capacity_dmips_mhz": dmips[index][0], "source": source,
                   "private_caches": caches, "idle_states": states}
        frequency = cpufreq(cap, group, domains)
        if frequency:
            cluster["cpufreq"] = frequency
        clusters.append(cluster)
    with_freq = [c for c in clusters if "cpufreq" in c]
    if with_freq and len(with_freq) != len(clusters):
        missing = next(c for c in clusters if "cpufreq" not in c)
        fail(f"{cap.origin}: {EM_DIR}", "an energy-model domain for every cluster",
             f"none for CPUs {missing['cpus']}")
    shared, reach = shared_caches(cap, cpus, privates)
    outermost = max(max(reach.get(c.id, privates[c.id]) for c in cpus), 0.0)
    memory = {"latency_ns": above(MEMORY_NS, outermost),
              "source": "estimate: typical LPDDR4X/LPDDR5 load-to-use latency; measure and "
                        "replace"}
    costs, base_name = base
    costs = dict(costs)
    line = next((cache["line"] for c in cpus for cache in c.caches if cache["line"]), None)
    line_note = ""
    if line and line & (line - 1) == 0 and line <= 4096:
        costs["line_bytes"] = line
        line_note = f" line_bytes {line}: cacheinfo coherency_line_size."
    costs["source"] = (f"copied from the {base_name} topology, calibrated on that SoC and not "
                       f"on this device: refit against a baseline measured here "
                       f"(docs/calibration.md).{line_note}")
    model = cap.text("/sys/firmware/devicetree/base/model")
    device = " ".join(filter(None, [cap.props.get("ro.product.model"),
                                    model.splitlines()[0] if model else None]))
    description = (f"{len(cpus)} CPUs in {len(clusters)} clusters"
                   + (f", {device}" if device else "")
                   + ": captured by tools/capture-topology.py; latencies are estimates and "
                     "costs are copied, as each source says")
    if not with_freq:
        description += ("; no energy model was readable (debugfs as root), so every cluster "
                        "runs at fmax and energy-aware placement has no power figures")
    return {"schema": "bindersim.topology/1", "name": name, "description": description,
            "clusters": clusters, "shared_caches": shared, "memory": memory, "costs": costs}


def encodable(text):
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def check_loads(binary, out, written):
    """Refuses a topology that bindersim's loader rejects: a capture can hold values outside
    the format's ranges or orders that the steps above do not check one by one."""
    binary = binary or os.environ.get("BINDERSIM") or os.path.join(
        os.path.dirname(TOOLS), "build", "bindersim")
    if not os.access(binary, os.X_OK):
        print(f"capture-topology: {out}: not checked: no bindersim binary at {binary} "
              f"(--bindersim)", file=sys.stderr)
        return
    done = subprocess.run([binary, "topology", "show", written], capture_output=True,
                          text=True, errors="replace", check=False)
    if done.returncode != 0:
        line = (done.stderr.strip().splitlines() or ["no message"])[-1]
        line = line.removeprefix("bindersim: ").replace(written, out)
        raise ToolError(f"the capture does not load in bindersim: {line}")


def default_name(cap):
    platform = cap.props.get("ro.board.platform")
    if platform:
        return platform
    compatible = (cap.text("/sys/firmware/devicetree/base/compatible") or "").splitlines()
    if compatible:
        return compatible[-1].split(",")[-1]
    return "captured"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_options(parser, "a capture", "--root", "capture the /sys and /proc under DIR",
                       metavar="DIR")
    parser.add_argument("--name", help="the topology's name (default: the board platform or "
                        "the device tree's compatible)")
    parser.add_argument("--base", default="sa8155p", help="topology name or path whose costs "
                        "are copied (default sa8155p)")
    parser.add_argument("--out", "-o", required=True, help="the topology file to write")
    parser.add_argument("--bindersim", help="the bindersim binary that checks the file loads "
                        "(default $BINDERSIM, else build/bindersim of this tree)")
    args = parser.parse_args()

    def capture():
        text, origin = collect("topology", records=args.records,
                               adb=args.adb_path if args.adb else None, serial=args.serial,
                               root=args.root)
        files, blobs, props = parse_records(text, origin)
        cap = Capture(files, blobs, props, origin)
        name = args.name or default_name(cap)
        if not name or re.search(r"[\x00-\x1f\x7f]", name) or not encodable(name):
            fail("--name", "a non-empty UTF-8 name without control characters",
                 ascii(name))
        topology = build(cap, name, load_base(args.base))
        outputs = [(args.out, jsonfmt.dumps(topology))]
        if args.save_records:
            outputs.append((args.save_records, text))
        write_all(outputs, check=lambda paths: check_loads(args.bindersim, args.out, paths[0]))

    return main_of("capture-topology", capture)


if __name__ == "__main__":
    sys.exit(main())
