#!/usr/bin/env python3
"""tools/trace-tiers.py against bindersim's own tiers: a run's trace, read back by the tool,
must give the result file's tier counts and shares exactly and its means to within the trace's
microsecond rounding, on schd-dbg (SCHED_FIFO and SCHED_OTHER callers), binder-throughput
(eight processes, random targets) and nested calls. The same trace as a device would write it
(no tgid column, five-character flags, no binder_command or binder_return events) gives the
same counts; a windowed trace counts only whole calls; bad input is one line, exit status 2.

Usage: trace_tiers_test.py BINDERSIM SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys

from harness import check, main

BINDERSIM, SOURCE = sys.argv[1], sys.argv[2]
TOOL = os.path.join(SOURCE, "tools", "trace-tiers.py")
def tiers_of(trace, topology, work):
    out = os.path.join(work, "tiers.json")
    done = subprocess.run([sys.executable, TOOL, trace, "--topology", topology, "--json", out],
                          capture_output=True, text=True)
    check(done.returncode == 0, f"{trace}: exit {done.returncode}: {done.stderr}")
    return json.load(open(out)) if done.returncode == 0 else None, done.stdout


def simulate(work, label, *args):
    trace = os.path.join(work, f"{label}.trace")
    result = os.path.join(work, f"{label}.json")
    done = subprocess.run([BINDERSIM, "run", *args, "--trace", trace, "--out", result],
                          capture_output=True, text=True)
    check(done.returncode == 0, f"{label}: bindersim exit {done.returncode}: {done.stderr}")
    return trace, json.load(open(result)), done.stdout


def compare(label, result, summary, means=True):
    check(summary["calls"] == result["transactions"]["completed"],
          f"{label}: {summary['calls']} calls, the result {result['transactions']['completed']}")
    for cls, tiers in result["tiers"].items():
        for tier, want in tiers.items():
            got = summary["tiers"][cls][tier]
            check(got["count"] == want["count"] and abs(got["share"] - want["share"]) < 1e-6,
                  f"{label}: {cls} {tier}: {got['count']} ({got['share']}) against "
                  f"{want['count']} ({want['share']})")
            if means:
                check(abs(got["mean_ns"] - want["mean_ns"]) <= 1000,
                      f"{label}: {cls} {tier} mean {got['mean_ns']} against {want['mean_ns']}")


def as_device_writes_it(trace, path):
    """Without the tgid column and binder_command/binder_return, with 5-character flags."""
    with open(trace) as src, open(path, "w") as dst:
        for line in src:
            if " binder_command: " in line or " binder_return: " in line:
                continue
            line = re.sub(r"\s+\(\s*(?:\d+|-+)\)\s+\[", " [", line)
            dst.write(line.replace("] .... ", "] d..2. "))


def run_cases(work):
    schd_trace, schd, console = simulate(work, "schd", os.path.join(SOURCE, "scenarios",
                                                                    "schd-dbg.json"),
                                         "--set", "clients.*.iterations=300")
    summary, table = tiers_of(schd_trace, "sa8155p", work)
    if summary:
        compare("schd-dbg", schd, summary)
        check(summary["latency_from"] == "BC_TRANSACTION", "latency definition")
        check(summary["tiers"]["sched_fifo"]["same_core"]["count"] > 0 and
              summary["tiers"]["sched_other"]["cross_cluster"]["count"] > 0,
              "schd-dbg without both classes and a cross-cluster tier")
        # The table's rows are the simulator's, up to the last digit of p99 and max.
        for row in ("SCHED_FIFO   same core", "             same cluster"):
            ours = [line[:58] for line in table.splitlines() if line.startswith(row)]
            tier_table = console.split("breakdown")[0]
            theirs = [line[:58] for line in tier_table.splitlines() if line.startswith(row)]
            check(ours and ours == theirs, f"table row {row!r}: {ours} against {theirs}")
    # Against its own result every difference is nil (to the trace's microsecond rounding);
    # against another seed's, the shares move.
    done = subprocess.run([sys.executable, TOOL, schd_trace, "--against",
                           os.path.join(work, "schd.json")], capture_output=True, text=True)
    rows = [line for line in done.stdout.split("against")[-1].splitlines()
            if re.search(r"[+-]\d+\.\d\s", line)]
    check(done.returncode == 0 and len(rows) == 6 and all(
        re.search(r"\s\+0\.0\s", row) for row in rows) and all(
        abs(float(row.split()[-1].rstrip("%"))) < 1.0 for row in rows if row.endswith("%")),
        f"against its own result:\n{done.stdout}{done.stderr}")
    other_trace, other, _ = simulate(work, "other", os.path.join(SOURCE, "scenarios",
                                                                 "schd-dbg.json"),
                                     "--set", "clients.*.iterations=300", "--seed", "2")
    done = subprocess.run([sys.executable, TOOL, schd_trace, "--against",
                           os.path.join(work, "other.json")], capture_output=True, text=True)
    check(done.returncode == 0 and re.search(r"\s[+-](?!0\.0)\d+\.\d\s",
                                             done.stdout.split("against")[-1]),
          f"against another seed: no share moved:\n{done.stdout}")
    # A result whose selector had parameters is named with them.
    with open(os.path.join(work, "other.json")) as f:
        with_params = json.load(f)
    with_params["selector_params"] = {"check_caller_idle": False}
    with open(os.path.join(work, "params.json"), "w") as f:
        json.dump(with_params, f)
    done = subprocess.run([sys.executable, TOOL, schd_trace, "--against",
                           os.path.join(work, "params.json")], capture_output=True, text=True)
    check(done.returncode == 0 and
          'selector fifo {"check_caller_idle":false}, seed 2' in done.stdout,
          f"against a result with selector parameters:\n{done.stdout}{done.stderr}")

    # --callers keeps the calls of matching threads and counts the others apart.
    for pattern, kept in (("^client", schd["transactions"]["completed"]), ("^server", 0)):
        done = subprocess.run([sys.executable, TOOL, schd_trace, "--callers", pattern,
                               "--json", os.path.join(work, "callers.json")],
                              capture_output=True, text=True)
        summary = json.load(open(os.path.join(work, "callers.json")))
        check(done.returncode == 0 and summary["calls"] == kept and
              summary["other_callers"] == schd["transactions"]["completed"] - kept,
              f"--callers {pattern}: {summary['calls']} kept, {summary['other_callers']} others")

    # The trace as a calibration reference: tools/calibrate.py reruns the same schd-dbg (its
    # iterations from the reference's calls, seed 1) and meets it on every row.
    reference = os.path.join(work, "reference.json")
    done = subprocess.run([sys.executable, TOOL, schd_trace, "--schd-dbg-reference", reference],
                          capture_output=True, text=True)
    check(done.returncode == 0, f"--schd-dbg-reference: {done.stderr}")
    done = subprocess.run([sys.executable, os.path.join(SOURCE, "tools", "calibrate.py"),
                           "--reference", reference, "--bindersim", BINDERSIM],
                          capture_output=True, text=True)
    rows = done.stdout.splitlines()[1:]
    check(done.returncode == 0 and len(rows) == 10 and
          all(re.search(r"[+-]0\.0(%| pt)\s+ok$", row) for row in rows),
          f"calibrate.py --reference: {done.returncode}:\n{done.stdout}{done.stderr}")

    for label, args, topology in (
            ("binder-throughput", [os.path.join(SOURCE, "scenarios", "binder-throughput.json"),
                                   "--set", "clients.*.iterations=100"], "sa8155p"),
            ("nested", [os.path.join(SOURCE, "tests", "trace", "nested.json")], None)):
        trace, result, _ = simulate(work, label, *args)
        summary, _ = tiers_of(trace, topology or result["topology"], work)
        if summary:
            compare(label, result, summary)

    device = os.path.join(work, "device.trace")
    as_device_writes_it(schd_trace, device)
    summary, _ = tiers_of(device, "sa8155p", work)
    if summary:
        compare("device layout", schd, summary, means=False)
        check(summary["latency_from"] == "binder_transaction", "device latency definition")
        fifo = summary["tiers"]["sched_fifo"]["same_core"]["mean_ns"]
        check(0 < fifo < schd["tiers"]["sched_fifo"]["same_core"]["mean_ns"],
              f"send-to-reply mean {fifo} not below the round trip")

    # A device's nested call: the server calls back into the client thread, whose own call to
    # a third process dies after being taken (BR_DEAD_REPLY). Replies pair by transaction id,
    # so both surviving calls count, at 50 ms; the dead one counts as failed. The same with
    # hwbinder's BC_TRANSACTION_SG, negative transaction ids (a wrapped debug id) and commands
    # as numbers only (Perfetto's text export), with a LOST line, reads alike.
    nested = os.path.join(SOURCE, "tests", "data", "traces", "nested-device.trace")
    numeric = os.path.join(work, "numeric.trace")
    text = open(nested).read().replace("cmd=0x40406300 BC_TRANSACTION",
                                       "cmd=1078485777")  # 0x40486311, BC_TRANSACTION_SG
    text = re.sub(r"transaction=(\d+)", lambda m: f"transaction=-{m.group(1)}", text)
    text = re.sub(r"(cmd=0x[0-9a-f]+) B[CR]_\w+", r"\1", text)
    open(numeric, "w").write(" CPU:2 [LOST 3 EVENTS]\n" + text)
    for label, trace in (("nested device trace", nested), ("numeric", numeric)):
        summary, table = tiers_of(trace, "sa8155p", work)
        if summary:
            other = summary["tiers"]["sched_other"]
            check(summary["calls"] == 2 and summary["failed"] == 1 and
                  other["same_cluster"]["count"] == 2 and
                  other["same_cluster"]["max_ns"] == 50_300_000,
                  f"{label}: {summary}\n{table}")
    check("LOST" in tiers_of(numeric, "sa8155p", work)[1], "LOST lines not reported")

    window, _, _ = simulate(work, "window", os.path.join(SOURCE, "scenarios", "schd-dbg.json"),
                            "--set", "clients.*.iterations=300", "--trace-window", "0.05:0.1")
    summary, _ = tiers_of(window, "sa8155p", work)
    if summary:
        check(0 < summary["calls"] < schd["transactions"]["completed"],
              f"windowed trace: {summary['calls']} calls")

    empty = os.path.join(work, "empty.trace")
    open(empty, "w").write("# tracer: nop\n")
    eight = os.path.join(work, "cpu9.trace")
    open(eight, "w").write("  a-1 [009] .... 1.000000: sched_switch: prev_comm=a prev_pid=1 "
                           "prev_prio=120 prev_state=S ==> next_comm=b next_pid=2 next_prio=120\n")
    for args, message in (([empty], "empty.trace: expected ftrace event lines"),
                          ([eight], "cpu9.trace: line 1: expected a CPU of the topology (0-7)"),
                          ([os.path.join(work, "none.trace")], "none.trace: cannot read"),
                          ([schd_trace, "--topology", "nope"], "--topology nope: expected"),
                          ([schd_trace, "--against", empty], "--against"),
                          ([schd_trace, "--callers", "("], "--callers '(': expected a regular"),
                          ([schd_trace, "--against", schd_trace], "expected a bindersim result")):
        done = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
        check(done.returncode == 2 and not done.stdout and message in done.stderr and
              done.stderr.startswith("trace-tiers: ") and done.stderr.count("\n") == 1,
              f"{args}: {done.returncode} {done.stderr!r}")


if __name__ == "__main__":
    sys.exit(main("trace_tiers_test", run_cases))
