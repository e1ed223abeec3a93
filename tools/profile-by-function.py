#!/usr/bin/env python3
"""Instructions per simulated call, by component and by function, from two callgrind profiles.

usage: profile-by-function.py SHORT.txt LONG.txt CALLS

SHORT.txt and LONG.txt are `callgrind_annotate --threshold=100` outputs of two runs of the same
scenario that differ only in their number of calls, CALLS more in the long one. Each function's
share of a call is the difference of its own (exclusive) instructions over CALLS, so start-up
and the final write cancel out. A function's count includes the code the compiler inlined into
it: with an optimised build, a small helper counts in its caller.

Components are bindersim's namespace and class (`sched::Scheduler`); free functions count in
their namespace, file-local ones marked as such; everything outside bindersim (the C and C++
libraries) counts as one.
"""

import collections
import re
import sys

# "  12,345 ( 1.23%)  file:function [object]"
LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S*?):(.+) \[[^\]]*\]\s*$")
LIBRARIES = "C and C++ libraries"
SHOWN_FUNCTIONS = 15


def fail(message):
    print(f"profile-by-function.py: {message}", file=sys.stderr)
    sys.exit(2)


def exclusive_counts(path):
    """Instructions of each function, as callgrind_annotate lists them (exclusive)."""
    counts = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as text:
            for line in text:
                match = LINE.match(line)
                if not match:
                    continue
                function = short_name(match.group(3))
                counts[function] = counts.get(function, 0) + int(match.group(1).replace(",", ""))
    except OSError as error:
        fail(f"{path}: {error.strerror}")
    if not counts:
        fail(f"{path}: expected callgrind_annotate's list of functions, found none")
    return counts


def short_name(function):
    """The qualified name without parameters, clones or the leading bindersim::."""
    name = function.replace("(anonymous namespace)", "{file-local}")
    name = re.sub(r"\{lambda\([^)]*\)#\d+\}", "{lambda}", name)
    name = name.split("(", 1)[0].strip()
    if name.startswith("bindersim::"):
        return name[len("bindersim::"):]
    return "~" + name  # outside bindersim


def component(name):
    if name.startswith("~"):
        return LIBRARIES
    parts = name.split("::")
    if "{file-local}" in parts:
        return parts[0] + " (file-local functions)"
    if len(parts) >= 3:
        return parts[0] + "::" + parts[1]
    return parts[0] + " (free functions)"


def print_table(title, rows, per_call_total):
    print(title)
    for name, per_call in rows:
        print(f"  {per_call:8,.0f}  {100 * per_call / per_call_total:5.1f}%  {name}")


def main():
    if len(sys.argv) != 4:
        fail("expected SHORT.txt LONG.txt CALLS")
    if not sys.argv[3].isdigit() or int(sys.argv[3]) == 0:
        fail(f"CALLS: expected a positive whole number, got {sys.argv[3]!r}")
    short = exclusive_counts(sys.argv[1])
    long = exclusive_counts(sys.argv[2])
    calls = int(sys.argv[3])
    per_call = {
        name: (long.get(name, 0) - short.get(name, 0)) / calls for name in set(short) | set(long)
    }
    total = sum(per_call.values())
    if total <= 0:
        fail(f"{sys.argv[2]}: expected more instructions than in {sys.argv[1]}, found no more")
    by_component = collections.Counter()
    for name, value in per_call.items():
        by_component[component(name)] += value
    # Sorted by size, then by name: the same profile prints the same table.
    components = sorted(by_component.items(), key=lambda item: (-item[1], item[0]))
    shown = [(name, value) for name, value in components if value >= 0.005 * total]
    rest = sum(value for _, value in components[len(shown):])
    if rest:
        shown.append(("the rest", rest))
    print_table(
        f"by component: instructions per call ({total:,.0f} in all); inlined code counts "
        "in its caller",
        shown,
        total,
    )
    functions = sorted(
        ((name.lstrip("~"), value) for name, value in per_call.items()),
        key=lambda item: (-item[1], item[0]),
    )
    print_table(f"the {SHOWN_FUNCTIONS} largest functions:", functions[:SHOWN_FUNCTIONS], total)


if __name__ == "__main__":
    main()
