#!/usr/bin/env python3
"""tools/profile-by-function.py on two hand-written callgrind_annotate listings: each function's
instructions per call are its difference over the calls between; functions group by class,
namespace, file-local namespace and library; the largest come first; bad input is one line,
exit status 2.

Usage: profile_test.py SOURCE_DIR"""
import os
import subprocess
import sys

from harness import check, main

TOOL = os.path.join(sys.argv[1], "tools", "profile-by-function.py")

HEADER = """--------------------------------------------------------------------------------
Ir                   file:function
--------------------------------------------------------------------------------
"""


def listing(rows):
    """callgrind_annotate's lines for (instructions, function) rows."""
    return HEADER + "".join(
        f"{count:>12,} ( 1.00%)  ???:{function} [/opt/bindersim]\n" for count, function in rows)


def run(work, short_rows, long_rows, calls):
    paths = []
    for name, rows in (("short", short_rows), ("long", long_rows)):
        path = os.path.join(work, f"{name}.txt")
        with open(path, "w") as text:
            text.write(listing(rows))
        paths.append(path)
    return subprocess.run([sys.executable, TOOL, *paths, str(calls)], capture_output=True,
                          text=True)


def cases(work):
    short = [
        (5_000, "bindersim::sched::Scheduler::on_event(bindersim::engine::Event const&)"),
        (1_000, "bindersim::sched::Scheduler::wake(int) [clone .part.0]"),
        (300, "bindersim::sched::(anonymous namespace)::energy(int, double)"),
        (200, "bindersim::engine::mix(unsigned long, unsigned long)"),
        (4_000, "malloc"),
        (9_000, "bindersim::io::write_result(bindersim::stats::Result const&)"),
    ]
    # 100 calls more: on_event 30 per call, wake 20 (two copies of it), energy 5, mix 3,
    # malloc 0 (start-up only), write_result 0, a new helper 2.
    long = [
        (8_000, "bindersim::sched::Scheduler::on_event(bindersim::engine::Event const&)"),
        (2_500, "bindersim::sched::Scheduler::wake(int) [clone .part.0]"),
        (500, "bindersim::sched::Scheduler::wake(int)"),
        (800, "bindersim::sched::(anonymous namespace)::energy(int, double)"),
        (500, "bindersim::engine::mix(unsigned long, unsigned long)"),
        (4_000, "malloc"),
        (9_000, "bindersim::io::write_result(bindersim::stats::Result const&)"),
        (200, "operator new(unsigned long)"),
    ]
    done = run(work, short, long, 100)
    check(done.returncode == 0, f"exit {done.returncode}: {done.stderr}")
    lines = done.stdout.splitlines()
    check(lines[0].startswith("by component: instructions per call (60 in all)"), lines[0])
    # Each row: instructions per call, share, name.
    def rows(text_lines):
        return [(line.split()[0], line.split()[1], " ".join(line.split()[2:]))
                for line in text_lines]

    split = lines.index("the 15 largest functions:")
    components = rows(lines[1:split])
    check(components == [("50", "83.3%", "sched::Scheduler"),
                         ("5", "8.3%", "sched (file-local functions)"),
                         ("3", "5.0%", "engine (free functions)"),
                         ("2", "3.3%", "C and C++ libraries")],
          f"components: {components}")
    functions = rows(lines[split + 1:])
    check(functions[:5] == [("30", "50.0%", "sched::Scheduler::on_event"),
                            ("20", "33.3%", "sched::Scheduler::wake"),
                            ("5", "8.3%", "sched::{file-local}::energy"),
                            ("3", "5.0%", "engine::mix"),
                            ("2", "3.3%", "operator new")],
          f"functions: {functions}")

    # Bad input: one line on stderr, exit 2.
    for label, args in (
        ("missing file", [os.path.join(work, "absent.txt"), os.path.join(work, "long.txt"), "9"]),
        ("no listing", [TOOL, os.path.join(work, "long.txt"), "9"]),
        ("zero calls", [os.path.join(work, "short.txt"), os.path.join(work, "long.txt"), "0"]),
        ("too few arguments", [os.path.join(work, "short.txt")]),
        ("long not longer", [os.path.join(work, "long.txt"), os.path.join(work, "short.txt"), "9"]),
    ):
        bad = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
        check(bad.returncode == 2 and len(bad.stderr.splitlines()) == 1 and not bad.stdout,
              f"{label}: exit {bad.returncode}, stderr {bad.stderr!r}, stdout {bad.stdout!r}")


if __name__ == "__main__":
    sys.exit(main("profile_by_function", cases))
