#!/usr/bin/env python3
"""Model vs measured reference for the SA8155P calibration: runs the scenarios with bindersim
and prints every reference row with the model's value and the error, against the acceptance
bounds (tier shares within 5 points; tier means within 10% for tiers with at least 1% share;
throughput and average latency within 10%; migrations and context switches per call within 30%).

Usage: tools/calibrate.py [--scale S] [--seed N] [--bindersim PATH]
  --scale S   fraction of the reference iterations to run (default 1.0; 0.1 for a quick look)
Exit status: 0 when every row is within its bound, 1 otherwise.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tools" / "calibration" / "sa8155p-reference.json"


def run(binary, scenario, iterations, seed, out):
    subprocess.run([binary, "run", scenario, "--seed", str(seed), "--out", str(out),
                    "--set", f"clients.*.iterations={iterations}"],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return json.loads(out.read_text())


def row(rows, name, model, reference, bound, kind):
    """kind: 'points' (absolute difference in percentage points) or 'relative'."""
    if kind == "points":
        error = model - reference
        ok = abs(error) <= bound
        text = f"{error:+.1f} pt"
    else:
        error = (model - reference) / reference if reference else 0.0
        ok = abs(error) <= bound
        text = f"{error * 100:+.1f}%"
    rows.append((name, model, reference, text, "ok" if ok else "MISS"))
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bindersim", default=str(ROOT / "build" / "bindersim"))
    args = parser.parse_args()
    ref = json.loads(REFERENCE.read_text())
    rows = []
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        schd = ref["schd_dbg"]
        total = sum(t["calls"] for cls in schd["tiers"].values() for t in cls.values()) // 2
        result = run(args.bindersim, schd["scenario"], max(1, int(total * args.scale)), args.seed,
                     tmp / "schd.json")
        for cls, tiers in schd["tiers"].items():
            calls = sum(t["calls"] for t in tiers.values())
            for tier, expected in tiers.items():
                model = result["tiers"][cls][tier]
                share = 100.0 * expected["calls"] / calls
                ok &= row(rows, f"schd-dbg {cls} {tier} share %", model["share"] * 100, share,
                          5.0, "points")
                if share >= 1.0:
                    mean = (model["mean_ns"] or 0) / 1e6
                    ok &= row(rows, f"schd-dbg {cls} {tier} mean ms", mean, expected["mean_ms"],
                              0.10, "relative")
        bt = ref["binder_throughput"]
        iterations = max(1, int(bt["calls"] / 8 * args.scale))
        result = run(args.bindersim, bt["scenario"], iterations, args.seed, tmp / "bt.json")
        calls = result["transactions"]["completed"]
        ok &= row(rows, "binder-throughput iterations/s", result["transactions"]["per_second"],
                  bt["iterations_per_sec"], 0.10, "relative")
        ok &= row(rows, "binder-throughput average ms", result["latency"]["mean_ns"] / 1e6,
                  bt["average_ms"], 0.10, "relative")
        counters = result["counters"]
        ok &= row(rows, "migrations per call", counters["migrations"] / calls,
                  bt["cpu_migrations"] / bt["calls"], 0.30, "relative")
        ok &= row(rows, "context switches per call", counters["context_switches"] / calls,
                  bt["context_switches"] / bt["calls"], 0.30, "relative")
        for key, name in (("cpu_cycles", "cpu_cycles"), ("cache_refs", "cache_references"),
                          ("cache_misses", "cache_misses")):
            model = counters[key] / calls
            expected = bt[name] / bt["calls"]
            rows.append((f"{name} per call (informative)", model, expected,
                         f"{(model - expected) / expected * 100:+.1f}%", "-"))
    width = max(len(r[0]) for r in rows)
    print(f"{'row':<{width}} {'model':>14} {'reference':>14} {'error':>10}  bound")
    for name, model, reference, error, verdict in rows:
        print(f"{name:<{width}} {model:>14.4g} {reference:>14.4g} {error:>10}  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
