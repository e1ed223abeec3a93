#!/usr/bin/env python3
"""tools/calibrate.py's topology for the confinement options: the document bindersim itself
reads for a run (`topology show --json`), the scenario's own or the one a --set topology= names
(a name, or a path taken lexically from the scenario's directory), with --set
topology.KEY=VALUE values in it; a --set topology= path that still means the same file for the
scenario's copy written elsewhere; bad overrides as bindersim's one line and exit status 2; and
--silver-throughput end to end with such a path, whose rows equal those of the scenario's own
topology.

Usage: calibrate_test.py BINDERSIM SOURCE_DIR"""
import contextlib
import io
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
    check(resolved == [f"topology={json.dumps(os.path.abspath(copy))}", 'topology="sa8155p"',
                       "clients.*.iterations=5"],
          f"a topology path made absolute, a name and other overrides kept: {resolved}")

    # A path through a symbolic link is taken lexically, as bindersim takes it.
    os.symlink(os.path.dirname(SCENARIO), os.path.join(work, "link"))
    through = os.path.join(work, "link", "binder-throughput.json")
    check(calibrate.topology_reference(through, "../t.json") == os.path.join(work, "t.json"),
          "a relative path beside a link is resolved lexically")

    def refused(overrides):
        """The exit status and stderr of run_topology() with `overrides` (None, "": it ran)."""
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                calibrate.run_topology(BINDERSIM, SCENARIO, doc, overrides)
        except SystemExit as e:
            return e.code, err.getvalue()
        return None, ""
    for overrides, needle in ((["topology.costs.no_such_ns=1"], "no_such_ns"),
                              (["topology=5"], "--set topology=5: expected a topology name"),
                              (["topology=NaN"], 'unknown topology "NaN"'),
                              (["topology="], "--set topology=: expected a topology name")):
        code, err = refused(overrides)
        check(code == 2 and needle in err and err.count("\n") == 1 and
              err.startswith("calibrate.py: "),
              f"{overrides}: exit 2 and one line naming it, got {code}: {err!r}")

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
    # A bad override of a run is bindersim's one line and exit status, not a traceback.
    done = subprocess.run(
        [sys.executable, os.path.join(SOURCE, "tools", "calibrate.py"), "--bindersim", BINDERSIM,
         "--schd-scale", "0", "--bt-scale", "0.01", "--set", "kernel.no_such_key=1"],
        capture_output=True, text=True)
    check(done.returncode == 2 and done.stderr.count("\n") == 1 and
          done.stderr.startswith("calibrate.py: bindersim") and "no_such_key" in done.stderr,
          f"a bad override: exit 2, one line, got {done.returncode}: {done.stderr[-300:]}")


sys.exit(main("calibrate_test", run_cases))
