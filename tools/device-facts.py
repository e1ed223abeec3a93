#!/usr/bin/env python3
"""Runs a benchmark on an Android device and reports where it ran: the facts a calibration
needs that the benchmark's own output leaves out (docs/calibration.md, "Facts from the
device"): the cpuset and allowed CPUs of its processes, the CPUs its threads ran on, the
cpusets the platform defines, core_ctl's state during the run and, under simpleperf, the
counters per core. It ends with the calibration run that matches what it found.

    adb root
    tools/device-facts.py --adb --save-records bt-facts.txt            # binderThroughputTest
    tools/device-facts.py --adb -- /data/local/tmp/schd-dbg -n 10000   # another benchmark
    tools/device-facts.py --records bt-facts.txt                       # a saved run, again

The device side is tools/device/collect-run-facts.sh (POSIX sh, toybox); `--adb` pushes and
runs it, `--serial S` picks a device. `--local` runs it on this machine instead (for trying a
command out). Bad input ends with one line on stderr, `device-facts: ...`, and exit status 2.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

TOOLS = os.path.dirname(os.path.abspath(__file__))
COLLECTOR = os.path.join(TOOLS, "device", "collect-run-facts.sh")
COUNTERS = ("cpu-cycles", "cache-references", "cache-misses", "cpu-migrations",
            "context-switches")


class FactsError(Exception):
    """Bad input: one line for the user."""


def parse_records(text, origin):
    """The collector's output: properties, files before the run, samples during it (a list
    of {path: text}), the exit status and the command's output."""
    facts = {"props": {}, "files": {}, "samples": [], "exit": None, "output": ""}
    kind, key, lines = None, None, []

    def close():
        body = "\n".join(lines).strip()
        if kind == "prop":
            facts["props"][key] = body
        elif kind == "file":
            (facts["samples"][-1] if facts["samples"] else facts["files"])[key] = body
        elif kind == "exit":
            facts["exit"] = int(body) if body.isdigit() else None

    all_lines = text.splitlines()
    for number, line in enumerate(all_lines, 1):
        if line == "@@output":
            close()
            facts["output"] = "\n".join(all_lines[number:])
            kind = "output"
            break
        match = re.match(r"@@(prop|file|sample|exit)(?: (\S.*))?$", line)
        if match:
            close()
            kind, key, lines = match.group(1), match.group(2), []
            if kind == "sample":
                facts["samples"].append({})
        elif kind is None:
            if line.strip():
                raise FactsError(f"{origin}: line {number}: expected a record (@@prop, @@file, "
                                 f"@@sample, @@exit or @@output), got {line[:40]!r}")
        else:
            lines.append(line)
    if kind != "output":
        raise FactsError(f"{origin}: expected the run's @@output record at the end, got "
                         f"{'none' if kind else 'no records'} (was the collector stopped?)")
    return facts


def cpu_set(text):
    cpus = set()
    for part in (text or "").replace(" ", "").split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if match:
            cpus.update(range(int(match.group(1)), int(match.group(2) or match.group(1)) + 1))
    return cpus


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


def natural_key(text):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


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
    print(f"  the shell's cpuset: {launch} (CPUs {cpu_text(sets[launch]) if launch in sets else '?'})",
          file=out)
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
    else:
        print("Counters per core: none in the output (simpleperf not installed, or its "
              "format not recognised: see the output below)", file=out)
    print("Output", file=out)
    for line in facts["output"].strip().splitlines()[-12:]:
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


def run(command, what):
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              check=False)
    except OSError as e:
        raise FactsError(f"{what}: cannot run {command[0]}: {e.strerror}")
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise FactsError(f"{what}: expected exit status 0, got {done.returncode} ({message})")
    return done.stdout


def collect(args):
    if args.records:
        try:
            with open(args.records, encoding="utf-8", errors="replace") as f:
                return f.read(), args.records
        except OSError as e:
            raise FactsError(f"{args.records}: cannot read: {e.strerror}")
    if args.local:
        return run(["sh", COLLECTOR, *args.command], "--local"), "--local"
    adb = [args.adb_path] + (["-s", args.serial] if args.serial else [])
    remote = "/data/local/tmp/bindersim-collect-run-facts.sh"
    run([*adb, "push", COLLECTOR, remote], "adb push")
    return run([*adb, "shell", "sh", remote, *args.command], "adb shell"), "adb shell"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--adb", action="store_true", help="run on the device adb reaches")
    source.add_argument("--local", action="store_true", help="run on this machine")
    source.add_argument("--records", metavar="FILE", help="a run saved by --save-records")
    parser.add_argument("--serial", help="adb device serial (adb -s)")
    parser.add_argument("--adb-path", default="adb", help="the adb executable (default adb)")
    parser.add_argument("--save-records", metavar="FILE", help="also keep the raw records")
    parser.add_argument("command", nargs="*", help="the benchmark and its arguments (default: "
                        "binderThroughputTest -w 8 -i 100000)")
    args = parser.parse_args()
    try:
        text, origin = collect(args)
        facts = parse_records(text, origin)
        if args.save_records:
            directory = os.path.dirname(os.path.abspath(args.save_records))
            handle, temporary = tempfile.mkstemp(dir=directory, prefix=".facts-")
            with os.fdopen(handle, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(temporary, args.save_records)
        report(facts, sys.stdout)
    except FactsError as e:
        print(f"device-facts: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"device-facts: {e.filename}: cannot write: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
