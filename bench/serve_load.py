#!/usr/bin/env python3
"""serve_load.py: the load client of bench/serve_vs_llama.sh (Python 3 standard library only).

Talks to any OpenAI-compatible server (seer serve, llama-server) on /v1/chat/completions, always
streaming, greedy, no penalties, with stream_options.include_usage, and prints one JSON line per test:

  serve_load.py URL load --clients N --requests R --kind text|image [--images PNG...] [--max-tokens M]
      N clients at once, each sending R requests one after the other (every prompt distinct, and every
      image: --images needs N*R files, so no cache can help). Aggregate tokens/s = all completion
      tokens (the servers' usage counts) / the wall time from the first request to the last reply.
  serve_load.py URL chat --turns T [--max-tokens M]
      one conversation with thinking on (chat_template_kwargs.enable_thinking): a first message of
      4x --words, then questions of --words; the replies of turns 1..T-1 are sent back as the client
      got them (content and reasoning_content); reports turn T.
  serve_load.py URL image2 --images PNG [--max-tokens M]
      a question about an image, then, once answered, a second question about the same image in a new
      conversation; reports the second.
  serve_load.py table RAW
      the Markdown table of bench/serve_vs_llama.sh from its raw lines.

Time to first token (TTFT) is from sending the request to the first streamed delta that carries text,
answer or reasoning (with thinking on, the reasoning comes first)."""
import argparse
import base64
import http.client
import json
import random
import statistics
import sys
import threading
import time
import urllib.parse

WORDS = ("river stone lantern copper meadow signal harbor orbit velvet pencil quartz ember canyon "
         "violet marble thunder glacier saddle compass fabric spiral willow beacon garnet ripple "
         "falcon timber mosaic prism cedar tunnel anchor").split()


def words(seed, n):
    """n pseudo-random words from seed: the same prompt for both servers, a new one per request."""
    rnd = random.Random(seed)
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def data_uri(path):
    with open(path, "rb") as f:
        return "data:image/png;base64," + base64.b64encode(f.read()).decode()


def image_message(uri, question):
    # The image first: a prefix cache keyed after the message's media covers it whatever follows.
    return {"role": "user", "content": [{"type": "image_url", "image_url": {"url": uri}},
                                        {"type": "text", "text": question}]}


def chat(url, messages, max_tokens, thinking=False):
    """One streamed request: dict with ttft, seconds, content, reasoning and the usage counts."""
    u = urllib.parse.urlparse(url)
    body = json.dumps({"messages": messages, "stream": True, "stream_options": {"include_usage": True},
                       "max_tokens": max_tokens, "temperature": 0, "presence_penalty": 0,
                       "chat_template_kwargs": {"enable_thinking": thinking}}).encode()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=1800)
    t0 = time.monotonic()
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError("HTTP %d: %s" % (resp.status, resp.read()[:300]))
    out = {"ttft": None, "content": "", "reasoning": "", "usage": None}
    for line in resp:
        line = line.strip()
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            break
        ev = json.loads(data)
        if ev.get("usage"):
            out["usage"] = ev["usage"]
        for ch in ev.get("choices") or []:
            d = ch.get("delta") or {}
            c, r = d.get("content") or "", d.get("reasoning_content") or ""
            if (c or r) and out["ttft"] is None:
                out["ttft"] = time.monotonic() - t0
            out["content"] += c
            out["reasoning"] += r
    out["seconds"] = time.monotonic() - t0
    conn.close()
    if out["usage"] is None:
        raise RuntimeError("no usage chunk in the stream")
    return out


def result(test, reqs, seconds, **extra):
    u = [r["usage"] for r in reqs]
    cached = [(x.get("prompt_tokens_details") or {}).get("cached_tokens", 0) or 0 for x in u]
    return dict(test=test, requests=len(reqs), seconds=seconds,
                completion_tokens=sum(x["completion_tokens"] for x in u),
                prompt_tokens=[x["prompt_tokens"] for x in u], cached_tokens=cached,
                ttft=[r["ttft"] for r in reqs], **extra)


def run_load(a):
    n, per = a.clients, a.requests
    if a.kind == "image" and len(a.images) < n * per:
        sys.exit("serve_load.py: load --kind image needs %d images, got %d" % (n * per, len(a.images)))
    uris = [data_uri(p) for p in a.images[:n * per]] if a.kind == "image" else []
    reqs, errors, lock = [], [], threading.Lock()

    def client(c):
        for k in range(per):
            i = c * per + k
            q = "Request %d of %d. %s. Summarise it." % (i, n * per, words(1000 * n + i, a.words if a.kind == "text" else 8))
            msg = image_message(uris[i], q) if uris else {"role": "user", "content": q}
            try:
                r = chat(a.url, [msg], a.max_tokens)
            except Exception as e:  # one failed request fails the test, after the others end
                with lock:
                    errors.append(str(e))
                return
            with lock:
                reqs.append(r)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(n)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit("serve_load.py: %d request(s) failed, the first: %s" % (len(errors), errors[0]))
    return result("%s x%d" % (a.kind, n), reqs, time.monotonic() - t0, clients=n)


def run_chat(a):
    messages, r = [], None
    for t in range(a.turns):
        # Turn 1 brings a document (4x the words), the later turns short questions, as chats do.
        n = a.words * (4 if t == 0 else 1)
        messages.append({"role": "user", "content": "Turn %d. %s. What do you make of it?" % (t + 1, words(77 + t, n))})
        r = chat(a.url, messages, a.max_tokens, thinking=True)
        # A random model's reply may hold U+0000, which seer serve streams but refuses in a request
        # (jansson without JSON_ALLOW_NUL): dropped from what is sent back, for both servers alike.
        messages.append({"role": "assistant", "content": r["content"].replace("\0", ""),
                         "reasoning_content": r["reasoning"].replace("\0", "")})
    return result("chat turn %d" % a.turns, [r], r["seconds"])


def run_image2(a):
    uri = data_uri(a.images[0])
    chat(a.url, [image_message(uri, "What is in this picture?")], a.max_tokens)
    r = chat(a.url, [image_message(uri, "Which colours does it use?")], a.max_tokens)
    return result("same image", [r], r["seconds"])


def table(raw):
    """raw: one line per test, 'engine<TAB>load1<TAB>json'; medians over rounds."""
    rows = []
    for line in open(raw):
        if line.strip():
            eng, load, js = line.rstrip("\n").split("\t", 2)
            rows.append((eng, float(load), json.loads(js)))
    # the load tests by kind and clients, then the cache tests, whatever order the raw files had
    def order(t):
        kind, _, n = t.partition(" x")
        return (0, kind != "text", int(n)) if n else (1, not t.startswith("chat"), 0)

    tests = sorted({r["test"] for _, _, r in rows}, key=order)
    engines = ["seer", "llama"]
    if any(e == "seer-nocache" for e, _, _ in rows):
        engines.append("seer-nocache")

    def med(eng, test, f):
        v = [f(r) for e, _, r in rows if e == eng and r["test"] == test]
        v = [x for x in v if x is not None]
        return statistics.median(v) if v else None

    def ttft(r):
        return statistics.median(r["ttft"])

    def tps(r):  # the load tests' aggregate (a cache test's one reply is timed for its TTFT only)
        return r["completion_tokens"] / r["seconds"] if "clients" in r else None

    fmt = lambda x, p: "-" if x is None else ("%." + str(p) + "f") % x
    ratio = lambda a, b, p: "-" if a is None or b is None else "%.2f" % (a / b if p else b / a)
    head = "| test | seer tok/s | llama tok/s | seer/llama tok/s | seer TTFT s | llama TTFT s | TTFT llama/seer |"
    head += " seer no-cache TTFT s | no-cache/seer |" if "seer-nocache" in engines else ""
    head += " tokens (prompt, cached, generated: seer; llama) | rounds | load 1-min |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for t in tests:
        a, b = med("seer", t, tps), med("llama", t, tps)
        ta, tb = med("seer", t, ttft), med("llama", t, ttft)
        line = "| %s | %s | %s | %s | %s | %s | %s |" % (t, fmt(a, 1), fmt(b, 1), ratio(a, b, True),
                                                         fmt(ta, 2), fmt(tb, 2), ratio(ta, tb, False))
        if "seer-nocache" in engines:
            tn = med("seer-nocache", t, ttft)
            line += " %s | %s |" % (fmt(tn, 2), ratio(ta, tn, False))
        toks = []
        for e in ("seer", "llama"):
            r = next((r for x, _, r in rows if x == e and r["test"] == t), None)
            toks.append("-" if r is None else "%d, %d, %d" % (statistics.median(r["prompt_tokens"]),
                        statistics.median(r["cached_tokens"]), r["completion_tokens"] // r["requests"]))
        loads = [l for _, l, r in rows if r["test"] == t]
        n = len([1 for e, _, r in rows if e == "seer" and r["test"] == t])
        print(line + " %s | %d | %.1f-%.1f |" % ("; ".join(toks), n, min(loads), max(loads)))
    # The scaling goal: the aggregate at the most clients over one client's, per server.
    def scale(e, kind, n):
        hi, one = med(e, "%s x%d" % (kind, n), tps), med(e, kind + " x1", tps)
        return hi / one if hi and one else None

    for kind in ("text", "image"):
        ns = sorted(int(t.split(" x")[1]) for t in tests if t.startswith(kind + " x"))
        if len(ns) > 1 and ns[0] == 1:
            print("\n%s: aggregate tokens/s at %d clients / at 1 client: seer %s, llama %s"
                  % (kind, ns[-1], fmt(scale("seer", kind, ns[-1]), 2), fmt(scale("llama", kind, ns[-1]), 2)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "table":
        return table(sys.argv[2])
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("url")
    p.add_argument("mode", choices=["load", "chat", "image2"])
    p.add_argument("--clients", type=int, default=1)
    p.add_argument("--requests", type=int, default=1)
    p.add_argument("--kind", choices=["text", "image"], default="text")
    p.add_argument("--images", nargs="*", default=[])
    p.add_argument("--turns", type=int, default=5)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--words", type=int, default=40, help="words in a text prompt and in each chat turn")
    a = p.parse_args()
    r = {"load": run_load, "chat": run_chat, "image2": run_image2}[a.mode](a)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
