#!/usr/bin/env python3
"""tools/device-facts.py end to end on this machine: the collector runs a stand-in benchmark
(three worker processes under their parent's name) under a stand-in simpleperf that prints
per-core counts as simpleperf stat --per-core does, with the device's cpusets and core_ctl
files in a directory; the report must name the workers' cpuset and CPUs, core_ctl's state, the
counts per core and the matching calibration run. Saved records give the same report, and bad
records one line with exit status 2.

Usage: device_facts_test.py SOURCE_DIR"""
import os
import shutil
import stat
import subprocess
import sys

from harness import check, main

SOURCE = sys.argv[1]
TOOL = os.path.join(SOURCE, "tools", "device-facts.py")
def write(path, text, executable=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if executable:
        os.chmod(path, stat.S_IRWXU)


def facts(*args, env=None):
    done = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, env=env)
    return done.returncode, done.stdout, done.stderr


def run_cases(work):
    root = os.path.join(work, "device")
    write(f"{root}/dev/cpuset/cpus", "0-7\n")
    write(f"{root}/dev/cpuset/foreground/cpus", "0-6\n")
    write(f"{root}/dev/cpuset/system-background/cpus", "0-3\n")
    write(f"{root}/sys/devices/system/cpu/online", "0-7\n")
    for key, value in (("enable", "1"), ("min_cpus", "0"), ("max_cpus", "3"),
                       ("active_cpus", "2"), ("need_cpus", "2")):
        write(f"{root}/sys/devices/system/cpu/cpu4/core_ctl/{key}", value + "\n")
    write(f"{root}/sys/devices/system/cpu/cpu4/core_ctl/global_state",
          "CPU4\n\tCPU: 4\n\tOnline: 1\n\tIsolated: 0\n")
    # The collector samples every process of the benchmark's name on the machine: a name of
    # this test's own (15 characters at most, as /proc/PID/comm) keeps another run of the
    # suite on the same machine out of its counts.
    bench = os.path.join(work, "bin", f"fbench-{os.getpid()}"[:15])
    write(bench, "#!/bin/sh\n"
          "for w in 1 2 3; do (sleep 2; true) & done\n"
          "wait\n"
          "echo \"iterations per sec: 41045.3 ($# arguments: $*)\"\n"
          "exit ${BENCH_EXIT:-0}\n", executable=True)
    # simpleperf stat -a --per-core -e EVENTS -- COMMAND...: runs COMMAND, then prints counts
    # (a failed trial run with FAIL_TRIAL set).
    write(os.path.join(work, "bin", "simpleperf"), "#!/bin/sh\n"
          "while [ \"$1\" != -- ]; do shift; done\nshift\n"
          "[ -n \"$FAIL_TRIAL\" ] && [ \"$*\" = 'sleep 0' ] && exit 1\n\"$@\"\n"
          "echo 'Performance counter statistics:'\necho\n"
          "echo '# cpu         count  event_name   # count / runtime'\n"
          "echo '  0   2,171,123,236  cpu-cycles   # 1.085 GHz'\n"
          "echo '  4     512,000,001  cpu-cycles   # 0.300 GHz'\n"
          "echo '  0       1,234,567  context-switches   # 0.6 K/sec'\n", executable=True)
    env = dict(os.environ, BINDERSIM_CAPTURE_ROOT=root, TMPDIR=work,
               PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"])
    records = os.path.join(work, "records.txt")
    code, out, err = facts("--local", "--save-records", records, "--", bench, "-w", "a b",
                           env=env)
    check(code == 0, f"--local: exit {code}: {err}")
    own = subprocess.run(["cat", "/proc/self/cpuset"], capture_output=True, text=True)
    cpuset = own.stdout.strip()
    expected = [
        "Benchmark: ",
        "4 process(es), exit status 0",  # the bench and its three workers
        f"cpuset {cpuset}, allowed CPUs",
        "threads' last CPU over the samples: cpu",
        "/system-background     0-3",
        "/foreground            0-6",
        "cpu4 active_cpus: 2 2",
        "cpu4 max_cpus: 3 3",
        "Counters per core (simpleperf)",
        "iterations per sec: 41045.3 (2 arguments: -w a b)",
        "Online CPUs: 0-7\n",
        "tools/calibrate.py --throughput-cpus",
        "--background-cpus 0-3",
    ]
    for line in expected:
        check(line in out, f"report lacks {line!r}:\n{out}")
    check("2,171,123,236" in out and "512,000,001" in out and "1,234,567" in out,
          f"per-core counts:\n{out}")
    check("global_state" not in out, "a multi-line core_ctl file shown as a value")

    code, again, err = facts("--records", records)
    check(code == 0 and again == out, f"--records gives another report: {err}")

    # Under Android's shell (mksh), the same processes and facts.
    done = subprocess.run(["mksh", os.path.join(SOURCE, "tools", "device", "collect.sh"), "run",
                           bench], capture_output=True, text=True, env=env)
    mksh_records = os.path.join(work, "mksh.txt")
    write(mksh_records, done.stdout)
    code, under_mksh, err = facts("--records", mksh_records)
    check(done.returncode == 0 and code == 0 and "4 process(es), exit status 0" in under_mksh and
          "/system-background     0-3" in under_mksh and "Counters per core (simpleperf)" in
          under_mksh, f"under mksh: {done.stderr}{err}\n{under_mksh}")

    # Without simpleperf the benchmark runs plainly, and the report says so.
    plain_env = dict(env, PATH=os.path.dirname(shutil.which("sh")) + os.pathsep +
                     os.path.dirname(shutil.which("sleep")))
    code, out, err = facts("--local", "--", bench, env=plain_env)
    check(code == 0 and "Counters per core: none: simpleperf is not installed" in out and
          "iterations per sec" in out, f"without simpleperf: {code}: {err}\n{out}")
    # A simpleperf that cannot count system-wide still lets the benchmark run; its own exit
    # status is reported, not simpleperf's.
    code, out, err = facts("--local", "--", bench, env=dict(env, FAIL_TRIAL="1", BENCH_EXIT="3"))
    check(code == 0 and "Counters per core: none: a trial of simpleperf" in out and
          "exit status 3" in out and "iterations per sec" in out,
          f"simpleperf failing: {code}: {err}\n{out}")

    # Through adb, whose shell joins the arguments with spaces: each is quoted.
    fake_adb = os.path.join(work, "bin", "adb")
    write(fake_adb, "#!/bin/sh\n"
          f"case \"$1\" in push) cp \"$2\" '{work}/pushed.sh' ;;\n"
          "  shell) shift\n"
          "         command=$(printf '%s' \"$*\" | "
          f"sed 's|/data/local/tmp/bindersim-collect.sh|{work}/pushed.sh|')\n"
          "         sh -c \"$command\" ;;\n"
          "esac\n", executable=True)
    code, out, err = facts("--adb", "--adb-path", fake_adb, "--", bench, "-w", "a b;echo x",
                           env=env)
    check(code == 0 and "(2 arguments: -w a b;echo x)" in out, f"adb quoting: {err}\n{out}")

    bad = os.path.join(work, "bad.txt")
    cut = os.path.join(work, "cut.txt")
    write(bad, "hello\n")
    write(cut, open(records).read().split("@@output")[0])
    nameless = os.path.join(work, "nameless.txt")
    write(nameless, "@@file\nx\n@@output\n")
    huge = os.path.join(work, "huge.txt")
    write(huge, "@@file /dev/cpuset/foreground/cpus\n0-400000000\n@@output\n")
    for args, message in ((["--records", bad], "bad.txt: line 1: expected a record"),
                          (["--records", nameless], "line 1: expected @@file and a name"),
                          (["--records", huge], "expected CPU ids up to 4095"),
                          (["--records", cut], "expected the run's @@output record"),
                          (["--records", os.path.join(work, "none.txt")], "cannot read")):
        code, out, err = facts(*args)
        check(code == 2 and not out and err.startswith("device-facts: ") and message in err
              and err.count("\n") == 1, f"{args}: {code} {err!r}")


if __name__ == "__main__":
    sys.exit(main("device_facts_test", run_cases))
