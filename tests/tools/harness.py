"""What the tools' tests share: checks that record failures and go on, and a main that runs
the cases in a scratch directory and exits 1 when any check failed."""
import shutil
import sys
import tempfile

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def main(name, run_cases):
    """Runs run_cases(work) in a scratch directory that is removed afterwards."""
    work = tempfile.mkdtemp(prefix=f"{name}-")
    try:
        run_cases(work)
    finally:
        shutil.rmtree(work)
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    print(f"{name}: OK")
    return 0
