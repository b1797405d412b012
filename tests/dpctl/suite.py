#!/usr/bin/env python3
"""Runs dpctl's own test suite and compares runs; driven by tests/dpctl/run.sh.

  suite.py run OUT [--select FILE] [--timeout S]
      Runs `python -m pytest --pyargs dpctl` (the python running this script
      must be the dpctl venv's) in the environment it is given
      (UR_ADAPTERS_FORCE_LOAD, OCL_ICD_VENDORS, ...). Outcomes are recorded
      test by test (dpctl_record.py); when the process dies inside a test
      (std::terminate, a crash, or pytest-timeout ending a hang), that test
      is `abort` (or `timeout`) and pytest starts again on the tests not run
      yet. A pytest process that ends badly outside any test (at collection,
      or at exit) gives an `abort` of the pseudo-test "(pytest process exit)".
      Writes OUT (ID<TAB>outcome<TAB>reason, sorted), OUT.log (pytest's
      output) and prints one line of counts. --select FILE runs only the
      test IDs listed in FILE; --timeout is pytest-timeout's, per test.

  suite.py compare REF OURS KNOWN LABEL [--allow-skips]
      Every test that passed in REF (Intel's stack) must pass in OURS (with
      --allow-skips, a skip on ours is accepted too), and no test may abort
      or time out in OURS, unless KNOWN lists it: lines
      `LABEL TEST-ID-PATTERN reason`, LABEL `*` for every label, the pattern
      a glob over test IDs (`*` is the only wildcard). Prints one line per
      failure and per known difference seen, then
      `compare LABEL: N checked, N failed, N known differences`; exits 1 when
      a check failed. A known pattern that matched nothing is reported as
      stale (not an error), so that the list stays short.
"""
import collections
import os
import re
import subprocess
import sys
import time

EXIT_ID = "(pytest process exit)"
HERE = os.path.dirname(os.path.abspath(__file__))
OUTCOMES = ["passed", "failed", "error", "skipped", "xfailed", "xpassed",
            "abort", "timeout", "collect-error"]


def read_record(path):
    starts, done = [], {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                kind, _, rest = line.rstrip("\n").partition("\t")
                tid, _, why = rest.partition("\t")
                if kind == "start":
                    starts.append(tid)
                else:
                    done[tid] = (kind, why)
    return starts, done


def run(out, select=None, timeout=60, max_restarts=100, process_timeout=900):
    env = dict(os.environ)
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    if select:
        env["DPCTL_SELECT"] = os.path.abspath(select)
    cmd = [sys.executable, "-m", "pytest", "-q", "-rfEs", "--capture=sys", "-p", "no:cacheprovider",
           "-p", "dpctl_record", "--timeout", str(timeout),
           "--timeout-method", "thread", "--pyargs", "dpctl"]
    return run_pytest(out, cmd, env, max_restarts, process_timeout)


def run_pytest(out, cmd, env, max_restarts, process_timeout):
    """Runs pytest `cmd` (with dpctl_record.py among its plugins) until
    every test it collects has an outcome: a process that dies in a test
    records that test as an abort (or a timeout) and a new process skips
    what is done. Writes OUT (test, outcome, reason), OUT.notes and
    OUT.seconds; OUT.record, .skip and .log are its working files."""
    out = os.path.abspath(out)
    record, skip, log = out + ".record", out + ".skip", out + ".log"
    for path in (record, skip, log):
        if os.path.exists(path):
            os.remove(path)
    env = dict(env, DPCTL_RECORD=record, DPCTL_SKIP=skip)
    notes = []
    t0 = time.monotonic()
    for attempt in range(max_restarts + 1):
        with open(log, "a") as logf:
            logf.write(f"\n===== pytest run {attempt + 1}: {' '.join(cmd)}\n")
            logf.flush()
            start_pos = logf.tell()
            try:
                rc = subprocess.run(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd="/",
                                    timeout=process_timeout).returncode
            except subprocess.TimeoutExpired:
                rc = "killed after %ds" % process_timeout
        starts, done = read_record(record)
        pending = [t for t in starts if t not in done]
        with open(log) as logf:
            logf.seek(start_pos)
            this_log = logf.read()
        if pending:
            tid = pending[-1]
            kind = "timeout" if "+ Timeout +" in this_log or isinstance(rc, str) else "abort"
            with open(record, "a") as f:
                f.write(f"{kind}\t{tid}\texit {rc}\n")
            notes.append(f"{kind}: {tid} (exit {rc})")
            with open(skip, "w") as f:
                f.writelines(t + "\n" for t in read_record(record)[1])
            continue
        if rc not in (0, 1, 5):
            # Died or failed outside any test: at collection, or at exit (a
            # crash in a library's teardown). Recorded as an abort of a test
            # of its own, so that a comparison sees it.
            with open(record, "a") as f:
                f.write(f"abort\t{EXIT_ID}\texit {rc} outside any test\n")
            notes.append(f"pytest exited {rc} outside any test (see {log})")
        break
    else:
        notes.append(f"gave up after {max_restarts} restarts: the tests not run yet are missing")
    seconds = time.monotonic() - t0
    _, done = read_record(record)
    with open(out, "w") as f:
        for tid in sorted(done):
            kind, why = done[tid]
            f.write(f"{tid}\t{kind}" + (f"\t{why}" if why else "") + "\n")
    counts = collections.Counter(kind for kind, _ in done.values())
    summary = ", ".join(f"{counts[k]} {k}" for k in OUTCOMES if counts[k])
    print(f"{os.path.basename(out)}: {summary or 'no tests'} "
          f"({seconds:.0f} s, {attempt + 1} pytest process(es))")
    # An abort's note is one line per test: the first few say enough.
    for note in notes[:10]:
        print("  " + note)
    if len(notes) > 10:
        print(f"  ... {len(notes) - 10} more in {out}.notes")
    with open(out + ".notes", "w") as f:
        f.writelines(n + "\n" for n in notes)
    with open(out + ".seconds", "w") as f:
        f.write(f"{seconds:.0f}\n")
    return 0


def read_results(path):
    res = {}
    with open(path) as f:
        for line in f:
            tid, _, rest = line.rstrip("\n").partition("\t")
            if tid:
                res[tid] = rest.partition("\t")[0]
    return res


def read_known(path, label):
    """(pattern, reason) pairs of KNOWN that apply to LABEL."""
    known = []
    if os.path.exists(path):
        with open(path) as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                parts = line.split(None, 2)
                if len(parts) < 3:
                    sys.exit(f"{path}:{number}: needs `LABEL TEST-ID-PATTERN reason`: {line}")
                if parts[0] in (label, "*"):
                    known.append((parts[1], parts[2]))
    return known


def glob_match(pattern, tid):
    """`*` matches any run of characters; everything else, brackets of
    parametrised IDs included, stands for itself."""
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), tid) is not None


def compare(ref_path, ours_path, known_path, label, allow_skips=False):
    """One check per test that passed on Intel's stack (it must pass on
    ours; a skip counts only with allow_skips) and one per test that aborted
    or timed out on ours (never allowed), less the known differences."""
    ref, ours = read_results(ref_path), read_results(ours_path)
    known = read_known(known_path, label)
    used = set()
    checked = failed = known_seen = 0
    for tid in sorted(set(ref) | set(ours)):
        got = ours.get(tid, "not run")
        want = ref.get(tid, "not run")
        if got in ("abort", "timeout"):
            problem = f"{got} on ours ({want} on Intel's stack)"
        elif want == "passed":
            ok = ("passed", "xpassed") + (("skipped",) if allow_skips else ())
            if got in ok:
                checked += 1
                continue
            problem = f"passes on Intel's stack, {got} on ours"
        else:
            continue
        checked += 1
        match = next((k for k in known if glob_match(k[0], tid)), None)
        if match:
            used.add(match[0])
            known_seen += 1
            print(f"  known ({label}): {tid}: {problem} -- {match[1]}")
        else:
            failed += 1
            print(f"FAIL ({label}): {tid}: {problem}")
    for pattern, _ in known:
        if pattern not in used:
            print(f"  stale known difference ({label}): {pattern} matched no failing test")
    print(f"compare {label}: {checked} checked, {failed} failed, {known_seen} known differences")
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "run":
        out, rest = argv[1], argv[2:]
        select, timeout = None, 60
        while rest:
            if rest[0] == "--select":
                select, rest = rest[1], rest[2:]
            elif rest[0] == "--timeout":
                timeout, rest = int(rest[1]), rest[2:]
            else:
                sys.exit(f"suite.py run: unknown argument {rest[0]}")
        return run(out, select, timeout)
    if argv[:1] == ["compare"] and len(argv) in (5, 6):
        if len(argv) == 6 and argv[5] != "--allow-skips":
            sys.exit(__doc__)
        return compare(*argv[1:5], allow_skips=len(argv) == 6)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
