"""Shared helpers for the Python side of seer's tests (tests/reference): numpy bootstrap, the Hugging Face
reference venv, and TAP output.

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


def ensure_hf_python():
    """Re-executes the running script under the Hugging Face reference venv's python (SEER_HF_PYTHON, which
    scripts/test.sh exports from scripts/reference-venv.sh; else build/venv-hf/bin/python), offline. A
    missing venv is a failure ("Bail out!", exit 1), never a skip: CI must have the reference."""
    os.environ["HF_HUB_OFFLINE"] = os.environ["TRANSFORMERS_OFFLINE"] = "1"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    hf = os.environ.get("SEER_HF_PYTHON") or os.path.join(root, "build", "venv-hf", "bin", "python")
    if os.environ.get("SEER_HF_REEXEC") == hf:
        return
    if not os.access(hf, os.X_OK):
        print(f"Bail out! {hf}: no reference python (scripts/reference-venv.sh makes it)", flush=True)
        sys.exit(1)
    os.environ["SEER_HF_REEXEC"] = hf
    os.execv(hf, [hf, os.path.abspath(sys.argv[0])] + sys.argv[1:])


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

    def todo(self, cond, name, why):
        """A known difference, shown but not failing the suite (TAP TODO; prove counts a passing one)."""
        self.n += 1
        print(f"{'' if cond else 'not '}ok {self.n} - {name} # TODO {why}", flush=True)
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
