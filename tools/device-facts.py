#!/usr/bin/env python3
"""Runs a benchmark on an Android device and reports where it ran: the facts a calibration
needs that the benchmark's own output leaves out (docs/calibration.md, "Facts from the
device"): the cpuset and allowed CPUs of its processes, the CPUs its threads ran on, the
cpusets the platform defines, core_ctl's state during the run and, under simpleperf, the
counters per core. It ends with binder-throughput's calibration run for the CPUs the
benchmark's processes were allowed.

    adb root
    tools/device-facts.py --adb --save-records bt-facts.txt            # binderThroughputTest
    tools/device-facts.py --adb -- /data/local/tmp/schd-dbg -i 10000   # another benchmark
    tools/device-facts.py --records bt-facts.txt                       # a saved run, again

The device side is `tools/device/collect.sh run` (POSIX sh, toybox); `--adb` pushes and runs
it, `--serial S` picks a device. `--local` runs it on this machine instead (for trying a
command out). Bad input ends with one line on stderr, `device-facts: ...`, and exit status 2.
"""
import argparse
import collections
import re
import sys

from tool_support import (ToolError, add_source_options, collect, main_of, natural_key,
                          parse_cpu_list, write_atomically)

COUNTERS = ("cpu-cycles", "cache-references", "cache-misses", "cpu-migrations",
            "context-switches")


RECORD = re.compile(r"@@(prop|file|sample|counters|exit)(?: (\S.*))?$")
MAX_CPU_ID = 4095  # a CPU list naming more is not a real machine's


def parse_records(text, origin):
    """The collector's output: properties, files before the run, samples during it (a list
    of {path: text}), how the counters were taken, the exit status and the command's output."""
    facts = {"props": {}, "files": {}, "samples": [], "counters": None, "exit": None,
             "output": ""}
    kind, key, lines = None, None, []

    def close():
        body = "\n".join(lines).strip()
        if kind == "prop":
            facts["props"][key] = body
        elif kind == "file":
            (facts["samples"][-1] if facts["samples"] else facts["files"])[key] = body
        elif kind == "counters":
            facts["counters"] = body
        elif kind == "exit":
            facts["exit"] = int(body) if body.isdigit() and len(body) < 10 else None

    all_lines = text.splitlines()
    for number, line in enumerate(all_lines, 1):
        if line == "@@output":
            close()
            facts["output"] = "\n".join(all_lines[number:])
            kind = "output"
            break
        match = RECORD.match(line)
        if match:
            close()
            kind, key, lines = match.group(1), match.group(2), []
            if kind in ("prop", "file") and key is None:
                raise ToolError(f"{origin}: line {number}: expected @@{kind} and a name, got "
                                f"none")
            if kind == "sample":
                facts["samples"].append({})
        elif kind is None or re.match(r"@@\w+( |$)", line):
            if line.strip():
                raise ToolError(f"{origin}: line {number}: expected a record (@@prop, @@file, "
                                f"@@sample, @@counters, @@exit or @@output), got {line[:40]!r}")
        else:
            lines.append(line)
    if kind != "output":
        raise ToolError(f"{origin}: expected the run's @@output record at the end, got "
                        f"{'none' if kind else 'no records'} (was the collector stopped?)")
    return facts


def cpu_set(text):
    try:
        return set(parse_cpu_list(text or "", MAX_CPU_ID + 1))
    except ValueError as e:
        raise ToolError(f"a CPU list: expected {e}, got {(text or '')[:40]!r}")


def cpu_text(cpus):
    """0-3,6 for {0, 1, 2, 3, 6}."""
    ranges, items = [], sorted(cpus)
    for cpu in items:
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(f"{a}-{b}" if b > a else f"{a}" for a, b in ranges) or "none"


def cpusets(files):
    """Cpuset name -> CPUs, from /dev/cpuset (the root is "/")."""
    result = {}
    for path, text in files.items():
        match = re.fullmatch(r"/dev/cpuset(/[^/]+)?/cpus", path)
        if match:
            result[match.group(1) or "/"] = cpu_set(text)
    return result


def processes(samples):
    """Per process of the command: its cpusets and allowed CPUs seen, and the CPU each thread
    last ran on in each sample (field 39 of /proc/PID/task/TID/stat)."""
    seen = collections.OrderedDict()
    last_cpu = collections.Counter()
    for sample in samples:
        for path, text in sample.items():
            match = re.fullmatch(r"/proc/(\d+)/(cpuset|status|task/(\d+)/stat)", path)
            if not match:
                continue
            info = seen.setdefault(int(match.group(1)), {"cpuset": set(), "allowed": set()})
            if match.group(2) == "cpuset":
                info["cpuset"].add(text.strip())
            elif match.group(2) == "status":
                allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", text)
                if allowed:
                    info["allowed"].add(allowed.group(1))
            else:
                fields = text.rpartition(")")[2].split()
                if len(fields) > 36 and fields[36].isdigit():  # field 39 overall
                    last_cpu[int(fields[36])] += 1
    return seen, last_cpu


def core_ctl(snapshot):
    """cpuN -> {key: value} of core_ctl's one-line files in one snapshot."""
    result = collections.OrderedDict()
    for path in sorted(snapshot, key=natural_key):
        match = re.fullmatch(r"/sys/devices/system/cpu/(cpu\d+)/core_ctl/(\w+)", path)
        if match and "\n" not in snapshot[path]:
            result.setdefault(match.group(1), {})[match.group(2)] = snapshot[path]
    return result


def per_core_counters(output):
    """simpleperf stat --per-core rows: {counter: {cpu: count}}."""
    counts = collections.defaultdict(dict)
    pattern = re.compile(r"^\s*(?:cpu)?(\d+)\s+([\d,]+)\s+(" + "|".join(COUNTERS) + r")\b")
    for line in output.splitlines():
        match = pattern.match(line)
        if match:
            counts[match.group(3)][int(match.group(1))] = int(match.group(2).replace(",", ""))
    return counts


def report(facts, out):
    props, files, samples = facts["props"], facts["files"], facts["samples"]
    sets = cpusets(files)
    launch = files.get("/proc/self/cpuset", "?").strip()
    print("Launch", file=out)
    launch_cpus = cpu_text(sets[launch]) if launch in sets else "?"
    print(f"  the shell's cpuset: {launch} (CPUs {launch_cpus})", file=out)
    print(f"  ro.cpuset.default: {props.get('ro.cpuset.default') or '(unset)'}", file=out)
    if props.get("ro.board.platform"):
        print(f"  platform: {props['ro.board.platform']}", file=out)
    if sets:
        print("Cpusets", file=out)
        for name in sorted(sets):
            print(f"  {name:<22} {cpu_text(sets[name])}", file=out)
    found, last_cpu = processes(samples)
    print(f"Benchmark: {len(samples)} sample(s), {len(found)} process(es), exit status "
          f"{facts['exit'] if facts['exit'] is not None else '?'}", file=out)
    allowed_union, cpuset_names = set(), set()
    for pid, info in found.items():
        cpuset_names |= info["cpuset"]
        for text in info["allowed"]:
            allowed_union |= cpu_set(text)
        print(f"  pid {pid}: cpuset {', '.join(sorted(info['cpuset'])) or '?'}, allowed CPUs "
              f"{', '.join(sorted(info['allowed'])) or '?'}", file=out)
    if last_cpu:
        total = sum(last_cpu.values())
        print("  threads' last CPU over the samples: " + ", ".join(
            f"cpu{cpu} {100 * n / total:.0f}%" for cpu, n in sorted(last_cpu.items())), file=out)
    snapshots = [files] + samples
    online = sorted({s.get("/sys/devices/system/cpu/online", "?").strip() for s in snapshots})
    print(f"Online CPUs: {' / '.join(online)}", file=out)
    states = [core_ctl(s) for s in snapshots]
    if any(states):
        print("core_ctl (before the run, then each sample)", file=out)
        for cpu in sorted({c for s in states for c in s}, key=natural_key):
            for key in sorted({k for s in states for k in s.get(cpu, {})}):
                values = [s.get(cpu, {}).get(key, "-") for s in states]
                print(f"  {cpu} {key}: {' '.join(values)}", file=out)
    else:
        print("core_ctl: none (no /sys/devices/system/cpu/cpu*/core_ctl, or not root)", file=out)
    counters = per_core_counters(facts["output"])
    if counters:
        print("Counters per core (simpleperf)", file=out)
        cpus = sorted({cpu for c in counters.values() for cpu in c})
        print("  " + f"{'cpu':<5}" + "".join(f"{name:>18}" for name in counters), file=out)
        for cpu in cpus:
            print("  " + f"{cpu:<5}" + "".join(f"{counters[name].get(cpu, 0):>18,}"
                                                for name in counters), file=out)
    elif facts["counters"] and facts["counters"].startswith("none"):
        print(f"Counters per core: {facts['counters']}", file=out)
    else:
        print("Counters per core: none in the output (its format not recognised: see the "
              "output below)", file=out)
    # The benchmark's own last lines: simpleperf's table, shown above, follows them.
    own = facts["output"].split("Performance counter statistics")[0]
    print("Output (the benchmark's last lines)", file=out)
    for line in own.strip().splitlines()[-12:]:
        print(f"  {line}", file=out)
    workers = allowed_union
    if cpuset_names and all(name in sets for name in cpuset_names):
        in_sets = set().union(*(sets[name] for name in cpuset_names))
        workers = workers & in_sets if workers else in_sets
    if workers:
        background = sets.get("/system-background")
        line = f"tools/calibrate.py --throughput-cpus {cpu_text(workers)}"
        if background:
            line += f" --background-cpus {cpu_text(background)}"
        print(f"Calibration run for these CPUs:\n  {line}", file=out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_options(parser, "a run", "--local", "run on this machine", action="store_true")
    parser.add_argument("command", nargs="*", help="the benchmark and its arguments (default: "
                        "binderThroughputTest -w 8 -i 100000)")
    args = parser.parse_args()

    def facts():
        text, origin = collect("run", args.command, records=args.records,
                               adb=args.adb_path if args.adb else None, serial=args.serial)
        parsed = parse_records(text, origin)
        if args.save_records:
            write_atomically(args.save_records, text)
        report(parsed, sys.stdout)

    return main_of("device-facts", facts)


if __name__ == "__main__":
    sys.exit(main())
