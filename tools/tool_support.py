"""What the Python tools share: one line on stderr and exit status 2 for bad input, outputs
written whole or not at all, and the device-side collector (tools/device/collect.sh) run through
adb, on this machine, or read back from saved records."""
import os
import re
import shlex
import subprocess
import sys
import tempfile

COLLECTOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "device", "collect.sh")
REMOTE_COLLECTOR = "/data/local/tmp/bindersim-collect.sh"


def parse_cpu_list(text, limit):
    """The ids of a kernel CPU list such as "0-3,6" (parts between commas or spaces; an empty
    list has none), sorted. Raises ValueError saying what was expected: a part that is not an
    id or an ascending range, or an id of `limit` or more."""
    cpus = set()
    for part in text.replace(" ", ",").split(","):
        if not part.strip():
            continue
        match = re.fullmatch(r"([0-9]{1,10})(?:-([0-9]{1,10}))?", part.strip())
        if not match or int(match.group(2) or match.group(1)) < int(match.group(1)):
            raise ValueError("a CPU list such as 0-3,6")
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if last >= limit:
            raise ValueError(f"CPU ids up to {limit - 1}")
        cpus.update(range(first, last + 1))
    return sorted(cpus)


def natural_key(text):
    """Sorts cpu2 before cpu10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


class ToolError(Exception):
    """Bad input or a failed step: the message is the one line the user sees."""


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        raise ToolError(f"{path}: cannot read: {e.strerror}")


def write_all(outputs, check=None):
    """Writes each (path, text) of `outputs` to a temporary file beside its path, runs
    check(temporary paths) when given (it raises ToolError to refuse them), then renames them
    into place: every output is written whole, or none is. Files get the usual permissions
    (0666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    temporaries = []
    try:
        for path, text in outputs:
            try:
                handle, temporary = tempfile.mkstemp(
                    dir=os.path.dirname(os.path.abspath(path)), prefix=".partial-")
                temporaries.append(temporary)
                with os.fdopen(handle, "w", encoding="utf-8") as f:
                    f.write(text)
                os.chmod(temporary, 0o666 & ~umask)
            except OSError as e:
                raise ToolError(f"{path}: cannot write: {e.strerror}")
        if check:
            check(temporaries)
        for (path, _), temporary in zip(outputs, temporaries):
            try:
                os.replace(temporary, path)
            except OSError as e:
                raise ToolError(f"{path}: cannot write: {e.strerror}")
    finally:
        for temporary in temporaries:
            if os.path.exists(temporary):
                os.unlink(temporary)


def write_atomically(path, text):
    """Writes `text` to `path` whole or not at all."""
    write_all([(path, text)])


def run(command, what, env=None):
    """The command's standard output; a failure to start or a non-zero exit is a ToolError."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              env=env, check=False)
    except OSError as e:
        raise ToolError(f"{what}: cannot run {command[0]}: {e.strerror}")
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise ToolError(f"{what}: expected exit status 0, got {done.returncode} ({message})")
    return done.stdout


def collect(mode, arguments=(), records=None, adb=None, serial=None, root=None):
    """The collector's output for `mode` (topology, run) and where it came from: saved
    `records`, or a run through the `adb` executable, or here (on `root` when given)."""
    if records:
        return read_text(records), records
    if adb:
        prefix = [adb] + (["-s", serial] if serial else [])
        run([*prefix, "push", COLLECTOR, REMOTE_COLLECTOR], "adb push")
        # adb shell joins its arguments with spaces for the device's shell: quote each.
        quoted = [shlex.quote(argument) for argument in arguments]
        return run([*prefix, "shell", "sh", REMOTE_COLLECTOR, mode, *quoted],
                   "adb shell"), "adb shell"
    env = None
    origin = "this machine"
    if root:
        if not os.path.isdir(root):
            raise ToolError(f"--root: expected a directory, got {root!r}")
        env = dict(os.environ, BINDERSIM_CAPTURE_ROOT=os.path.abspath(root).rstrip("/"))
        origin = f"--root {root}"
    return run(["sh", COLLECTOR, mode, *arguments], origin, env), origin


def add_source_options(parser, what, here_flag, here_help, **here_options):
    """The options that choose where the collector runs: --adb (with --serial and --adb-path),
    `here_flag` (this machine), or --records; and --save-records. `what` names the records."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--adb", action="store_true", help="the device adb reaches")
    source.add_argument(here_flag, help=here_help, **here_options)
    source.add_argument("--records", metavar="FILE", help=f"{what} saved by --save-records")
    parser.add_argument("--serial", help="adb device serial (adb -s)")
    parser.add_argument("--adb-path", default="adb", help="the adb executable (default adb)")
    parser.add_argument("--save-records", metavar="FILE", help=f"also keep {what} as recorded")


def main_of(prog, body):
    """Runs body(); a ToolError ends with its line and exit status 2."""
    try:
        body()
    except ToolError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # the files are ToolErrors: this is standard output
        print(f"{prog}: writing standard output failed: {e.strerror}", file=sys.stderr)
        return 2
    return 0
