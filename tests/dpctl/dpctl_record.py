"""pytest plugin for tests/dpctl: records each test's outcome as it ends.

Loaded with `-p dpctl_record` (this folder on PYTHONPATH). Environment:

  DPCTL_RECORD   file to append to, one line per event, flushed at once:
                   start<TAB>ID     before a test's setup
                   OUTCOME<TAB>ID[<TAB>WHY]
                                    when it has finished (passed, failed,
                                    error, skipped, xfailed, xpassed); WHY
                                    is a skip's reason or the last line of
                                    a failure, on one line
                   collect-error<TAB>ID
                 so that when the process dies inside a test (an abort, a
                 crash, a hang killed by pytest-timeout's thread method) the
                 last `start` without an outcome names that test.
  DPCTL_SKIP     optional file of IDs (one a line) to deselect: tests already
                 run by an earlier process of the same run.
  DPCTL_SELECT   optional file of IDs: only these run (a subset).

An ID is the pytest node id from `dpctl/tests/` on, e.g.
`test_sycl_queue.py::test_queue_submit`.
"""
import os
import re

_PREFIX = re.compile(r"^.*?dpctl/tests/")


def test_id(nodeid):
    return _PREFIX.sub("", nodeid)


def _read_ids(var):
    path = os.environ.get(var)
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        return {line.rstrip("\n") for line in f if line.strip()}


class Recorder:
    def __init__(self, path):
        self.out = open(path, "a", buffering=1)
        self.outcome = {}
        self.why = {}

    def write(self, kind, nodeid, why=""):
        why = " ".join(why.split())[:300]
        self.out.write(f"{kind}\t{test_id(nodeid)}" + (f"\t{why}" if why else "") + "\n")
        self.out.flush()

    def pytest_collection_modifyitems(self, config, items):
        skip = _read_ids("DPCTL_SKIP") or set()
        select = _read_ids("DPCTL_SELECT")
        keep, drop = [], []
        for item in items:
            tid = test_id(item.nodeid)
            if tid in skip or (select is not None and tid not in select):
                drop.append(item)
            else:
                keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_collectreport(self, report):
        if report.failed:
            self.write("collect-error", report.nodeid)

    def pytest_runtest_logstart(self, nodeid, location):
        self.outcome[nodeid] = None
        self.write("start", nodeid)

    def pytest_runtest_logreport(self, report):
        nodeid = report.nodeid
        current = self.outcome.get(nodeid)
        wasxfail = hasattr(report, "wasxfail")
        if report.when == "call":
            if report.passed:
                new = "xpassed" if wasxfail else "passed"
            elif report.skipped:
                new = "xfailed" if wasxfail else "skipped"
            else:
                new = "failed"
        elif report.failed:
            # A failing setup or teardown is an error (as pytest counts it).
            new = "error"
        elif report.skipped:
            new = "xfailed" if wasxfail else "skipped"
        else:
            return
        # The first bad outcome sticks: a test that failed and then errored
        # in teardown stays failed.
        if current in (None, "passed"):
            self.outcome[nodeid] = new
            self.why[nodeid] = _why(report) if new != "passed" else ""

    def pytest_runtest_logfinish(self, nodeid, location):
        self.write(self.outcome.get(nodeid) or "error", nodeid, self.why.get(nodeid, ""))


def _why(report):
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])  # a skip: (file, line, reason)
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    lines = str(longrepr).strip().splitlines()
    return lines[-1] if lines else ""


def pytest_configure(config):
    path = os.environ.get("DPCTL_RECORD")
    if path:
        config.pluginmanager.register(Recorder(path), "dpctl_recorder")
