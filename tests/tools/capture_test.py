#!/usr/bin/env python3
"""tools/capture-topology.py end to end: a device's /sys and /proc trees, written here as a GKI
kernel on an SA8155P would show them (from the public device-tree facts the shipped topology
cites), are captured through --root, --adb (a stand-in adb) and --records; the result must
agree with topologies/sa8155p.json wherever the kernel exposes the number, load in bindersim
and run a scenario. Variants take away what older kernels or user builds lack.

Usage: capture_test.py BINDERSIM SOURCE_DIR"""
import json
import os
import re
import stat
import subprocess
import sys

from harness import check, main

BINDERSIM, SOURCE = sys.argv[1], sys.argv[2]
TOOL = os.path.join(SOURCE, "tools", "capture-topology.py")
SHIPPED = json.load(open(os.path.join(SOURCE, "topologies", "sa8155p.json")))
# --- a device tree ----------------------------------------------------------------------------

PARTS = {"silver": 0x805, "gold": 0x804, "prime": 0x804}
DT_STATES = {  # node: (phandle, idle-state-name, entry, exit, residency) in us
    "cpu-sleep-0-0": (0x10, "little-rail-power-collapse", 355, 909, 3934),
    "cpu-sleep-1-0": (0x11, "big-rail-power-collapse", 241, 1461, 4488),
    "cluster-sleep-0": (0x12, "cluster-power-down", 3263, 6562, 9987),
}
CPU_STATE = {"silver": "cpu-sleep-0-0", "gold": "cpu-sleep-1-0", "prime": "cpu-sleep-1-0"}


def write(root, path, content):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(full, mode) as f:
        f.write(content)


def cells(*values):
    return b"".join(v.to_bytes(4, "big") for v in values)


def cpu_list(cpus):
    return f"{cpus[0]}-{cpus[-1]}" if len(cpus) > 1 else str(cpus[0])


def make_device(root, dt=True, cluster_id=True, single_map=False, energy_model=True,
                transition_ns=40000, extra_em_point=True, cache_sizes=True, idle_phandles=True):
    clusters = SHIPPED["clusters"]
    products = [c["capacity_dmips_mhz"] * c["max_freq_khz"] for c in clusters]
    cpuinfo = []
    write(root, "/sys/devices/system/cpu/possible", "0-7\n")
    write(root, "/sys/firmware/devicetree/base/model", b"Qualcomm Technologies, Inc. SA8155P ADP\0")
    write(root, "/sys/firmware/devicetree/base/compatible", b"qcom,sa8155p-adp\0qcom,sa8155p\0")
    for index, cluster in enumerate(clusters):
        name, cpus = cluster["name"], cluster["cpus"]
        capacity = round(products[index] * 1024 / max(products))
        opps = cluster["cpufreq"]["opps"]
        for cpu in cpus:
            base = f"/sys/devices/system/cpu/cpu{cpu}"
            cpuinfo.append(f"processor\t: {cpu}\nBogoMIPS\t: 38.40\nCPU implementer\t: 0x51\n"
                           f"CPU architecture: 8\nCPU variant\t: 0xd\n"
                           f"CPU part\t: {PARTS[name]:#x}\nCPU revision\t: 14\n")
            write(root, f"{base}/cpu_capacity", f"{capacity}\n")
            if cluster_id:
                write(root, f"{base}/topology/cluster_id", "0\n" if single_map else f"{index}\n")
                write(root, f"{base}/topology/physical_package_id", "0\n")
            else:
                write(root, f"{base}/topology/physical_package_id",
                      "0\n" if single_map else f"{index}\n")
            write(root, f"{base}/cpufreq/related_cpus", " ".join(map(str, cpus)) + "\n")
            write(root, f"{base}/cpufreq/cpuinfo_max_freq", f"{cluster['max_freq_khz']}\n")
            write(root, f"{base}/cpufreq/scaling_available_frequencies",
                  " ".join(str(o["freq_khz"]) for o in opps) + " \n")
            write(root, f"{base}/cpufreq/cpuinfo_transition_latency", f"{transition_ns}\n")
            caches = [(1, "Data", cluster["private_caches"][0]["size_kib"], [cpu]),
                      (1, "Instruction", 64, [cpu]),
                      (2, "Unified", cluster["private_caches"][1]["size_kib"], [cpu]),
                      (3, "Unified", 2048, list(range(8)))]
            for i, (level, kind, size, shared) in enumerate(caches):
                path = f"{base}/cache/index{i}"
                write(root, f"{path}/level", f"{level}\n")
                write(root, f"{path}/type", f"{kind}\n")
                if cache_sizes:
                    write(root, f"{path}/size", f"{size}K\n")
                write(root, f"{path}/shared_cpu_list", cpu_list(shared) + "\n")
                write(root, f"{path}/coherency_line_size", "64\n")
            states = [("WFI", "ARM WFI", 1, 1), (CPU_STATE[name], None, None, None),
                      ("cluster-sleep-0", None, None, None)]
            for i, (state, desc, latency, residency) in enumerate(states):
                path = f"{base}/cpuidle/state{i}"
                if latency is None:
                    _, desc, entry, exit_us, residency = DT_STATES[state]
                    latency = entry + exit_us
                write(root, f"{path}/name", f"{state}\n")
                write(root, f"{path}/desc", f"{desc}\n")
                write(root, f"{path}/latency", f"{latency}\n")
                write(root, f"{path}/residency", f"{residency}\n")
                write(root, f"{path}/disable", "0\n")
            if dt:
                write(root, f"{base}/of_node/capacity-dmips-mhz",
                      cells(cluster["capacity_dmips_mhz"]))
                if idle_phandles:
                    write(root, f"{base}/of_node/cpu-idle-states",
                          cells(DT_STATES[CPU_STATE[name]][0], DT_STATES["cluster-sleep-0"][0]))
        if energy_model:
            domain = f"/sys/kernel/debug/energy_model/cpu{cpus[0]}"
            write(root, f"{domain}/cpus", cpu_list(cpus) + "\n")
            points = [(o["freq_khz"], o["power"]) for o in opps]
            if extra_em_point and name == "prime":
                points.append((2956800, 1600))  # a faster speed bin's point, above fmax
            for freq, power in points:
                write(root, f"{domain}/ps:{freq}/frequency", f"{freq}\n")
                write(root, f"{domain}/ps:{freq}/power", f"{power}\n")
                write(root, f"{domain}/ps:{freq}/cost", f"{power * 10}\n")
    write(root, "/proc/cpuinfo", "\n".join(cpuinfo))
    if dt:
        for node, (phandle, label, entry, exit_us, residency) in DT_STATES.items():
            path = f"/sys/firmware/devicetree/base/cpus/idle-states/{node}"
            write(root, f"{path}/phandle", cells(phandle))
            write(root, f"{path}/idle-state-name", label.encode() + b"\0")
            write(root, f"{path}/entry-latency-us", cells(entry))
            write(root, f"{path}/exit-latency-us", cells(exit_us))
            write(root, f"{path}/min-residency-us", cells(residency))


# --- running ----------------------------------------------------------------------------------

def capture(*args):
    done = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True,
                          env=dict(os.environ, BINDERSIM=BINDERSIM))
    return done.returncode, done.stdout, done.stderr


def show(path):
    done = subprocess.run([BINDERSIM, "topology", "show", path], capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def capacities(text):
    """The capacity column of `topology show`'s cluster table."""
    rows = re.findall(r"^\s+\d+\s+\S+\s+\S+\s+[\d,-]+\s+[\d.]+\s+\d+\s+(\d+)$", text, re.M)
    return [int(c) for c in rows]


def numbers_of_states(states):
    return [(s["exit_latency_us"], s["min_residency_us"]) for s in states]


def compare_with_shipped(topology, label, dt=True, energy_model=True):
    clusters = topology["clusters"]
    check([c["cpus"] for c in clusters] == [c["cpus"] for c in SHIPPED["clusters"]],
          f"{label}: cluster CPUs {[c['cpus'] for c in clusters]}")
    check([c["name"] for c in clusters] == ["little", "mid", "big"],
          f"{label}: names {[c['name'] for c in clusters]}")
    check([c["uarch"] for c in clusters] ==
          ["kryo-485-silver", "kryo-485-gold", "kryo-485-gold"], f"{label}: uarch")
    for got, want in zip(clusters, SHIPPED["clusters"]):
        where = f"{label}: cluster {want['name']}"
        check(got["max_freq_khz"] == want["max_freq_khz"], f"{where}: fmax")
        check(got["capacity_dmips_mhz"] == want["capacity_dmips_mhz"],
              f"{where}: dmips {got['capacity_dmips_mhz']}")
        check([(p["level"], p["size_kib"]) for p in got["private_caches"]] ==
              [(p["level"], p["size_kib"]) for p in want["private_caches"]],
              f"{where}: private caches")
        latencies = [p["latency_ns"] for p in got["private_caches"]]
        check(latencies == sorted(set(latencies)) and "estimate" in
              got["private_caches"][0]["source"], f"{where}: cache latencies {latencies}")
        states = got["idle_states"]
        check(states[0]["name"] == "wfi" and numbers_of_states(states[:1]) == [(1, 1)],
              f"{where}: wfi {states[0]}")
        deep = want["idle_states"][1]
        if dt:
            check(len(states) == 2 and (states[1]["entry_latency_us"],
                                        states[1]["exit_latency_us"],
                                        states[1]["min_residency_us"]) ==
                  (deep["entry_latency_us"], deep["exit_latency_us"], deep["min_residency_us"]),
                  f"{where}: deeper state {states[1:]}")
        else:
            check(len(states) == 2 and states[1]["entry_latency_us"] == 0 and
                  states[1]["exit_latency_us"] ==
                  deep["entry_latency_us"] + deep["exit_latency_us"],
                  f"{where}: cpuidle-only state {states[1:]}")
        check("cluster-sleep-0" in got["source"], f"{where}: the cluster state is not noted")
        if energy_model:
            check(got["cpufreq"]["opps"] == want["cpufreq"]["opps"], f"{where}: opps")
            check(got["cpufreq"]["transition_latency_us"] == 40, f"{where}: transition")
        else:
            check("cpufreq" not in got, f"{where}: cpufreq without an energy model")
    check([(s["level"], s["cpus"], s["size_kib"]) for s in topology["shared_caches"]] ==
          [(3, list(range(8)), 2048)], f"{label}: shared caches {topology['shared_caches']}")
    costs = {k: v for k, v in topology["costs"].items() if k != "source"}
    check(costs == {k: v for k, v in SHIPPED["costs"].items() if k != "source"},
          f"{label}: costs not those of the base")
    check("copied from the sa8155p topology" in topology["costs"]["source"],
          f"{label}: costs source")


def run_cases(work):
    device = os.path.join(work, "device")
    make_device(device)
    out = os.path.join(work, "sa8155p-captured.json")
    records = os.path.join(work, "records.txt")
    code, _, err = capture("--root", device, "--save-records", records, "--out", out)
    check(code == 0, f"--root: exit {code}: {err}")
    topology = json.load(open(out))
    check(topology["name"] == "sa8155p", f"default name {topology['name']}")
    check("SA8155P ADP" in topology["description"], "description names the device")
    compare_with_shipped(topology, "--root")

    # The loader derives the shipped capacities, and a scenario runs on the capture.
    code, text = show(out)
    check(code == 0 and capacities(text) == [307, 872, 1024],
          f"topology show: {code}: {text[:400]}")
    result = os.path.join(work, "result.json")
    done = subprocess.run([BINDERSIM, "run", os.path.join(SOURCE, "scenarios", "schd-dbg.json"),
                           "--set", f"topology={out}", "--set", "clients.*.iterations=100",
                           "--out", result], capture_output=True, text=True)
    check(done.returncode == 0 and json.load(open(result))["transactions"]["completed"] == 200,
          f"schd-dbg on the capture: {done.returncode}: {done.stderr}")

    # Android's shell (mksh) prints the same records as this one's.
    for shell in ("sh", "mksh"):
        done = subprocess.run([shell, os.path.join(SOURCE, "tools", "device", "collect.sh"),
                               "topology"], capture_output=True, text=True,
                              env=dict(os.environ, BINDERSIM_CAPTURE_ROOT=device))
        check(done.returncode == 0 and done.stdout == open(records).read(),
              f"the collector under {shell} prints other records: {done.stderr}")

    # The same bytes again, from the saved records, and through adb.
    again = os.path.join(work, "again.json")
    code, _, err = capture("--records", records, "--out", again)
    check(code == 0 and open(again).read() == open(out).read(), f"--records differs: {err}")
    fake_adb = os.path.join(work, "adb")
    with open(fake_adb, "w") as f:
        f.write(f"""#!/bin/sh
# adb -s SERIAL push FILE REMOTE | adb -s SERIAL shell sh REMOTE ARGS..., on the tree under {device}
[ "$1" = -s ] && [ "$2" = test-serial ] || {{ echo "error: no devices" >&2; exit 1; }}
shift 2
case "$1" in
  push) cp "$2" "{work}/pushed.sh" ;;
  shell) [ "$2" = sh ] || exit 1
         shift 3
         BINDERSIM_CAPTURE_ROOT="{device}" sh "{work}/pushed.sh" "$@" ;;
  *) exit 1 ;;
esac
""")
    os.chmod(fake_adb, stat.S_IRWXU)
    via_adb = os.path.join(work, "adb.json")
    code, _, err = capture("--adb", "--adb-path", fake_adb, "--serial", "test-serial",
                           "--out", via_adb)
    check(code == 0 and open(via_adb).read() == open(out).read(), f"--adb differs: {err}")
    code, _, err = capture("--adb", "--adb-path", fake_adb, "--serial", "other", "--out",
                           os.path.join(work, "no-device.json"))
    check(code == 2 and err.count("\n") == 1 and "adb push" in err and
          "no devices" in err and not os.path.exists(os.path.join(work, "no-device.json")),
          f"adb failure: {code}: {err!r}")

    # What older kernels and user builds lack.
    variants = [
        ("no device tree", dict(dt=False), dict(dt=False)),
        ("package ids (no cluster_id)", dict(cluster_id=False), {}),
        ("no energy model", dict(energy_model=False), dict(energy_model=False)),
    ]
    for label, device_options, expected in variants:
        tree = os.path.join(work, label.replace(" ", "-"))
        make_device(tree, **device_options)
        path = os.path.join(work, f"{label.replace(' ', '-')}.json")
        code, _, err = capture("--root", tree, "--name", "variant", "--out", path)
        check(code == 0, f"{label}: exit {code}: {err}")
        if code == 0:
            compare_with_shipped(json.load(open(path)), label, **expected)
            code, text = show(path)
            check(code == 0 and capacities(text) == [307, 872, 1024],
                  f"{label}: show: {text[:300]}")

    # One cpu-map cluster for all eight CPUs (as upstream sm8150.dtsi): split by frequency
    # domain, and said so.
    tree = os.path.join(work, "single-map")
    make_device(tree, single_map=True, transition_ns=4294967295)
    path = os.path.join(work, "single-map.json")
    code, _, err = capture("--root", tree, "--name", "single", "--out", path)
    check(code == 0, f"single map: {err}")
    if code == 0:
        topology = json.load(open(path))
        check([c["cpus"] for c in topology["clusters"]] == [[0, 1, 2, 3], [4, 5, 6], [7]] and
              "split by frequency domain" in topology["clusters"][0]["source"],
              "single map not split")
        check(topology["clusters"][0]["cpufreq"]["transition_latency_us"] == 40 and
              "estimate" in topology["clusters"][0]["cpufreq"]["source"],
              "CPUFREQ_ETERNAL not replaced by the estimate")

    # Upstream device trees: no cache-size (cacheinfo has no size files), idle states through
    # power-domains (PSCI OS-initiated mode: no cpu-idle-states), and qcom-cpufreq-hw's
    # transition latency of 0. Sizes become estimates, idle states are matched by name, and
    # the transition latency is the estimate.
    tree = os.path.join(work, "upstream")
    make_device(tree, cache_sizes=False, idle_phandles=False, transition_ns=0)
    path = os.path.join(work, "upstream.json")
    code, _, err = capture("--root", tree, "--name", "upstream", "--out", path)
    check(code == 0, f"upstream: {err}")
    if code == 0:
        topology = json.load(open(path))
        little = topology["clusters"][0]
        check([(c["level"], c["size_kib"]) for c in little["private_caches"]] ==
              [(1, 32), (2, 256)] and "estimate, 32 KiB" in
              little["private_caches"][0]["source"], f"sizes: {little['private_caches']}")
        check(topology["shared_caches"][0]["size_kib"] == 2048, "shared size estimate")
        check([(s["entry_latency_us"], s["exit_latency_us"]) for s in little["idle_states"]] ==
              [(0, 1), (355, 909)], f"idle states by name: {little['idle_states']}")
        check(little["cpufreq"]["transition_latency_us"] == 40, "transition latency 0 kept")
        code, text = show(path)
        check(code == 0, f"upstream: show: {text}")

    # A value the loader refuses (an energy-model power beyond its range) is caught before
    # the file is written; an offline CPU is named.
    huge = os.path.join(work, "huge-power")
    make_device(huge)
    write(huge, "/sys/kernel/debug/energy_model/cpu0/ps:1785600/power", "99999999999\n")
    offline = os.path.join(work, "offline")
    make_device(offline)
    write(offline, "/sys/devices/system/cpu/online", "0-6\n")

    # Bad input: one line, exit 2, no output file.
    garbage = os.path.join(work, "garbage.txt")
    with open(garbage, "w") as f:
        f.write("not a capture\n")
    broken = os.path.join(work, "broken")
    make_device(broken)
    os.remove(os.path.join(broken, "sys/devices/system/cpu/cpu5/cpufreq/cpuinfo_max_freq"))
    bad_size = os.path.join(work, "bad-size")
    make_device(bad_size)
    write(bad_size, "/sys/devices/system/cpu/cpu0/cache/index0/size", "lots\n")
    cases = [
        (["--records", garbage], "garbage.txt: line 1: expected a record"),
        (["--records", os.path.join(work, "missing.txt")], "missing.txt: cannot read"),
        (["--root", broken], "cpu5/cpufreq/cpuinfo_max_freq: expected the CPU's maximum"),
        (["--root", bad_size], "index0/size: expected a size such as 32K, got 'lots'"),
        (["--root", device, "--base", "no-such-topology"], "--base no-such-topology: expected"),
        (["--root", huge], "the capture does not load in bindersim: "),
        (["--root", offline], "expected every CPU online (cpu7 is offline"),
        (["--root", device, "--name", "a\nb"], "--name: expected a non-empty UTF-8 name"),
    ]
    for args, expected in cases:
        target = os.path.join(work, "refused.json")
        code, out_text, err = capture(*args, "--out", target, "--bindersim", BINDERSIM)
        check(code == 2 and err.startswith("capture-topology: ") and expected in err and
              err.count("\n") == 1 and not out_text and not os.path.exists(target),
              f"{args}: exit {code}, {err!r}")


if __name__ == "__main__":
    sys.exit(main("capture_test", run_cases))
