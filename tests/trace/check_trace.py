#!/usr/bin/env python3
"""Validates an ftrace text trace written by `bindersim run --trace`.

Parses every line back and checks that the trace is well formed and self-consistent:
- each line has ftrace's layout, and Perfetto's systrace tokenizer accepts it;
- every event's fields are laid out as the kernel's TP_printk prints them;
- timestamps never go backwards;
- per CPU, each sched_switch's prev is the task the trace shows running there, and every other
  line is attributed to that running task;
- cpu_idle entries and exits alternate and happen only while the CPU runs its idle task;
- a task that went to sleep is woken (sched_wakeup) before it runs again, on the CPU its wakeup
  (or a later migration) placed it; an exited pid never runs again; a pid keeps its comm and tgid;
- every two-way call reads binder_transaction (reply=0) -> binder_transaction_received ->
  binder_transaction (reply=1) -> binder_transaction_received, matched by transaction id, with
  the BC_/BR_ commands around them in the order Perfetto's binder tracker expects; a call,
  oneway or reply that found no buffer space is never received and its sender (for a reply,
  the caller) gets BR_FAILED_REPLY;
- tracing_mark_write slices are balanced per thread.

With --partial (a trace cut by --trace-window) events that refer to what happened before the
window are accepted, and calls may be left open at the end. With --open-at-end (a run that
stopped when its clients were done, while background threads still had calls in flight) only
the latter is.

usage: check_trace.py TRACE [--partial] [--open-at-end] [--expect-calls N] [--expect-failed N]
Prints a summary and exits 0 when the trace is valid; prints the first problems and exits 1
otherwise.
"""

import argparse
import re
import sys
from collections import Counter, defaultdict

# Perfetto's SystraceLineTokenizer (src/trace_processor/importers/systrace/
# systrace_line_tokenizer.cc), applied with a search as it does.
PERFETTO_LINE = re.compile(
    r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+):")

# ftrace's own layout with record-tgid: "%16s-%-7d (%7d) [%03d] flags %5lu.%06lu: event: args".
LINE = re.compile(
    r"^(?P<comm>.{1,16})-(?P<pid>\d+)\s+\((?P<tgid>\s*\d+|-------)\) \[(?P<cpu>\d{3})\] "
    r"[a-zA-Z0-9.]{4} +(?P<sec>\d+)\.(?P<usec>\d{6}): (?P<event>\w+): (?P<args>.*)$")

COMM = r"(\S{1,15})"
FIELDS = {
    # include/trace/events/sched.h
    "sched_switch": re.compile(
        r"^prev_comm=" + COMM + r" prev_pid=(\d+) prev_prio=(\d+) "
        r"prev_state=(R\+?|[SDTtXZPI](?:\|[SDTtXZPI])*\+?) ==> next_comm=" + COMM +
        r" next_pid=(\d+) next_prio=(\d+)$"),
    "sched_waking": re.compile(r"^comm=" + COMM + r" pid=(\d+) prio=(\d+) target_cpu=(\d{3})$"),
    "sched_wakeup": re.compile(r"^comm=" + COMM + r" pid=(\d+) prio=(\d+) target_cpu=(\d{3})$"),
    "sched_wakeup_new":
        re.compile(r"^comm=" + COMM + r" pid=(\d+) prio=(\d+) target_cpu=(\d{3})$"),
    "sched_migrate_task":
        re.compile(r"^comm=" + COMM + r" pid=(\d+) prio=(\d+) orig_cpu=(\d+) dest_cpu=(\d+)$"),
    # include/trace/events/power.h
    "cpu_frequency": re.compile(r"^state=(\d+) cpu_id=(\d+)$"),
    "cpu_idle": re.compile(r"^state=(\d+) cpu_id=(\d+)$"),
    # drivers/android/binder_trace.h
    "binder_transaction": re.compile(
        r"^transaction=(\d+) dest_node=(\d+) dest_proc=(\d+) dest_thread=(\d+) reply=([01]) "
        r"flags=0x([0-9a-f]+) code=0x([0-9a-f]+)$"),
    "binder_transaction_received": re.compile(r"^transaction=(\d+)$"),
    "binder_command": re.compile(r"^cmd=0x([0-9a-f]+) (\w+)$"),
    "binder_return": re.compile(r"^cmd=0x([0-9a-f]+) (\w+)$"),
    "binder_set_priority":
        re.compile(r"^proc=(\d+) thread=(\d+) old=(\d+) => new=(\d+) desired=(\d+)$"),
    # kernel/trace/trace_output.c print events, written through trace_marker
    "tracing_mark_write": re.compile(r"^(?:B\|(\d+)\|(.+)|E\|(\d+))$"),
}

# include/uapi/linux/android/binder.h on 64-bit, and the names binder.c prints.
BINDER_COMMANDS = {
    0x40406300: "BC_TRANSACTION", 0x40406301: "BC_REPLY", 0x40086303: "BC_FREE_BUFFER",
    0x630b: "BC_REGISTER_LOOPER", 0x630c: "BC_ENTER_LOOPER", 0x630d: "BC_EXIT_LOOPER",
    0x40486311: "BC_TRANSACTION_SG", 0x40486312: "BC_REPLY_SG",
}
BINDER_RETURNS = {
    0x80407202: "BR_TRANSACTION", 0x80407203: "BR_REPLY", 0x7206: "BR_TRANSACTION_COMPLETE",
    0x720c: "BR_NOOP", 0x720d: "BR_SPAWN_LOOPER", 0x80487202: "BR_TRANSACTION_SEC_CTX",
    0x7211: "BR_FAILED_REPLY",
}
IDLE_EXIT = 4294967295
TF_ONE_WAY = 0x01
MAX_PROBLEMS = 20


class Checker:
    def __init__(self, partial, open_at_end=False):
        self.partial = partial
        self.open_at_end = partial or open_at_end
        self.problems = []
        self.events = Counter()
        self.line_no = 0
        self.last_ts = -1
        self.curr = {}          # cpu -> pid running there (0: idle)
        self.idle_state = {}    # cpu -> state entered, while idle (absent: not in an idle state)
        self.asleep = set()     # pids switched out asleep and not woken since
        self.dead = set()       # pids that exited
        self.placed = {}        # pid -> CPU its last wakeup or migration put it on
        self.comm = {}          # pid -> comm, as lines and sched events name it
        self.tgid = {}          # pid -> tgid of its lines
        self.tx = {}            # transaction id -> dict
        self.handling = defaultdict(list)  # pid -> stack of calls it received and must answer
        self.last_command = {}  # pid -> last BC_ name
        self.commanded = set()  # pids seen writing a binder_command
        self.expect_return = {}  # pid -> BR_ name that must be its next binder_return
        self.marks = defaultdict(int)  # pid -> open tracing_mark_write slices
        self.calls_completed = 0
        self.oneway_received = 0
        self.failed = 0         # transactions (calls, oneways, replies) that got BR_FAILED_REPLY
        self.last_sent = {}     # pid -> id of the last call or oneway it sent
        self.reply_to = {}      # pid -> id of a reply sent to it and not received yet
        self.last_return = {}   # pid -> its last BR_ name
        self.just_sent = {}     # pid -> id of the transaction its last binder line sent

    def fail(self, message):
        self.problems.append(f"line {self.line_no}: {message}")

    # --- per line ---------------------------------------------------------------------------

    def line(self, text):
        self.line_no += 1
        if text.startswith("#") or not text.strip():
            return
        if not PERFETTO_LINE.search(text):
            self.fail(f"Perfetto's systrace tokenizer does not accept: {text!r}")
            return
        m = LINE.match(text)
        if not m:
            self.fail(f"not an ftrace line: {text!r}")
            return
        comm = m["comm"].strip()
        pid = int(m["pid"])
        tgid = None if m["tgid"] == "-------" else int(m["tgid"])
        cpu = int(m["cpu"])
        ts = int(m["sec"]) * 1_000_000 + int(m["usec"])
        event, args = m["event"], m["args"]
        self.events[event] += 1
        if ts < self.last_ts:
            self.fail(f"timestamp goes backwards ({ts} us after {self.last_ts} us)")
        self.last_ts = ts
        fields = FIELDS.get(event)
        if fields is None:
            self.fail(f"unexpected event {event}")
            return
        f = fields.match(args)
        if not f:
            self.fail(f"{event}: fields not as the kernel prints them: {args!r}")
            return
        self.check_identity(pid, comm, tgid)
        # Every line is written by the task running on its CPU.
        running = self.curr.get(cpu)
        if running is None:
            self.curr[cpu] = pid
        elif running != pid:
            self.fail(f"[{cpu:03}] {event} by pid {pid}, but pid {running} runs there")
        getattr(self, event)(cpu, pid, tgid, f)

    def check_identity(self, pid, comm, tgid=None):
        """A pid keeps its comm, and the tgid its lines show (tgid None: not shown here)."""
        if pid == 0:
            if comm != "<idle>" and not comm.startswith("swapper/"):
                self.fail(f"pid 0 is named {comm!r}, not <idle> or swapper/N")
            return
        if len(comm) > 15:
            self.fail(f"comm {comm!r} is longer than 15 characters")
        known = self.comm.setdefault(pid, comm)
        if known != comm:
            self.fail(f"pid {pid} was named {known!r}, now {comm!r}")
        if tgid is not None:
            known_tgid = self.tgid.setdefault(pid, tgid)
            if known_tgid != tgid:
                self.fail(f"pid {pid} was in tgid {known_tgid}, now {tgid}")

    # --- scheduler --------------------------------------------------------------------------

    def sched_switch(self, cpu, pid, tgid, f):
        prev_comm, prev_pid, _, prev_state, next_comm, next_pid, _ = f.groups()
        prev_pid, next_pid = int(prev_pid), int(next_pid)
        if prev_pid != pid:
            self.fail(f"sched_switch prev_pid={prev_pid} written by pid {pid}")
        if prev_pid == 0 and prev_comm != f"swapper/{cpu}":
            self.fail(f"the idle task of CPU {cpu} is {prev_comm}, not swapper/{cpu}")
        if next_pid == 0 and next_comm != f"swapper/{cpu}":
            self.fail(f"the idle task of CPU {cpu} is {next_comm}, not swapper/{cpu}")
        if prev_pid == next_pid:
            self.fail(f"sched_switch from pid {prev_pid} to itself")
        if prev_pid == 0 and cpu in self.idle_state:
            self.fail(f"CPU {cpu} leaves idle without a cpu_idle exit")
        if prev_pid != 0 and cpu in self.idle_state:
            self.fail(f"CPU {cpu} runs pid {prev_pid} while in an idle state")
        if prev_pid != 0:
            state = prev_state.rstrip("+")
            if state == "X":
                self.dead.add(prev_pid)
            elif state != "R":
                self.asleep.add(prev_pid)
        if next_pid != 0:
            for other, running in self.curr.items():
                if running == next_pid and other != cpu:
                    self.fail(f"pid {next_pid} switched in on CPU {cpu} while running on {other}")
            if next_pid in self.dead:
                self.fail(f"pid {next_pid} runs after it exited")
            if next_pid in self.asleep:
                self.fail(f"pid {next_pid} switched in on CPU {cpu} without a wakeup since it slept")
            placed = self.placed.get(next_pid)
            if placed is not None and placed != cpu:
                self.fail(f"pid {next_pid} switched in on CPU {cpu}, but was placed on CPU {placed}")
            self.check_identity(next_pid, next_comm)
        if prev_pid != 0:
            self.check_identity(prev_pid, prev_comm)
        self.curr[cpu] = next_pid

    def wake(self, f, new):
        comm, wakee, _, target = f.groups()
        wakee, target = int(wakee), int(target)
        if any(running == wakee for running in self.curr.values()):
            self.fail(f"sched_wakeup of pid {wakee}, which is running")
        if wakee in self.dead:
            self.fail(f"sched_wakeup of pid {wakee}, which exited")
        if new and wakee in self.comm and not self.partial:
            self.fail(f"sched_wakeup_new of pid {wakee}, which existed before")
        self.check_identity(wakee, comm)
        self.asleep.discard(wakee)
        self.placed[wakee] = target

    def sched_waking(self, cpu, pid, tgid, f):
        pass

    def sched_wakeup(self, cpu, pid, tgid, f):
        self.wake(f, new=False)

    def sched_wakeup_new(self, cpu, pid, tgid, f):
        self.wake(f, new=True)

    def sched_migrate_task(self, cpu, pid, tgid, f):
        _, mover, _, orig, dest = f.groups()
        mover, orig, dest = int(mover), int(orig), int(dest)
        if orig == dest:
            self.fail(f"sched_migrate_task of pid {mover} from CPU {orig} to itself")
        if any(running == mover for running in self.curr.values()):
            self.fail(f"sched_migrate_task of pid {mover}, which is running")
        self.placed[mover] = dest

    def cpu_frequency(self, cpu, pid, tgid, f):
        if int(f.group(1)) <= 0:
            self.fail("cpu_frequency of 0 kHz")

    def cpu_idle(self, cpu, pid, tgid, f):
        state, cpu_id = int(f.group(1)), int(f.group(2))
        if cpu_id != cpu:
            self.fail(f"cpu_idle of CPU {cpu_id} written on CPU {cpu}")
        if pid != 0:
            self.fail(f"cpu_idle on CPU {cpu} while pid {pid} runs there")
        if state == IDLE_EXIT:
            if cpu not in self.idle_state and not self.partial:
                self.fail(f"CPU {cpu} exits an idle state it did not enter")
            self.idle_state.pop(cpu, None)
        else:
            if cpu in self.idle_state:
                self.fail(f"CPU {cpu} enters idle state {state} while in {self.idle_state[cpu]}")
            self.idle_state[cpu] = state

    # --- binder -----------------------------------------------------------------------------

    def binder_command(self, cpu, pid, tgid, f):
        code, name = int(f.group(1), 16), f.group(2)
        if BINDER_COMMANDS.get(code) != name:
            self.fail(f"binder_command cmd=0x{code:x} is {BINDER_COMMANDS.get(code)}, not {name}")
        self.last_command[pid] = name
        self.commanded.add(pid)
        self.just_sent.pop(pid, None)

    def binder_return(self, cpu, pid, tgid, f):
        code, name = int(f.group(1), 16), f.group(2)
        if BINDER_RETURNS.get(code) != name:
            self.fail(f"binder_return cmd=0x{code:x} is {BINDER_RETURNS.get(code)}, not {name}")
        expected = self.expect_return.pop(pid, None)
        if expected is not None and expected != name:
            self.fail(f"pid {pid} returned {name} where {expected} was due")
        if name == "BR_FAILED_REPLY":
            self.failed_transaction(pid)
        self.last_return[pid] = name
        self.just_sent.pop(pid, None)

    def binder_set_priority(self, cpu, pid, tgid, f):
        proc, thread, old, new, desired = (int(g) for g in f.groups())
        if thread not in self.comm:
            if not self.partial:  # a window may start after the thread's last appearance
                self.fail(f"binder_set_priority of pid {thread}, which the trace has not shown")
        elif self.tgid.get(thread, proc) != proc:
            self.fail(f"binder_set_priority: pid {thread} is in tgid {self.tgid[thread]}, not {proc}")
        if not (0 <= old < 140 and 0 <= new < 140) or old == new or desired != new:
            self.fail(f"binder_set_priority: old={old} new={new} desired={desired}")

    def failed_transaction(self, pid):
        # The reply to pid's call found no buffer space (binder_send_failed_reply()), or else
        # pid's own send did: that transaction is never received.
        failed = self.reply_to.pop(pid, None)
        if failed is not None:
            # The caller's BR_TRANSACTION_COMPLETE, deferred until the reply, comes first.
            if self.last_return.get(pid) != "BR_TRANSACTION_COMPLETE":
                self.fail(f"BR_FAILED_REPLY for reply {failed} to pid {pid} without the "
                          f"BR_TRANSACTION_COMPLETE before it")
        else:
            failed = self.last_sent.pop(pid, None)
            # A send that fails returns at once: nothing between its binder_transaction and it.
            if failed is not None and self.just_sent.get(pid) != failed:
                self.fail(f"BR_FAILED_REPLY for transaction {failed} of pid {pid}, which did "
                          f"other binder work since")
        t = self.tx.get(failed)
        if t is None:
            if not self.partial:
                self.fail(f"BR_FAILED_REPLY to pid {pid}, which sent nothing that could fail")
            return
        if t["received"] or t.get("failed"):
            self.fail(f"BR_FAILED_REPLY for transaction {failed}, which was already received "
                      f"or failed")
        t["failed"] = True
        self.failed += 1

    def binder_transaction(self, cpu, pid, tgid, f):
        tid, dest_node, dest_proc, dest_thread, reply, flags, _ = f.groups()
        tid, dest_proc, dest_thread = int(tid), int(dest_proc), int(dest_thread)
        reply, flags = reply == "1", int(flags, 16)
        if tid in self.tx:
            self.fail(f"transaction id {tid} used twice")
            return
        command = self.last_command.pop(pid, None)
        wanted = "BC_REPLY" if reply else "BC_TRANSACTION"
        # In a window, the command may have been written before it opened.
        before_window = self.partial and pid not in self.commanded
        if command not in (wanted, wanted + "_SG") and not before_window:
            self.fail(f"binder_transaction {tid} by pid {pid} without a preceding {wanted}")
        t = {"from": pid, "reply": reply, "oneway": bool(flags & TF_ONE_WAY),
             "dest_proc": dest_proc, "dest_thread": dest_thread, "received": False}
        if not reply and int(dest_node) == 0:
            self.fail(f"transaction {tid} has no destination node")
        if reply:
            stack = self.handling.get(pid)
            if stack:
                call = stack.pop()
                if call is not None and dest_thread != self.tx[call]["from"]:
                    self.fail(f"reply {tid} goes to pid {dest_thread}, but transaction {call} "
                              f"came from pid {self.tx[call]['from']}")
                t["call"] = call
            elif not self.partial:
                self.fail(f"reply {tid} by pid {pid}, which handles no transaction")
                t["call"] = None
            else:
                t["call"] = None
            self.reply_to[dest_thread] = tid
        else:
            self.last_sent[pid] = tid
        self.just_sent[pid] = tid
        self.tx[tid] = t

    def binder_transaction_received(self, cpu, pid, tgid, f):
        tid = int(f.group(1))
        t = self.tx.get(tid)
        if t is None:
            if not self.partial:
                self.fail(f"transaction {tid} received but never sent")
            self.expect_return[pid] = None
            return
        if t["received"]:
            self.fail(f"transaction {tid} received twice")
        t["received"] = True
        if t["dest_thread"] and t["dest_thread"] != pid:
            self.fail(f"transaction {tid} for pid {t['dest_thread']} received by pid {pid}")
        if t.get("failed"):
            self.fail(f"transaction {tid} received after BR_FAILED_REPLY")
        if t["reply"]:
            self.reply_to.pop(pid, None)
            if pid != t["dest_thread"]:
                self.fail(f"reply {tid} received by pid {pid}, not its caller")
            self.expect_return[pid] = "BR_REPLY"
            if t.get("call") is not None:
                self.calls_completed += 1
        else:
            if not self.partial and tgid != t["dest_proc"]:
                self.fail(f"transaction {tid} for process {t['dest_proc']} received in {tgid}")
            self.expect_return[pid] = "BR_TRANSACTION"
            if t["oneway"]:
                self.oneway_received += 1
            else:
                self.handling[pid].append(tid)

    def tracing_mark_write(self, cpu, pid, tgid, f):
        begin_tgid, _, end_tgid = f.groups()
        mark_tgid = int(begin_tgid if begin_tgid is not None else end_tgid)
        if pid != 0 and mark_tgid != tgid:
            self.fail(f"trace marker of tgid {mark_tgid} written by pid {pid} of tgid {tgid}")
        if begin_tgid is not None:
            self.marks[pid] += 1
        else:
            if self.marks[pid] == 0:
                self.fail(f"trace marker slice ended by pid {pid} without a begin")
            else:
                self.marks[pid] -= 1

    # --- at the end -------------------------------------------------------------------------

    def finish(self):
        for pid, count in self.marks.items():
            if count:
                self.problems.append(f"pid {pid}: {count} trace marker slice(s) never ended")
        if self.open_at_end:
            return
        for tid, t in self.tx.items():
            if not t["received"] and not t.get("failed"):
                self.problems.append(f"transaction {tid} from pid {t['from']} never received")
        for pid, stack in self.handling.items():
            if stack:
                self.problems.append(f"pid {pid} never replied to transaction(s) {stack}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--partial", action="store_true",
                        help="the trace covers part of a run (--trace-window)")
    parser.add_argument("--open-at-end", action="store_true",
                        help="calls may be in flight when the trace ends (a run that stopped "
                             "when its clients were done, with background calls in flight)")
    parser.add_argument("--expect-calls", type=int,
                        help="the number of complete two-way calls the trace must show")
    parser.add_argument("--expect-failed", type=int,
                        help="the number of transactions that must end in BR_FAILED_REPLY")
    options = parser.parse_args()
    checker = Checker(options.partial, options.open_at_end)
    with open(options.trace, encoding="utf-8") as trace:
        first = trace.readline()
        if first.rstrip("\n") != "# tracer: nop":
            checker.problems.append(f"line 1: expected '# tracer: nop', got {first!r}")
        checker.line_no = 1
        for text in trace:
            checker.line(text.rstrip("\n"))
    checker.finish()
    if options.expect_calls is not None and checker.calls_completed != options.expect_calls:
        checker.problems.append(f"{checker.calls_completed} complete two-way calls, expected "
                                f"{options.expect_calls}")
    if options.expect_failed is not None and checker.failed != options.expect_failed:
        checker.problems.append(f"{checker.failed} transactions failed (BR_FAILED_REPLY), "
                                f"expected {options.expect_failed}")
    events = sum(checker.events.values())
    print(f"{options.trace}: {events} events on {len(checker.curr)} CPUs, "
          f"{len(checker.comm)} tasks, {checker.calls_completed} complete two-way calls, "
          f"{checker.oneway_received} oneway transactions received, {checker.failed} failed")
    for event, count in sorted(checker.events.items()):
        print(f"  {event:28} {count}")
    if checker.problems:
        for problem in checker.problems[:MAX_PROBLEMS]:
            print(f"problem: {problem}")
        if len(checker.problems) > MAX_PROBLEMS:
            print(f"... and {len(checker.problems) - MAX_PROBLEMS} more problems")
        print("INVALID")
        return 1
    print("VALID")
    return 0


if __name__ == "__main__":
    sys.exit(main())
