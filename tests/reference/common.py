"""Shared helpers for the Python side of seer's tests (tests/reference): numpy bootstrap and TAP output.

Scripts here need numpy from Debian (python3-numpy). A pyenv or venv python earlier on PATH may lack it, so
`ensure_numpy()` re-executes the running script with /usr/bin/python3 when numpy cannot be imported.
"""

import os
import sys


def ensure_numpy(*more):
    """... and the modules named in `more` (e.g. "PIL"), which Debian's python3 has too."""
    try:
        import numpy  # noqa: F401
        for name in more:
            __import__(name)
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system):
            os.execv(system, [system] + sys.argv)
        raise


class Tap:
    """Minimal TAP producer: `ok(cond, name)`, `skip(why, name)`, `diag(msg)`, `done()` -> exit status."""

    def __init__(self):
        self.n = 0
        self.failed = 0
        self.replay = ""  # how to replay the run (e.g. its seed), named on stderr with each failure

    def ok(self, cond, name):
        self.n += 1
        if not cond:
            self.failed += 1
            # prove shows a test's stderr, not its stdout: the failure and its replay reach the log
            print(f"{os.path.basename(sys.argv[0])}: not ok {self.n} - {name}"
                  f"{f' ({self.replay})' if self.replay else ''}", file=sys.stderr, flush=True)
        print(f"{'' if cond else 'not '}ok {self.n} - {name}", flush=True)
        return cond

    def skip(self, why, name):
        self.n += 1
        print(f"ok {self.n} - {name} # SKIP {why}", flush=True)

    def diag(self, msg):
        for line in str(msg).splitlines() or [""]:
            print(f"# {line}", flush=True)

    def done(self):
        print(f"1..{self.n}", flush=True)
        if self.failed:
            self.diag(f"failed {self.failed} of {self.n}")
        return 1 if self.failed else 0
