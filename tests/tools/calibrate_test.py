#!/usr/bin/env python3
"""tools/calibrate.py's topology for the confinement options: the document bindersim itself
reads for a run (`topology show --json`), the scenario's own or the one a --set topology= names
(a name, or a path taken from the scenario's directory), with --set topology.KEY=VALUE values
in it; a --set topology= path that still means the same file for the scenario's copy written
elsewhere; and --silver-throughput end to end with such a path, whose rows equal those of the
scenario's own topology.

Usage: calibrate_test.py BINDERSIM SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys

from harness import check, main

BINDERSIM, SOURCE = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "tools"))
import calibrate  # noqa: E402  (after the path that holds it)

SCENARIO = os.path.join(SOURCE, "scenarios", "binder-throughput.json")
SHIPPED = os.path.join(SOURCE, "topologies", "sa8155p.json")


def run_cases(work):
    doc = json.load(open(SCENARIO))
    shipped = json.load(open(SHIPPED))

    own = calibrate.run_topology(BINDERSIM, SCENARIO, doc, [])
    check(own == shipped, "without overrides: the scenario's own topology, as shipped")

    # A copy of the topology beside the scenario's directory, named by a relative path.
    copy = os.path.join(work, "mine.json")
    mine = json.loads(json.dumps(shipped))
    mine["description"] = "a copy for the test"
    json.dump(mine, open(copy, "w"))
    relative = os.path.relpath(copy, os.path.dirname(SCENARIO))
    chosen = calibrate.run_topology(BINDERSIM, SCENARIO, doc, [f"topology={relative}"])
    check(chosen.get("description") == "a copy for the test",
          f"--set topology={relative}: the copy, got {chosen.get('description')!r}")
    chosen = calibrate.run_topology(BINDERSIM, SCENARIO, doc, ['topology="sa8155p"'])
    check(chosen == shipped, "--set topology=\"sa8155p\" (a JSON string): the shipped topology")

    changed = calibrate.run_topology(
        BINDERSIM, SCENARIO, doc,
        ["kernel.misfit_migration=true", "topology.costs.context_switch_ref_ns=900"])
    check(changed["costs"]["context_switch_ref_ns"] == 900,
          "--set topology.costs.context_switch_ref_ns=900 is in the document")
    check(changed["clusters"] == shipped["clusters"], "other values are the shipped ones")

    resolved = calibrate.with_topology_resolved(
        SCENARIO, [f"topology={relative}", "topology=sa8155p", "clients.*.iterations=5"])
    check(resolved == [f"topology={json.dumps(os.path.realpath(copy))}", 'topology="sa8155p"',
                       "clients.*.iterations=5"],
          f"a topology path made absolute, a name and other overrides kept: {resolved}")

    try:
        calibrate.run_topology(BINDERSIM, SCENARIO, doc, ["topology.costs.no_such_ns=1"])
        check(False, "an unknown topology key is refused")
    except SystemExit as e:
        check("no_such_ns" in str(e) and "\n" not in str(e),
              f"an unknown topology key: bindersim's one line, got {e}")

    # End to end: a relative --set topology= path runs (the scenario's copy is written to a
    # temporary directory) and gives the rows of the scenario's own topology.
    def rows(*extra):
        done = subprocess.run(
            [sys.executable, os.path.join(SOURCE, "tools", "calibrate.py"), "--bindersim",
             BINDERSIM, "--schd-scale", "0", "--bt-scale", "0.01", "--silver-throughput",
             *extra], capture_output=True, text=True)
        check(done.returncode in (0, 1) and not done.stderr,
              f"calibrate.py {' '.join(extra)}: exit {done.returncode}: {done.stderr[-300:]}")
        return done.stdout
    shutil.copy(SHIPPED, copy)
    check(rows() == rows("--set", f"topology={relative}"),
          "--silver-throughput with --set topology=PATH: the rows of the scenario's own topology")


sys.exit(main("calibrate_test", run_cases))
