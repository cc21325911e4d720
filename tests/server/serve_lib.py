"""Helpers of tests/server/serve_test.py: TAP output, `seer serve` processes on free loopback ports
(killed at exit), request bodies, server-sent events, /metrics samples and test media."""
import atexit
import base64
import http.client
import http.server
import io
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
from common import ensure_numpy  # noqa: E402

ensure_numpy("PIL")  # a pyenv python3 first on PATH may lack them: then Debian's runs this
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

SEER = os.path.join(ROOT, os.environ.get("SEER_BUILD_DIR", "build"), "seer")
TMP = tempfile.mkdtemp(prefix="seer-serve-test-")
SERVERS = []
N_TESTS = 0
FAILED = 0
MODEL = None  # the tiny model serve_test.py generates: the default of Server


# ---- TAP ----------------------------------------------------------------------------------------

def ok(cond, name, diag=None, todo=None):
    """todo: a known bug, named by the reason; prove reports it, and reports it fixed, without failing."""
    global N_TESTS, FAILED
    N_TESTS += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (N_TESTS, name) + (" # TODO " + todo if todo else ""), flush=True)
    if not cond:
        FAILED += not todo
        if diag is not None:
            for line in str(diag)[:2000].splitlines():
                print("#   " + line, flush=True)
    return cond


def skip(name, why):
    global N_TESTS
    N_TESTS += 1
    print("ok %d - %s # SKIP %s" % (N_TESTS, name, why), flush=True)


def section(fn):
    """Runs one group of tests; an exception (a server that died, a timeout) fails the group by name
    instead of ending the program, so the other groups still run and report."""
    print("# " + fn.__name__, flush=True)
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - reported as a failing test with its cause
        import traceback
        ok(False, "%s ran to the end" % fn.__name__, "%r\n%s" % (e, traceback.format_exc()))


# ---- servers ------------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *args, model=None, wait=True):
        self.port = free_port()
        self.log_path = os.path.join(TMP, "server-%d.log" % self.port)
        cmd = [SEER, "serve", "-m", model or MODEL, "--port", str(self.port), "--temp", "0", "-c", "2048"]
        self.proc = subprocess.Popen(cmd + list(args), stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))
        SERVERS.append(self)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("seer serve exited %d: %s" % (self.proc.returncode, self.log()))
            try:
                if self.request("GET", "/health", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("seer serve not ready in %d s: %s" % (timeout, self.log()))

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-1500:]

    def request(self, method, path, body=None, headers=None, timeout=120):
        """(status, headers dict, body bytes) of one request on a fresh connection."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            c.request(method, path, body, dict({"Content-Type": "application/json"}, **(headers or {})))
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def post(self, path, body, headers=None, timeout=120):
        st, _, raw = self.request("POST", path, body, headers, timeout)
        try:
            return st, json.loads(raw)
        except ValueError:
            return st, raw

    def chat(self, messages, **kw):
        body = dict({"messages": messages, "temperature": 0, "max_tokens": 8}, **kw)
        return self.post("/v1/chat/completions", body)

    def answer(self, messages, **kw):
        """The content of a chat that must succeed (raises otherwise)."""
        st, r = self.chat(messages, **kw)
        if st != 200:
            raise RuntimeError("chat answered %d: %r" % (st, r))
        return r["choices"][0]["message"]["content"], r["usage"]

    def metrics(self):
        st, _, raw = self.request("GET", "/metrics")
        return st, raw.decode()

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def serving(self):
        """Whether /health is 200 and a normal request is answered (after a hostile one)."""
        try:
            st = self.request("GET", "/health", timeout=30)[0]
            return st == 200 and self.chat(user("still there?"), max_tokens=2)[0] == 200
        except OSError:
            return False

    def exit_status(self, timeout=30):
        """The exit status once the process ends, None when it does not within timeout seconds."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        """SIGTERM, SIGKILL after 10 s: the exit status (0 after SIGTERM; a sanitizer build checks
        for leaks at that exit)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            if self.exit_status(10) is None:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@atexit.register
def cleanup():
    for s in SERVERS:  # what a failed section left running
        if s.proc.poll() is None:
            s.proc.kill()
    if not os.environ.get("SEER_KEEP_TMP"):
        shutil.rmtree(TMP, ignore_errors=True)


def user(text, *media):
    if not media:
        return [{"role": "user", "content": text}]
    return [{"role": "user", "content": list(media) + [{"type": "text", "text": text}]}]


def image_part(url):
    return {"type": "image_url", "image_url": {"url": url}}


def data_uri(mime, raw):
    return "data:%s;base64,%s" % (mime, base64.b64encode(raw).decode())


def sse(raw):
    """The events of a server-sent event stream: (list of 'data: ' payloads, all well-formed)."""
    events = [e for e in raw.decode().split("\n\n") if e.strip()]
    return [e[6:] for e in events if e.startswith("data: ")], all(e.startswith("data: ") for e in events)


def metric(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def make_image(fmt, size=(64, 48), seed=0):
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(buf, fmt)
    return buf.getvalue()


def png_bomb(w, h):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = zlib.compress(b"\0" * min(w * 3 + 1, 1 << 20) * 64, 9)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", rows)
            + chunk(b"IEND", b""))


class Files(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def copyfile(self, src, dst):
        try:
            super().copyfile(src, dst)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading past --max-media-bytes: what the test wants


def start_stream(s, text, max_tokens):
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    c.request("POST", "/v1/chat/completions", json.dumps({"messages": user(text), "max_tokens": max_tokens,
                                                          "stream": True, "temperature": 0}),
              {"Content-Type": "application/json"})
    resp = c.getresponse()
    return c, resp, resp.readline()
