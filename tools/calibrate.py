#!/usr/bin/env python3
"""Model vs measured reference for the SA8155P calibration: runs the scenarios with bindersim
and prints every reference row with the model's value and the error, against the acceptance
bounds (tier shares within 5 points; tier means within 10% for tiers with at least 1% share;
throughput and average latency within 10%; migrations and context switches per call within 30%).

binder-throughput's rows are its steady state: the difference between the run and a run of a
fifth of its iterations with the same seed (whose trajectory is the run's beginning). That
removes the start-up (thread pools spawning, load signals building up from zero), which the
measured 19.5 s run on a device in steady state did not see.

Usage: tools/calibrate.py [--scale S] [--schd-scale S] [--bt-scale S] [--seed N] [--seeds K]
                          [--bound-factor F] [--only REGEX] [--skip REGEX]
                          [--silver-throughput | --throughput-cpus LIST [--background-cpus LIST]]
                          [--bindersim PATH]
                          [--schd-dbg FILE] [--binder-throughput FILE] [--set KEY=VALUE ...]
                          [--reference FILE]
  --scale S          fraction of the reference iterations to run (default 1.0; 0.1 for a quick
                     look); --schd-scale and --bt-scale set it per benchmark, 0 leaves that
                     benchmark's rows out
  --seed N           the seed (default 1); --seeds K averages seeds N .. N+K-1 and shows the
                     standard deviation across them
  --bound-factor F   multiplies every bound (default 1; a scaled-down run is noisier)
  --silver-throughput  run binder-throughput in a cpuset of the CPUs of the topology's first
                     cluster (the four silver CPUs of the SA8155P), with the platform's
                     background in the system-background cpuset (the same CPUs): the placement
                     the measured run is consistent with (docs/calibration.md)
  --throughput-cpus LIST  run binder-throughput with every binder process in a cpuset of these
                     CPUs (0-3,7), as measured on a device (tools/device-facts.py prints the
                     line); --background-cpus LIST confines the platform's unpinned background
                     tasks (the system-background cpuset), by default to the same CPUs
  --only REGEX, --skip REGEX
                     only rows whose name matches (does not match) count for the exit status;
                     the others are shown with their verdict in parentheses
  --schd-dbg FILE, --binder-throughput FILE
                     scenario files to run instead of the shipped ones
  --set KEY=VALUE    a scenario override passed to every `bindersim run` (repeatable), e.g.
                     --set kernel.misfit_migration=true, or --set topology=mydevice (a name:
                     topologies/mydevice.json; a relative path is taken from the scenario's
                     directory), or a topology value, --set topology.costs.wakeup_ref_ns=900;
                     --silver-throughput takes the silver CPUs from the topology so chosen and
                     changed (`bindersim topology show --json`)
  --reference FILE   the measured baseline (default tools/calibration/sa8155p-reference.json);
                     a benchmark it does not give is left out. tools/trace-tiers.py
                     --schd-dbg-reference writes one from a device's trace of schd-dbg
Exit status: 0 when every counted row is within its bound, 1 otherwise.

tools/fit-calibration.py and the calibration guard test use `compare`, `steady_state` and
`silver_confined` so that they judge the model by the same rows.
"""
import argparse
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import tool_support

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tools" / "calibration" / "sa8155p-reference.json"

SHARE_BOUND_POINTS = 5.0  # tier shares, in percentage points
MEAN_BOUND = 0.10  # tier means (tiers with at least MEAN_MIN_SHARE), throughput, average latency
MEAN_MIN_SHARE = 1.0  # percent
COUNTER_BOUND = 0.30  # migrations and context switches per call
STEADY_STATE_SHORT = 5  # the short run has 1/5 of the iterations


def load_reference(path=REFERENCE):
    return json.loads(pathlib.Path(path).read_text())


def schd_iterations(ref, scale):
    """Client iterations of the schd-dbg run at `scale` (each makes two calls)."""
    schd = ref["schd_dbg"]
    total = sum(t["calls"] for cls in schd["tiers"].values() for t in cls.values()) // 2
    return max(1, int(total * scale))


def bt_iterations(ref, scale):
    """Iterations per worker of the binder-throughput run at `scale` (8 workers)."""
    return max(STEADY_STATE_SHORT, int(ref["binder_throughput"]["calls"] / 8 * scale))


def bindersim_failed(done):
    """Ends the tool with bindersim's own one-line error and exit status (2: bad input)."""
    sys.stderr.write(f"calibrate.py: {done.stderr.strip()}\n")
    sys.exit(done.returncode)


def run(binary, scenario, iterations, seed, out, overrides=()):
    sets = [arg for override in overrides for arg in ("--set", override)]
    # bindersim runs in the source tree; a scenario path given from elsewhere is made absolute.
    path = os.path.abspath(scenario) if os.path.exists(scenario) else str(scenario)
    done = subprocess.run([binary, "run", path, "--seed", str(seed), "--out", str(out),
                           "--set", f"clients.*.iterations={iterations}", *sets],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    if done.returncode != 0:
        bindersim_failed(done)
    return json.loads(pathlib.Path(out).read_text())


def steady_state(short, long):
    """binder-throughput without its start-up: the difference between a long run and a short
    run with the same seed, whose trajectory is the long run's beginning."""
    calls = long["transactions"]["completed"] - short["transactions"]["completed"]
    elapsed = (long["transactions"]["completed"] / long["transactions"]["per_second"] -
               short["transactions"]["completed"] / short["transactions"]["per_second"])
    result = json.loads(json.dumps(long))
    result["transactions"] = {"completed": calls, "per_second": calls / elapsed}
    latency_sum = (long["latency"]["mean_ns"] * long["latency"]["count"] -
                   short["latency"]["mean_ns"] * short["latency"]["count"])
    result["latency"]["mean_ns"] = latency_sum / (long["latency"]["count"] -
                                                  short["latency"]["count"])
    for scope in ("counters", "process_counters"):
        for key in result[scope]:
            result[scope][key] = long[scope][key] - short[scope][key]
    return result


def silver_confined(scenario, silver_cpus):
    """The scenario as if binderThroughputTest ran on the silver cluster, the placement the
    measured run is consistent with (docs/calibration.md): every binder process in a cpuset of
    the silver CPUs, and the platform's unpinned background tasks in the system-background
    cpuset, which Qualcomm platforms set to the same CPUs. Returns a new document."""
    return confined(scenario, silver_cpus, silver_cpus)


def confined(scenario, cpus, background_cpus):
    """The scenario with every binder process in a cpuset of `cpus` and the unpinned
    background tasks confined to `background_cpus`. Returns a new document."""
    scenario = json.loads(json.dumps(scenario))
    for process in scenario["processes"]:
        process["cpuset"] = list(cpus)
    for task in scenario.get("background", []):
        if "affinity" not in task:
            task["affinity"] = list(background_cpus)
    return scenario


def cpu_list(text):
    """[0, 1, 2, 3, 7] for "0-3,7"; argparse's type for the CPU options."""
    try:
        cpus = tool_support.parse_cpu_list(text, 64)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"expected {e}, got {text!r}")
    if not cpus:
        raise argparse.ArgumentTypeError(f"expected CPU ids such as 0-3,7, got {text!r}")
    return cpus


def topology_reference(scenario_path, topology):
    """A scenario's topology (its own, or a --set topology= value) as bindersim takes it: a name
    as written, or a path (with a '/' or ending in .json) made absolute from the scenario's
    directory."""
    path = pathlib.Path(topology)
    if ("/" not in topology and path.suffix != ".json") or path.is_absolute():
        return topology
    # Lexically, as bindersim does: "dir/link/../t.json" is "dir/t.json" whatever the link is.
    return os.path.normpath(os.path.join(os.path.abspath(os.path.dirname(scenario_path)), path))


def override_value(value):
    """A --set VALUE as bindersim reads it: JSON when it is valid JSON (NaN and Infinity are
    not), else the text as a string."""
    def not_json(constant):
        raise ValueError(constant)
    try:
        return json.loads(value, parse_constant=not_json)
    except ValueError:
        return value


def with_topology_resolved(scenario_path, overrides):
    """`overrides` with a --set topology= path made absolute from the scenario's directory, so
    that they mean the same for a copy of the scenario written elsewhere."""
    out = []
    for override in overrides:
        key, equals, value = override.partition("=")
        if key == "topology" and equals:
            parsed = override_value(value)
            if isinstance(parsed, str) and parsed:
                override = "topology=" + json.dumps(topology_reference(scenario_path, parsed))
        out.append(override)
    return out


def run_topology(binary, scenario_path, scenario, overrides):
    """The topology document a run of the scenario with `overrides` uses, as bindersim reads it
    (`topology show --json`): the scenario's own or the one a --set topology= names, with the
    overrides of topology values (topology.KEY=VALUE) in it."""
    reference = topology_reference(scenario_path, scenario["topology"])
    sets = []
    for given, override in zip(overrides, with_topology_resolved(scenario_path, overrides)):
        key, equals, value = override.partition("=")
        if key == "topology" and equals:
            reference = override_value(value)
            if not isinstance(reference, str) or not reference:
                sys.stderr.write(f"calibrate.py: --set {given}: expected a topology name or "
                                 f"path (a non-empty string), got {value or 'nothing'}\n")
                sys.exit(2)
        elif key.startswith("topology."):
            sets += ["--set", override]
    # "--" keeps a reference that starts with "-" an argument, not an option.
    shown = subprocess.run([binary, "topology", "show", "--json", *sets, "--", reference],
                           capture_output=True, text=True, cwd=ROOT)
    if shown.returncode != 0:
        bindersim_failed(shown)
    return json.loads(shown.stdout)


def compare(ref, schd_result, bt_result, bound_factor=1.0):
    """The reference rows with the model's values. Each row is a dict: name, model, reference,
    kind ('points': error in percentage points; 'relative': error as a fraction; 'info': no
    bound), error, bound (None for 'info'), ok (None for 'info'). Either result may be None:
    its rows are left out."""
    rows = []

    def add(name, model, reference, bound, kind):
        if kind == "points":
            error = model - reference
        else:
            error = (model - reference) / reference if reference else 0.0
        bound = None if bound is None else bound * bound_factor
        ok = None if bound is None else abs(error) <= bound
        rows.append({"name": name, "model": model, "reference": reference, "kind": kind,
                     "error": error, "bound": bound, "ok": ok})

    schd = ref["schd_dbg"]
    for cls, tiers in schd["tiers"].items() if schd_result else ():
        calls = sum(t["calls"] for t in tiers.values())
        if calls == 0:
            continue  # the reference has no call of this class
        for tier, expected in tiers.items():
            model = schd_result["tiers"][cls][tier]
            share = 100.0 * expected["calls"] / calls
            add(f"schd-dbg {cls} {tier} share %", model["share"] * 100, share,
                SHARE_BOUND_POINTS, "points")
            if share >= MEAN_MIN_SHARE:
                add(f"schd-dbg {cls} {tier} mean ms", (model["mean_ns"] or 0) / 1e6,
                    expected["mean_ms"], MEAN_BOUND, "relative")
    if bt_result is None:
        return rows
    bt = ref["binder_throughput"]
    calls = bt_result["transactions"]["completed"]
    add("binder-throughput iterations/s", bt_result["transactions"]["per_second"],
        bt["iterations_per_sec"], MEAN_BOUND, "relative")
    add("binder-throughput average ms", bt_result["latency"]["mean_ns"] / 1e6, bt["average_ms"],
        MEAN_BOUND, "relative")
    counters = bt_result["counters"]
    add("migrations per call", counters["migrations"] / calls, bt["cpu_migrations"] / bt["calls"],
        COUNTER_BOUND, "relative")
    add("context switches per call", counters["context_switches"] / calls,
        bt["context_switches"] / bt["calls"], COUNTER_BOUND, "relative")
    for key, name in (("cpu_cycles", "cpu_cycles"), ("cache_refs", "cache_references"),
                      ("cache_misses", "cache_misses")):
        add(f"{name} per call (informative)", counters[key] / calls, bt[name] / bt["calls"], None,
            "info")
    # The reference does not say whether simpleperf counted the whole system (-a, the rows
    # above) or the benchmark's processes; the latter view, for information.
    process = bt_result["process_counters"]
    for key, name, label in (("migrations", "cpu_migrations", "migrations"),
                             ("context_switches", "context_switches", "context switches"),
                             ("cpu_cycles", "cpu_cycles", "cpu_cycles")):
        add(f"{label} per call, benchmark threads (informative)", process[key] / calls,
            bt[name] / bt["calls"], None, "info")
    return rows


def average(per_seed):
    """Rows averaged over seeds (lists of `compare` rows in the same order), with `sd`: the
    standard deviation of the model value across seeds."""
    rows = []
    for i, first in enumerate(per_seed[0]):
        values = [rows_of_seed[i]["model"] for rows_of_seed in per_seed]
        row = dict(first)
        row["model"] = sum(values) / len(values)
        row["sd"] = (math.sqrt(sum((v - row["model"]) ** 2 for v in values) / (len(values) - 1))
                     if len(values) > 1 else None)
        if row["kind"] == "points":
            row["error"] = row["model"] - row["reference"]
        else:
            row["error"] = (row["model"] - row["reference"]) / row["reference"]
        if row["bound"] is not None:
            row["ok"] = abs(row["error"]) <= row["bound"]
        rows.append(row)
    return rows


def format_error(row):
    if row["kind"] == "points":
        return f"{row['error']:+.1f} pt"
    return f"{row['error'] * 100:+.1f}%"


def print_rows(rows, out=sys.stdout):
    """Prints the rows; a row with `counted` False shows its verdict in parentheses."""
    width = max(len(r["name"]) for r in rows)
    with_sd = any(r.get("sd") is not None for r in rows)
    sd_header = f" {'sd':>10}" if with_sd else ""
    print(f"{'row':<{width}} {'model':>14}{sd_header} {'reference':>14} {'error':>10}  bound",
          file=out)
    for r in rows:
        verdict = "-" if r["ok"] is None else ("ok" if r["ok"] else "MISS")
        if r["ok"] is not None and not r.get("counted", True):
            verdict = f"({verdict.lower()})"
        sd = f" {r['sd']:>10.3g}" if with_sd and r.get("sd") is not None else (
            f" {'':>10}" if with_sd else "")
        print(f"{r['name']:<{width}} {r['model']:>14.4g}{sd} {r['reference']:>14.4g} "
              f"{format_error(r):>10}  {verdict}", file=out)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--schd-scale", type=float, default=None)
    parser.add_argument("--bt-scale", type=float, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--bindersim", default=str(ROOT / "build" / "bindersim"))
    parser.add_argument("--bound-factor", type=float, default=1.0)
    confinement = parser.add_mutually_exclusive_group()
    confinement.add_argument("--silver-throughput", action="store_true")
    confinement.add_argument("--throughput-cpus", type=cpu_list, default=None)
    parser.add_argument("--background-cpus", type=cpu_list, default=None)
    parser.add_argument("--only", default=None)
    parser.add_argument("--skip", default=None)
    parser.add_argument("--schd-dbg", default=str(ROOT / "scenarios" / "schd-dbg.json"))
    parser.add_argument("--binder-throughput",
                        default=str(ROOT / "scenarios" / "binder-throughput.json"))
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument("--reference", default=str(REFERENCE))
    args = parser.parse_args()
    try:
        ref = load_reference(args.reference)
    except (OSError, ValueError) as e:
        parser.error(f"--reference {args.reference}: {e}")
    if not isinstance(ref, dict) or not ({"schd_dbg", "binder_throughput"} & set(ref)):
        parser.error(f"--reference {args.reference}: expected schd_dbg or binder_throughput")
    # A benchmark the reference does not give is left out.
    if "schd_dbg" not in ref:
        args.schd_scale = 0
    if "binder_throughput" not in ref:
        args.bt_scale = 0
    if (args.scale if args.schd_scale is None else args.schd_scale) <= 0 and (
            args.scale if args.bt_scale is None else args.bt_scale) <= 0:
        parser.error("nothing to run: both benchmarks have scale 0")
    if args.background_cpus is not None and args.throughput_cpus is None:
        parser.error("--background-cpus goes with --throughput-cpus")
    per_seed = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        bt_scenario = pathlib.Path(args.binder_throughput)
        bt_overrides = args.overrides
        if args.silver_throughput or args.throughput_cpus is not None:
            doc = json.loads(bt_scenario.read_text())
            if args.silver_throughput:
                topology = run_topology(args.bindersim, bt_scenario, doc, args.overrides)
                doc = silver_confined(doc, topology["clusters"][0]["cpus"])
            else:
                doc = confined(doc, args.throughput_cpus,
                               args.background_cpus or args.throughput_cpus)
            # The copy runs from another directory: paths in it and in the overrides are
            # made absolute from the scenario's.
            doc["topology"] = topology_reference(bt_scenario, doc["topology"])
            bt_overrides = with_topology_resolved(bt_scenario, args.overrides)
            bt_scenario = tmp / "binder-throughput-silver.json"
            bt_scenario.write_text(json.dumps(doc))
        schd_scale = args.scale if args.schd_scale is None else args.schd_scale
        bt_scale = args.scale if args.bt_scale is None else args.bt_scale
        long = bt_iterations(ref, bt_scale) if bt_scale > 0 else 0
        for seed in range(args.seed, args.seed + args.seeds):
            schd = bt = None
            if schd_scale > 0:
                schd = run(args.bindersim, args.schd_dbg, schd_iterations(ref, schd_scale), seed,
                           tmp / "schd.json", args.overrides)
            if bt_scale > 0:
                bt = steady_state(
                    run(args.bindersim, bt_scenario, long // STEADY_STATE_SHORT, seed,
                        tmp / "bt-short.json", bt_overrides),
                    run(args.bindersim, bt_scenario, long, seed, tmp / "bt.json",
                        bt_overrides))
            per_seed.append(compare(ref, schd, bt, args.bound_factor))
    rows = average(per_seed)
    for r in rows:
        r["counted"] = ((args.only is None or re.search(args.only, r["name"]) is not None) and
                        (args.skip is None or re.search(args.skip, r["name"]) is None))
    print_rows(rows)
    return 0 if all(r["ok"] is not False for r in rows if r["counted"]) else 1


if __name__ == "__main__":
    sys.exit(main())
