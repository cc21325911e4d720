#!/usr/bin/env python3
"""A stand-in for the Hugging Face hub on 127.0.0.1, for tests/cli/pull.c: serves the files of one
directory as repository REPO, the way `seer pull` asks for them (cli/hub.c), and misbehaves on
request so every failure path of a download can be tested.

  GET /api/models/REPO/revision/main?blobs=true   model metadata: {"sha", "siblings": [{"rfilename",
                                                  "size", "blobId", "lfs": {"sha256", "size"}}]};
                                                  *.safetensors are listed as LFS files (SHA-256),
                                                  the rest as Git blobs (blobId = SHA-1 of
                                                  "blob <size>\\0" + content), as the hub does
  GET /REPO/resolve/SHA/FILE                      the file; LFS files redirect (302) to /cdn/FILE,
                                                  as the hub sends them to its CDN; "Range: bytes=N-"
                                                  is answered 206 with Content-Range

Faults (each FILE may be given with several options):
  --cut FILE:N      the first N requests for FILE send the headers of the whole rest, then half of
                    it, then close the connection
  --stall FILE      send the headers and 1 byte of FILE, then nothing (for 10 minutes)
  --bad-sum FILE    list a wrong checksum for FILE (last hex digit changed)
  --missing FILE    list FILE but answer 404 for it
  --extra NAME      list one more file called NAME (e.g. "../x.safetensors"), with valid fields
  --no-range        ignore Range headers: always 200 with the whole file, as some mirrors do
Every request is appended to --log as "METHOD PATH RANGE" (RANGE "-" when none). The port the
server listens on is written to --port-file once it accepts connections.
"""
import argparse
import hashlib
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def sums(path):
    data = open(path, "rb").read()
    return len(data), hashlib.sha256(data).hexdigest(), hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def flip(hexstr):
    return hexstr[:-1] + ("0" if hexstr[-1] != "0" else "1")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--cut", action="append", default=[])
    ap.add_argument("--stall", action="append", default=[])
    ap.add_argument("--bad-sum", action="append", default=[])
    ap.add_argument("--missing", action="append", default=[])
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--no-range", action="store_true")
    a = ap.parse_args()

    cuts = {}
    for c in a.cut:
        name, n = c.rsplit(":", 1)
        cuts[name] = int(n)
    files = sorted(f for f in os.listdir(a.root) if os.path.isfile(os.path.join(a.root, f)))
    siblings = []
    for f in files + a.extra:
        size, sha256, sha1 = sums(os.path.join(a.root, f if f in files else files[0]))
        if f in a.bad_sum:
            sha256, sha1 = flip(sha256), flip(sha1)
        s = {"rfilename": f, "size": size, "blobId": sha1}
        if f.endswith(".safetensors"):
            s["lfs"] = {"sha256": sha256, "size": size, "pointerSize": 134}
            s["blobId"] = hashlib.sha1(f.encode()).hexdigest()  # the pointer's id, not the content's
        siblings.append(s)
    siblings.append({"rfilename": "README.md", "size": 5, "blobId": "0" * 40})  # not needed by seer
    meta = json.dumps({"id": a.repo, "sha": COMMIT, "siblings": siblings}).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            rng = self.headers.get("Range")
            with open(a.log, "a") as log:  # reopened each time: the test removes it between cases
                log.write("GET %s %s\n" % (self.path, rng or "-"))
            if self.path == "/api/models/%s/revision/main?blobs=true" % a.repo:
                return self.send(200, meta, "application/json")
            prefix = "/%s/resolve/%s/" % (a.repo, COMMIT)
            if self.path.startswith(prefix) and self.path[len(prefix):].endswith(".safetensors"):
                self.send_response(302)
                self.send_header("Location", "/cdn/" + self.path[len(prefix):])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            for p in (prefix, "/cdn/"):
                if self.path.startswith(p) and self.path[len(p):] in files:
                    return self.file(self.path[len(p):], rng)
            self.send(404, b"not found", "text/plain")

        def send(self, code, body, ctype):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def file(self, name, rng):
            if name in a.missing:
                return self.send(404, b"Entry not found", "text/plain")
            data = open(os.path.join(a.root, name), "rb").read()
            start = 0
            if rng and rng.startswith("bytes=") and rng.endswith("-") and not a.no_range:
                start = int(rng[6:-1])
            body = data[start:]
            self.send_response(206 if start else 200)
            if start:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if name in a.stall:
                self.wfile.write(body[:1])
                self.wfile.flush()
                time.sleep(600)
                return
            if cuts.get(name, 0) > 0:
                cuts[name] -= 1
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
