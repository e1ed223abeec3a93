#!/usr/bin/env python3
"""The latency tiers of a kernel ftrace text trace, by bindersim's definitions, so that a
device's trace and a simulated one (`bindersim run --trace`) give the same table.

    tools/trace-tiers.py device.trace --topology sa8155p
    tools/trace-tiers.py sim.trace --json tiers.json

Every completed two-way binder call in the trace counts:
- latency: from the caller's BC_TRANSACTION (binder_command) to its BR_REPLY (binder_return),
  the round trip bindersim measures. A trace without binder_command and binder_return events
  (atrace's binder_driver category has neither) measures from binder_transaction to the
  caller's binder_transaction_received of the reply instead, and says so;
- class: SCHED_FIFO when the caller's kernel prio was below 100 (an RT task: FIFO and RR look
  alike in a trace), else SCHED_OTHER, from the caller's last sched_switch, sched_waking,
  sched_wakeup, sched_wakeup_new or binder_set_priority before the call;
- tier: the CPU of the caller's binder_transaction line against the CPU of the server's
  binder_transaction_received line (where the server thread took the call), same core, same
  cluster (the topology's clusters) or cross cluster.
A call is matched to its reply by transaction ids. Calls cut by the trace's start or end and
failed calls (BR_DEAD_REPLY, BR_FAILED_REPLY, BR_FROZEN_REPLY) do not count, and are counted
as such; oneway transactions are not calls; calls a process makes to itself never reach the
driver and are not in a trace. Commands and returns are told by their ioctl numbers (so
BC_TRANSACTION_SG, hwbinder's, counts, and the output of Perfetto's `traceconv systrace`, which
prints numbers only, reads too). LOST lines are counted and reported. A device's trace holds
every process's calls: `--callers REGEX` keeps those whose caller thread's comm matches
(schd-dbg's, say), and counts the others apart.

`--json FILE` writes the tiers as in a result's `tiers` (count, share, mean_ns and nearest-rank
p50_ns, p90_ns, p99_ns, max_ns over the trace's microsecond times; no breakdown).
`--schd-dbg-reference FILE` writes them, for a trace of schd-dbg, as a calibration reference
(`tools/calibrate.py --reference FILE`). `--against RESULT` sets a bindersim result's tiers (or
another trace's `--json`) beside the trace's: each tier's share and mean, and their
differences (the model's minus the trace's), as for a device trace against the simulation of
the same workload. Bad input ends with one line on stderr, `trace-tiers: ...`, and exit
status 2.
"""
import argparse
import json
import math
import re
import sys

import topology_file
from tool_support import ToolError, main_of, write_all

LINE = re.compile(r"^\s*(?P<comm>\S.*?)-(?P<pid>\d+)\s+(?:\(\s*(?:\d+|-+)\)\s+)?"
                  r"\[(?P<cpu>\d+)\]\s+(?:\S{4,5}\s+)?(?P<time>\d+\.\d+):\s+(?P<event>\w+):"
                  r"\s?(?P<args>.*)$")
LONGEST_LINE = 8192  # characters; ftrace's lines are far shorter
CLASSES = ("sched_fifo", "sched_other")
TIERS = ("same_core", "same_cluster", "cross_cluster")
LABELS = {"sched_fifo": "SCHED_FIFO", "sched_other": "SCHED_OTHER", "same_core": "same core",
          "same_cluster": "same cluster", "cross_cluster": "cross cluster"}
# Binder commands and returns by their ioctl type and number (cmd & 0xffff): the names differ
# between kernels and exporters (Perfetto's text export prints the number alone), the numbers
# do not. 'c' commands, 'r' returns.
BC_TRANSACTIONS = {(0x63, 0), (0x63, 17)}  # BC_TRANSACTION, BC_TRANSACTION_SG
BR_REPLY = (0x72, 3)
BR_ERRORS = {(0x72, 5), (0x72, 17), (0x72, 18)}  # BR_DEAD_REPLY, BR_FAILED_REPLY, BR_FROZEN_REPLY


def fields(args):
    return dict(re.findall(r"(\w+)=(\S+)", args))


def integer(text, base=10):
    """The integer, or None for anything else (such as a digit that int() refuses)."""
    pattern = r"-?0x[0-9a-fA-F]{1,16}" if base == 16 else r"-?[0-9]{1,19}"
    return int(text, 0 if base == 16 else 10) if text and re.fullmatch(pattern, text) else None


def command_of(args):
    """(ioctl type, number) of a binder_command or binder_return line's cmd, or None."""
    match = re.match(r"cmd=(0x[0-9a-fA-F]{1,8}|[0-9]{1,10})\b", args)
    if not match:
        return None
    cmd = int(match.group(1), 0)
    return (cmd >> 8) & 0xFF, cmd & 0xFF


class Calls:
    """Follows every thread's two-way calls through the trace. A call is matched to its reply
    by transaction ids, not by order: the server's reply answers the innermost call it took, and
    the caller's BR_REPLY follows its receipt of that reply."""

    def __init__(self, cluster_of, callers=None):
        self.cluster_of = cluster_of
        self.callers = callers  # a pattern the caller thread's comm must match, or None
        self.comm = {}          # pid -> the comm its lines show
        self.others = 0         # calls of callers the pattern leaves out
        self.prio = {}          # pid -> the kernel prio last seen
        self.commands = False   # the trace has binder_command / binder_return events
        self.entered = {}       # caller pid -> time of its BC_TRANSACTION not yet traced as sent
        self.sent = {}          # caller pid -> its last call, until a server takes it
        self.open = {}          # transaction id -> a call no server has taken yet
        self.waiting = {}       # caller pid -> [calls awaiting their reply], innermost last
        self.serving = {}       # server pid -> [calls it took and has not answered]
        self.replies = {}       # reply transaction id -> the call it answers
        self.replied = {}       # caller pid -> the call whose reply it has just received
        self.done = []          # (class, tier, latency ns)
        self.failed = 0         # error returns: BR_DEAD_REPLY, BR_FAILED_REPLY, BR_FROZEN_REPLY
        self.cut = 0            # calls the trace's start or end cuts

    def line(self, number, pid, comm, cpu, time_ns, event, args):
        self.comm[pid] = comm
        if event == "sched_switch":
            match = re.search(r"prev_pid=(\d+) prev_prio=(\d+).*next_pid=(\d+) next_prio=(\d+)",
                              args)
            if match:
                self.prio[int(match.group(1))] = int(match.group(2))
                self.prio[int(match.group(3))] = int(match.group(4))
        elif event in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            f = fields(args)
            task, prio = integer(f.get("pid")), integer(f.get("prio"))
            if task is not None and prio is not None:
                self.prio[task] = prio
        elif event == "binder_set_priority":
            match = re.search(r"thread=(\d+) old=\d+ => new=(\d+)", args)
            if match:
                self.prio[int(match.group(1))] = int(match.group(2))
        elif event == "binder_command":
            command = command_of(args)
            if command is not None:
                self.commands = True
                if command in BC_TRANSACTIONS:
                    self.entered[pid] = time_ns
        elif event == "binder_return":
            command = command_of(args)
            if command is not None:
                self.commands = True
                if command == BR_REPLY:
                    call = self.replied.pop(pid, None)
                    if call is None:
                        self.cut += 1  # its reply was sent before the trace began
                    else:
                        self.finish(call, time_ns)
                elif command in BR_ERRORS:
                    self.fail(pid)
        elif event == "binder_transaction":
            self.transaction(number, pid, cpu, time_ns, fields(args))
        elif event == "binder_transaction_received":
            self.received(pid, cpu, time_ns, fields(args))

    def transaction(self, number, pid, cpu, time_ns, f):
        txn, reply, flags = integer(f.get("transaction")), f.get("reply"), integer(
            f.get("flags"), 16)
        if txn is None or reply not in ("0", "1") or flags is None:
            found = " ".join(f"{k}={v}" for k, v in f.items())
            raise ToolError(f"line {number}: binder_transaction: expected transaction=N ... "
                            f"reply=0|1 flags=0xN, got {found!r}")
        if reply == "1":
            # The server answers the innermost call it took.
            served = self.serving.get(pid)
            if served:
                self.replies[txn] = served.pop()
            return
        started = self.entered.pop(pid, None)
        if flags & 0x1:  # TF_ONE_WAY
            return
        call = {"caller": pid, "comm": self.comm.get(pid, ""), "caller_cpu": cpu,
                "prio": self.prio.get(pid),
                "start": started if self.commands else time_ns, "server_cpu": None}
        self.open[txn] = call
        self.sent[pid] = call
        self.waiting.setdefault(pid, []).append(call)

    def received(self, pid, cpu, time_ns, f):
        txn = integer(f.get("transaction"))
        if txn is None:
            return
        call = self.open.pop(txn, None)
        if call is not None:  # a server takes a call
            call["server_cpu"] = cpu
            if self.sent.get(call["caller"]) is call:
                del self.sent[call["caller"]]
            self.serving.setdefault(pid, []).append(call)
            return
        answered = self.replies.pop(txn, None)
        if answered is None:
            return  # a oneway transaction, or a reply to a call sent before the trace began
        if self.commands:
            self.replied[pid] = answered  # done at its BR_REPLY
        else:
            self.finish(answered, time_ns)

    def fail(self, pid):
        """An error return to `pid`: its last call if no server took it yet, else the call it
        awaits a reply for; with neither, the send failed before it was traced."""
        self.failed += 1
        self.entered.pop(pid, None)
        call = self.sent.pop(pid, None)
        if call is not None:
            self.open = {t: c for t, c in self.open.items() if c is not call}
        elif self.waiting.get(pid):
            call = self.waiting[pid][-1]
        if call is not None:
            self.forget(call)

    def forget(self, call):
        calls = self.waiting.get(call["caller"], [])
        for i in range(len(calls) - 1, -1, -1):
            if calls[i] is call:
                del calls[i]
                break

    def finish(self, call, time_ns):
        self.forget(call)
        if self.callers is not None and not self.callers.search(call["comm"]):
            self.others += 1
            return
        if call["start"] is None or call["server_cpu"] is None or call["prio"] is None:
            self.cut += 1
            return
        cls = "sched_fifo" if call["prio"] < 100 else "sched_other"
        a, b = call["caller_cpu"], call["server_cpu"]
        if a == b:
            tier = "same_core"
        elif self.cluster_of[a] == self.cluster_of[b]:
            tier = "same_cluster"
        else:
            tier = "cross_cluster"
        self.done.append((cls, tier, time_ns - call["start"]))

    def still_open(self):
        return sum(len(calls) for calls in self.waiting.values())


def read_trace(path, cluster_of, callers=None):
    calls = Calls(cluster_of, callers)
    events = lost = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, text in enumerate(f, 1):
                if text.startswith("#") or not text.strip() or len(text) > LONGEST_LINE:
                    continue
                if "LOST" in text and re.match(r"\s*CPU:\s*\d+ \[LOST \d+ EVENTS\]", text):
                    lost += 1
                    continue
                match = LINE.match(text.rstrip("\r\n"))
                if not match:
                    continue  # not an event line (a header, a note)
                events += 1
                seconds, _, fraction = match.group("time").partition(".")
                time_ns = int(seconds) * 1_000_000_000 + int(fraction.ljust(9, "0")[:9])
                cpu = int(match.group("cpu"))
                if cpu not in cluster_of:
                    raise ToolError(f"{path}: line {number}: expected a CPU of the topology "
                                    f"(0-{len(cluster_of) - 1}), got [{cpu:03d}]")
                calls.line(number, int(match.group("pid")), match.group("comm"), cpu, time_ns,
                           match.group("event"), match.group("args"))
    except OSError as e:
        raise ToolError(f"{path}: cannot read: {e.strerror}")
    except ToolError as e:
        message = str(e)
        raise ToolError(message if message.startswith(path) else f"{path}: {message}")
    if events == 0:
        raise ToolError(f"{path}: expected ftrace event lines (comm-pid [cpu] time: event: "
                        f"fields), got none")
    calls.cut += calls.still_open()
    calls.lost = lost
    return calls


def nearest_rank(values, fraction):
    return values[max(0, math.ceil(fraction * len(values)) - 1)]


def tiers(calls):
    total = len(calls.done)
    result = {}
    for cls in CLASSES:
        result[cls] = {}
        for tier in TIERS:
            values = sorted(latency for c, t, latency in calls.done if c == cls and t == tier)
            entry = {"count": len(values), "share": 0.0, "mean_ns": 0, "p50_ns": 0,
                     "p90_ns": 0, "p99_ns": 0, "max_ns": 0}
            if values:
                class_total = sum(1 for c, _, _ in calls.done if c == cls)
                entry.update(share=round(len(values) / class_total, 6),
                             mean_ns=round(sum(values) / len(values)),
                             p50_ns=nearest_rank(values, 0.5), p90_ns=nearest_rank(values, 0.9),
                             p99_ns=nearest_rank(values, 0.99), max_ns=values[-1])
            result[cls][tier] = entry
    return {"calls": total, "failed": calls.failed, "cut": calls.cut, "other_callers": calls.others,
            "lost_events": calls.lost,
            "latency_from": "BC_TRANSACTION" if calls.commands else "binder_transaction",
            "tiers": result}


def as_reference(summary, trace):
    """The tiers as the schd-dbg part of a calibration reference (tools/calibration/)."""
    tiers_ms = {cls: {tier: {"mean_ms": summary["tiers"][cls][tier]["mean_ns"] / 1e6,
                             "calls": summary["tiers"][cls][tier]["count"]} for tier in TIERS}
                for cls in CLASSES}
    return {"source": f"tools/trace-tiers.py of {trace}, a trace of schd-dbg: "
                      f"{summary['calls']} calls, latency from {summary['latency_from']} to the "
                      f"reply",
            "schd_dbg": {"scenario": "schd-dbg", "tiers": tiers_ms}}


def print_table(summary, out):
    def ms(ns):
        return f"{ns / 1e6:.3f} ms"

    print(f"{summary['calls']} two-way calls; not counted: {summary['failed']} failed, "
          f"{summary['cut']} cut by the trace's start or end, {summary['other_callers']} of "
          f"other callers; latency from {summary['latency_from']} to the reply", file=out)
    if summary["lost_events"]:
        print(f"the trace lost events ({summary['lost_events']} LOST lines): calls around them "
              f"may be missing", file=out)
    print(f"{'class':<12} {'tier':<16} {'avg latency':>11} {'calls':>12} {'share':>7} "
          f"{'p50 latency':>12} {'p99 latency':>12}", file=out)
    for cls in CLASSES:
        for i, tier in enumerate(TIERS):
            e = summary["tiers"][cls][tier]
            label = LABELS[cls] if i == 0 else ""
            if e["count"]:
                print(f"{label:<12} {LABELS[tier]:<16} {ms(e['mean_ns']):>11} {e['count']:>12,} "
                      f"{100 * e['share']:>6.1f}% {ms(e['p50_ns']):>12} {ms(e['p99_ns']):>12}",
                      file=out)
            else:
                print(f"{label:<12} {LABELS[tier]:<16} {'-':>11} {0:>12} {0.0:>6.1f}% {'-':>12} "
                      f"{'-':>12}", file=out)


def load_against(path):
    """The tiers of a bindersim result (or of another trace's --json): {class: {tier: (count,
    share, mean_ns)}}, and a label."""
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        raise ToolError(f"--against {path}: expected a bindersim result, got "
                        f"{type(e).__name__}: {e}")
    tiers_found = {}
    for cls in CLASSES:
        for tier in TIERS:
            pointer = f"/tiers/{cls}/{tier}"
            try:
                entry = document["tiers"][cls][tier]
                values = (entry["count"], entry["share"], entry["mean_ns"])
            except (KeyError, TypeError):
                raise ToolError(f"--against {path}: {pointer}: expected count, share and "
                                f"mean_ns, got none")
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                raise ToolError(f"--against {path}: {pointer}: expected numbers, got "
                                f"{values!r}")
            tiers_found.setdefault(cls, {})[tier] = values
    if "scenario" in document:
        selector = document.get("selector")
        params = document.get("selector_params")
        if isinstance(params, dict) and params:
            selector = f"{selector} {json.dumps(params, sort_keys=True, separators=(',', ':'))}"
        label = (f"bindersim: {document.get('scenario')}, selector {selector}, "
                 f"seed {document.get('seed')}")
    else:
        label = "another trace"
    return tiers_found, label


def print_against(summary, against, label, out):
    """Each tier's share and mean, the trace's against the other's (model minus trace)."""
    print(f"against {label} (difference: it minus this trace)", file=out)
    print(f"{'class':<12} {'tier':<16} {'share':>7} {'its share':>10} {'Δ pts':>7} "
          f"{'mean':>11} {'its mean':>11} {'Δ%':>8}", file=out)
    for cls in CLASSES:
        for i, tier in enumerate(TIERS):
            e = summary["tiers"][cls][tier]
            count, share, mean = against[cls][tier]
            label_cls = LABELS[cls] if i == 0 else ""
            delta_mean = (f"{100 * (mean - e['mean_ns']) / e['mean_ns']:+.1f}%"
                          if e["count"] and count else "-")
            ours = f"{e['mean_ns'] / 1e6:.3f} ms" if e["count"] else "-"
            theirs = f"{mean / 1e6:.3f} ms" if count else "-"
            print(f"{label_cls:<12} {LABELS[tier]:<16} {100 * e['share']:>6.1f}% "
                  f"{100 * share:>9.1f}% {100 * (share - e['share']):>+7.1f} {ours:>11} "
                  f"{theirs:>11} {delta_mean:>8}", file=out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="ftrace text (a device's trace, or bindersim run --trace)")
    parser.add_argument("--topology", default="sa8155p",
                        help="topology name or path for the clusters (default sa8155p)")
    parser.add_argument("--callers", metavar="REGEX",
                        help="only calls whose caller thread's comm matches (a device's trace "
                             "holds every process's calls)")
    parser.add_argument("--json", metavar="FILE", help="also write the tiers as JSON")
    parser.add_argument("--schd-dbg-reference", metavar="FILE",
                        help="the trace is of schd-dbg: write its tiers as a calibration "
                             "reference for tools/calibrate.py --reference")
    parser.add_argument("--against", metavar="RESULT",
                        help="a bindersim result (or another trace's --json) to set beside it")
    args = parser.parse_args()

    def tabulate():
        try:
            topology = topology_file.load(args.topology)
            cluster_of = {cpu: c["id"] for c in topology["clusters"] for cpu in c["cpus"]}
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
            raise ToolError(f"--topology {args.topology}: expected a bindersim topology, got "
                            f"{type(e).__name__}: {e}")
        against = load_against(args.against) if args.against else None
        try:
            callers = re.compile(args.callers) if args.callers is not None else None
        except re.error as e:
            raise ToolError(f"--callers {args.callers!r}: expected a regular expression, got "
                            f"an error: {e}")
        summary = tiers(read_trace(args.trace, cluster_of, callers))
        outputs = []
        if args.json:
            outputs.append((args.json, json.dumps(summary, indent=2) + "\n"))
        if args.schd_dbg_reference:
            outputs.append((args.schd_dbg_reference,
                            json.dumps(as_reference(summary, args.trace), indent=2) + "\n"))
        write_all(outputs)
        print_table(summary, sys.stdout)
        if against:
            print_against(summary, *against, sys.stdout)

    return main_of("trace-tiers", tabulate)


if __name__ == "__main__":
    sys.exit(main())
