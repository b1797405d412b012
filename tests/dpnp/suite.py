#!/usr/bin/env python3
"""Runs test files of dpnp's own suite and compares runs; driven by
tests/dpnp/run.sh. What is not dpnp's own is tests/dpctl's: the recording
pytest plugin (tests/dpctl/dpctl_record.py) and the comparison
(tests/dpctl/suite.py compare), used as they are.

  suite.py run OUT --file F [--file F ...] [--timeout S] [-k EXPR]
               [--max-restarts N] [--process-timeout S]
      Runs `python -m pytest` on the files F (paths inside dpnp/tests, e.g.
      test_fill.py or tensor/test_usm_ndarray_ctor.py; the python running
      this script must be the dpnp venv's) in the environment it is given
      (UR_ADAPTERS_FORCE_LOAD, OCL_ICD_VENDORS, ONEAPI_DEVICE_SELECTOR, ...),
      as tests/dpctl/suite.py runs dpctl's suite: outcomes are recorded test
      by test, a process that dies inside a test (std::terminate, a crash,
      pytest-timeout ending a hang) gives that test `abort` (or `timeout`)
      and pytest starts again on the tests not run yet. Test IDs are
      relative to dpnp/tests (pytest's rootdir), as in
      `tensor/test_usm_ndarray_ctor.py::test_allocate_usm_ndarray[...]`.
      Writes OUT (ID<TAB>outcome<TAB>reason, sorted), OUT.log (pytest's
      output), OUT.notes, OUT.seconds (the run's wall time) and prints one
      line of counts. -k is pytest's; --timeout pytest-timeout's, per test;
      --process-timeout ends one pytest process that runs longer (its
      current test is then a `timeout`, and the run goes on after it).

  suite.py compare REF OURS KNOWN LABEL [--allow-skips]
      tests/dpctl/suite.py compare, unchanged: every test that passed in REF
      must pass in OURS, and none may abort or time out there, unless KNOWN
      lists it.

  suite.py summary REF_DIR OURS_DIR NAME...
      One line per run NAME (REF_DIR/NAME.tsv against OURS_DIR/NAME.tsv):
      passed, failed (errors included), skipped (xfailed included) and
      aborts (timeouts included) on each stack, with each run's seconds.

  suite.py reasons RUN.tsv... [--top N]
      The failures, errors, aborts and timeouts of the runs grouped by their
      reason (the exception's message, addresses and numbers blurred), most
      frequent first, with the UR result codes the messages name: which
      entry points a client needs that an adapter does not serve yet.
"""
import collections
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DPCTL = os.path.join(os.path.dirname(HERE), "dpctl")


def _load_dpctl_suite():
    # Loaded by path under a name of its own: `import suite` would find this
    # file again (its folder is first on sys.path).
    spec = importlib.util.spec_from_file_location("dpctl_suite", os.path.join(DPCTL, "suite.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


base = _load_dpctl_suite()


def tests_dir():
    """dpnp/tests of the venv, found without importing dpnp: an import
    would start SYCL in this process, which only drives pytest."""
    spec = importlib.util.find_spec("dpnp")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("suite.py: dpnp is not installed for " + sys.executable)
    return os.path.join(list(spec.submodule_search_locations)[0], "tests")


def run(out, files, timeout=60, kexpr=None, max_restarts=100, process_timeout=1800):
    out = os.path.abspath(out)
    tests = tests_dir()
    paths = []
    for name in files:
        path = os.path.join(tests, name)
        if not os.path.isfile(path):
            sys.exit(f"suite.py run: no test file {name} in {tests}")
        paths.append(path)
    env = dict(os.environ)
    # dpctl_record.py (-p dpctl_record) from tests/dpctl; it strips node
    # IDs up to `dpctl/tests/`, which dpnp's do not hold, and with
    # --rootdir at dpnp/tests they are already relative to it.
    env["PYTHONPATH"] = DPCTL + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("DPCTL_SELECT", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-rfEs", "--capture=sys", "-p", "no:cacheprovider",
           "-p", "dpctl_record", "--rootdir", tests, "--timeout", str(timeout),
           "--timeout-method", "thread"]
    if kexpr:
        cmd += ["-k", kexpr]
    return base.run_pytest(out, cmd + paths, env, max_restarts, process_timeout)


# summary's columns: outcomes counted together.
GROUPS = [("passed", ("passed", "xpassed")), ("failed", ("failed", "error", "collect-error")),
          ("skipped", ("skipped", "xfailed")), ("aborts", ("abort", "timeout"))]


def _counts(path):
    if not os.path.exists(path):
        return None
    got = collections.Counter(base.read_results(path).values())
    seconds = "?"
    if os.path.exists(path + ".seconds"):
        with open(path + ".seconds") as f:
            seconds = f.read().strip()
    return [sum(got[k] for k in kinds) for _, kinds in GROUPS] + [seconds]


def summary(ref_dir, ours_dir, names):
    heads = [g for g, _ in GROUPS] + ["s"]
    width = max([len(n) for n in names] + [4])
    print(f"{'':{width}}  {'Intel stack':^30}  {'ours':^30}")
    print(f"{'file':{width}}  " + " ".join(f"{h:>7}" for h in heads)
          + "  " + " ".join(f"{h:>7}" for h in heads))
    for name in names:
        cells = []
        for folder in (ref_dir, ours_dir):
            c = _counts(os.path.join(folder, name + ".tsv"))
            cells.append(" ".join(f"{x:>7}" for x in c) if c else f"{'(not run)':>31}")
        print(f"{name:{width}}  {cells[0]}  {cells[1]}")
    return 0


_BLUR = [(re.compile(r"0x[0-9a-fA-F]+"), "0x_"), (re.compile(r"(?<![\w.])-?\d+(\.\d+)?(?![\w.])"), "N")]
_UR = re.compile(r"UR_RESULT_[A-Z0-9_]+")


def reasons(paths, top=15):
    groups = collections.Counter()
    examples = {}
    codes = collections.Counter()
    total = 0
    for path in paths:
        with open(path) as f:
            for line in f:
                tid, kind, why = (line.rstrip("\n").split("\t") + ["", ""])[:3]
                if kind not in ("failed", "error", "collect-error", "abort", "timeout"):
                    continue
                total += 1
                key = why or "(no message)"
                # An abort's reason is its exit status (the signal): kept.
                if kind not in ("abort", "timeout"):
                    for pattern, repl in _BLUR:
                        key = pattern.sub(repl, key)
                key = f"{kind}: {key[:160]}"
                groups[key] += 1
                examples.setdefault(key, tid)
                codes.update(set(_UR.findall(why)))
    if not total:
        print(f"no failure, error, abort or timeout in {len(paths)} run(s)")
        return 0
    print(f"{total} failures, errors, aborts and timeouts in {len(paths)} run(s); "
          f"{len(groups)} distinct reasons; the {min(top, len(groups))} most frequent:")
    for key, n in groups.most_common(top):
        print(f"  {n:6}  {key}")
        print(f"          e.g. {examples[key]}")
    if codes:
        print("UR result codes named (tests naming each): "
              + ", ".join(f"{c} {n}" for c, n in codes.most_common()))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "run":
        out, rest = argv[1], argv[2:]
        opts = {"files": []}
        while rest:
            if rest[0] == "--file" and len(rest) > 1:
                opts["files"].append(rest[1])
            elif rest[0] == "--timeout" and len(rest) > 1:
                opts["timeout"] = int(rest[1])
            elif rest[0] == "-k" and len(rest) > 1:
                opts["kexpr"] = rest[1] or None
            elif rest[0] == "--max-restarts" and len(rest) > 1:
                opts["max_restarts"] = int(rest[1])
            elif rest[0] == "--process-timeout" and len(rest) > 1:
                opts["process_timeout"] = int(rest[1])
            else:
                sys.exit(f"suite.py run: bad argument {rest[0]}")
            rest = rest[2:]
        if not opts["files"]:
            sys.exit("suite.py run: no --file")
        return run(out, **opts)
    if argv[:1] == ["compare"] and len(argv) in (5, 6):
        if len(argv) == 6 and argv[5] != "--allow-skips":
            sys.exit(__doc__)
        return base.compare(*argv[1:5], allow_skips=len(argv) == 6)
    if argv[:1] == ["summary"] and len(argv) >= 4:
        return summary(argv[1], argv[2], argv[3:])
    if argv[:1] == ["reasons"] and len(argv) >= 2:
        args, top = argv[1:], 15
        if "--top" in args:
            i = args.index("--top")
            top = int(args[i + 1])
            args = args[:i] + args[i + 2:]
        return reasons(args, top)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
