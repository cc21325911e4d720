#!/usr/bin/env python3
"""End-to-end tests of `seer serve` (issue 20, docs/SERVING.md) as a TAP program: real servers on
loopback ports, on a tiny random model from tests/reference/gen_tiny.py, driven over HTTP the way
clients drive them. Greedy requests (temperature 0) make answers comparable: a streamed answer
against the same answer unstreamed, a cached prefix against a server without a cache, a batched
request against the same request served alone. Hostile requests must get their 4xx, and the
server must keep serving after each. The binary is $SEER_BUILD_DIR/seer (default build/seer)."""
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_lib as lib  # noqa: E402
from serve_lib import (ROOT, SEER, TMP, Files, Server, data_uri, image_part, make_image, metric, ok,  # noqa: E402
                       png_bomb, section, skip, sse, start_stream, user)


# ---- 1. endpoints -------------------------------------------------------------------------------

def endpoints():
    s = Server(wait=False)
    first = None
    end = time.time() + 30
    while first is None and time.time() < end:
        try:
            first = s.request("GET", "/health", timeout=5)[0]
        except OSError:
            time.sleep(0.005)
    if first == 503:
        ok(True, "/health is 503 while the model loads")
    else:
        skip("/health is 503 while the model loads", "loading finished before the first poll (%s)" % first)
    s.wait_ready()
    ok(s.request("GET", "/health")[0] == 200, "/health is 200 when ready")
    SHARED["main"] = s

    st, _, raw = s.request("GET", "/v1/models")
    models = json.loads(raw)
    m = models["data"][0] if st == 200 and models.get("data") else {}
    ok(st == 200 and models.get("object") == "list" and m.get("object") == "model" and m.get("id") == "model-f32.gguf"
       and m.get("input_modalities") == ["text", "image", "video"] and isinstance(m.get("created"), int),
       "/v1/models: the model, with input modalities text, image, video", models)

    st, before = s.metrics()
    msgs = user("Tell me about the sea.")
    st1, r = s.chat(msgs, max_tokens=6)
    ch = r["choices"][0] if st1 == 200 else {}
    u = r.get("usage", {}) if st1 == 200 else {}
    ok(st1 == 200 and r["object"] == "chat.completion" and ch["message"]["role"] == "assistant"
       and isinstance(ch["message"]["content"], str), "chat: 200 chat.completion with an assistant message", r)
    ok(ch.get("finish_reason") == "length" and u.get("completion_tokens") == 6
       and u.get("total_tokens") == u.get("prompt_tokens", 0) + 6,
       "chat usage: completion_tokens == max_tokens 6 with finish_reason length", r)
    ok(u.get("prompt_tokens", 0) >= u.get("prompt_tokens_details", {}).get("cached_tokens", -1) >= 0,
       "chat usage: prompt_tokens >= cached_tokens >= 0", u)

    st2, _, raw = s.request("POST", "/v1/chat/completions",
                            {"messages": msgs, "temperature": 0, "max_tokens": 6, "stream": True})
    data, well_formed = sse(raw)
    chunks = [json.loads(d) for d in data[:-1]] if data and data[-1] == "[DONE]" else []
    ok(st2 == 200 and well_formed and chunks and all(c["object"] == "chat.completion.chunk" for c in chunks),
       "stream: every event is 'data: ' JSON of chat.completion.chunk, the last 'data: [DONE]'", raw[:600])
    ok(chunks and chunks[0]["choices"][0]["delta"].get("role") == "assistant", "stream: role in the first delta")
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    ok(text == ch["message"]["content"], "stream: the deltas joined equal the unstreamed greedy answer",
       "%r vs %r" % (text, ch["message"].get("content")))
    ok(chunks and chunks[-1]["choices"][0]["finish_reason"] == "length" and not any("usage" in c and c["usage"] for c in chunks),
       "stream without include_usage: finish_reason length in the last chunk, no usage chunk", chunks[-2:])
    st3, _, raw = s.request("POST", "/v1/chat/completions",
                            {"messages": msgs, "temperature": 0, "max_tokens": 6, "stream": True,
                             "stream_options": {"include_usage": True}})
    data, _ = sse(raw)
    last = json.loads(data[-2]) if len(data) >= 2 and data[-1] == "[DONE]" else {}
    ok(st3 == 200 and last.get("choices") == [] and last.get("usage", {}).get("completion_tokens") == 6,
       "stream with include_usage: a usage chunk with choices [] before [DONE]", data[-2:])

    st4, r = s.post("/v1/completions", {"prompt": "Once upon a time", "temperature": 0, "max_tokens": 5})
    ok(st4 == 200 and r["object"] == "text_completion" and isinstance(r["choices"][0]["text"], str)
       and r["choices"][0]["finish_reason"] == "length" and r["usage"]["completion_tokens"] == 5,
       "/v1/completions: text_completion, 5 tokens, finish_reason length", r)
    st5, _, raw = s.request("POST", "/v1/completions",
                            {"prompt": "Once upon a time", "temperature": 0, "max_tokens": 5, "stream": True})
    data, well_formed = sse(raw)
    streamed = "".join(json.loads(d)["choices"][0]["text"] for d in data[:-1] if json.loads(d)["choices"])
    ok(st5 == 200 and well_formed and data[-1] == "[DONE]" and streamed == r["choices"][0]["text"],
       "/v1/completions stream: the chunks joined equal the unstreamed text", (streamed, r))

    # logprobs: one entry per generated token, its bytes those of the answer (no reasoning here) and,
    # greedy without penalties, the token the most probable of its own top_logprobs
    body = {"messages": msgs, "temperature": 0, "presence_penalty": 0, "max_tokens": 6, "logprobs": True,
            "top_logprobs": 3}
    st, r = s.post("/v1/chat/completions", body)
    lp = (r["choices"][0].get("logprobs") or {}).get("content") if st == 200 else None
    good = isinstance(lp, list) and len(lp) == r["usage"]["completion_tokens"]
    for e in lp if good else []:
        tops = e.get("top_logprobs") or []
        good &= (e["logprob"] <= 0 and bytes(e["bytes"]).decode("utf-8", "replace") == e["token"] and len(tops) == 3
                 and tops[0]["bytes"] == e["bytes"] and abs(tops[0]["logprob"] - e["logprob"]) < 1e-6
                 and all(a["logprob"] >= b["logprob"] for a, b in zip(tops, tops[1:])))
    joined = bytes(b for e in lp for b in e["bytes"]).decode("utf-8", "replace") if good else None
    ok(good and joined == r["choices"][0]["message"]["content"],
       "logprobs true, top_logprobs 3: one entry per token, each greedy pick first among its 3 alternatives "
       "(sorted, <= 0), the tokens' bytes joined the answer", r)
    st2, _, raw = s.request("POST", "/v1/chat/completions", dict(body, stream=True))
    data, _ = sse(raw)
    chunks = [json.loads(d) for d in data[:-1]] if data and data[-1] == "[DONE]" else []
    streamed = [c["choices"][0]["logprobs"] for c in chunks if c["choices"] and c["choices"][0].get("logprobs")]
    ok(st2 == 200 and good and len(streamed) == 1 and streamed[0]["content"] == lp
       and chunks[-1]["choices"][0]["logprobs"] == streamed[0],
       "logprobs streamed: the whole reply's in the last chunk, equal to the unstreamed ones", streamed)
    st3, r = s.post("/v1/completions", {"prompt": "Once upon a time", "temperature": 0, "presence_penalty": 0,
                                        "max_tokens": 5, "logprobs": 2})
    c = r["choices"][0].get("logprobs") or {} if st3 == 200 else {}
    toks, lps, alts, offs = (c.get(k) or [] for k in ("tokens", "token_logprobs", "top_logprobs", "text_offset"))
    text = r["choices"][0]["text"] if st3 == 200 else ""
    ok(st3 == 200 and len(toks) == len(lps) == len(alts) == len(offs) == r["usage"]["completion_tokens"]
       and all(x <= 0 for x in lps) and all(1 <= len(a) <= 2 and abs(max(a.values()) - x) < 1e-6 for a, x in zip(alts, lps))
       and offs == sorted(offs) and offs[:1] == [0]
       and (any("\ufffd" in t for t in toks) or "".join(toks) == text),
       "/v1/completions logprobs 2: tokens (joined, the text), token_logprobs, top_logprobs (2 each, two alike "
       "written as one key; the pick's the largest) and text_offset for every token", r)

    full = s.answer(user("go on and on"), max_tokens=12)[0]
    # a stop string from the middle of the greedy answer ends it there; "zzz" never appears
    mid = re.search(r"[A-Za-z0-9]{2}", full[2:])
    for stop in ([mid.group(0)] if mid else []) + ["zzz"]:
        body = {"messages": user("go on and on"), "temperature": 0, "max_tokens": 12, "stop": [stop]}
        st, r = s.post("/v1/chat/completions", body)
        st2, _, raw = s.request("POST", "/v1/chat/completions", dict(body, stream=True))
        data, _ = sse(raw)
        streamed = "".join(json.loads(d)["choices"][0]["delta"].get("content") or "" for d in data[:-1]
                           if json.loads(d)["choices"])
        content = r["choices"][0]["message"]["content"] if st == 200 else None
        ok(st == 200 and st2 == 200 and content == full.split(stop)[0] and streamed == content
           and r["choices"][0]["finish_reason"] == ("stop" if stop in full else "length"),
           "stop %r: the answer up to it, the same streamed and not" % stop, (full, content, streamed))
    if not mid:
        skip("stop string from the answer", "the greedy answer %r has no two ASCII letters in a row" % full)

    # LONG's natural length: the replies that SIGTERM and leaving clients must cut short
    st, r = s.chat(user(LONG), max_tokens=1500)
    SHARED["long"] = r["usage"]["completion_tokens"] if st == 200 else 0
    print("# %r: %d tokens before the end of its turn" % (LONG, SHARED["long"]), flush=True)

    sampled = [s.answer(user("Pick a word."), temperature=1.0, max_tokens=8)[0] for _ in range(4)]
    seeded = [s.answer(user("Pick a word."), temperature=1.0, max_tokens=8, seed=7)[0] for _ in range(2)]
    ok(seeded[0] == seeded[1], "sampling with a request's seed repeats", seeded)
    ok(len(set(sampled)) > 1, "sampling without a seed varies between requests", sampled)

    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    kept = []
    for i in range(3):  # nginx keeps upstream connections alive: requests one after another on one
        c.request("POST", "/v1/chat/completions", json.dumps({"messages": user("kept %d" % i), "max_tokens": 2}),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        kept.append((r.status, json.loads(r.read())["object"]))
    c.close()
    ok(kept == [(200, "chat.completion")] * 3, "keep-alive: three requests on one connection", kept)

    st, after = s.metrics()
    lines = [ln for ln in after.splitlines() if ln and not ln.startswith("#")]
    bad = [ln for ln in lines if not re.match(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_]\w*="[^"]*"(,[a-zA-Z_]\w*="[^"]*")*\})? '
                                             r'[-+]?([0-9.]+([eE][-+]?\d+)?|Inf|NaN)$', ln)]
    ok(st == 200 and lines and not bad, "/metrics: every sample line is 'name{labels} value'", bad or after[:300])
    moved = {k: (metric(before, k) or 0, metric(after, k) or 0) for k in
             ('seer_requests_total{status="2xx"}', "seer_tokens_generated_total", "seer_prompt_tokens_total")}
    ok(all(b < a for b, a in moved.values()) and moved["seer_tokens_generated_total"][1] - moved["seer_tokens_generated_total"][0] >= 6 * 3 + 5 * 2,
       "/metrics: requests, prompt and generated token counters moved with the requests", moved)


# ---- 2. images and videos -----------------------------------------------------------------------

def images():
    media = os.path.join(TMP, "media")
    os.makedirs(media, exist_ok=True)
    png, jpg = make_image("PNG"), make_image("JPEG", seed=1)
    with open(os.path.join(media, "a.png"), "wb") as f:
        f.write(png)
    outside = os.path.join(TMP, "outside.png")
    with open(outside, "wb") as f:
        f.write(png)
    os.symlink(outside, os.path.join(media, "link.png"))
    s = Server("--media-path", media)
    q = "What is in this picture?"
    st, r = s.chat(user(q, image_part(data_uri("image/png", png))))
    ok(st == 200, "image: a data: URI PNG is 200", r)
    by_data = r["choices"][0]["message"]["content"] if st == 200 else None
    st, r = s.chat(user(q, image_part(data_uri("image/jpeg", jpg))))
    ok(st == 200 and r["usage"]["prompt_tokens"] > 20, "image: a data: URI JPEG is 200", r)
    st, r = s.chat(user(q, image_part("file://" + os.path.join(media, "a.png"))))
    ok(st == 200 and r["choices"][0]["message"]["content"] == by_data,
       "image: file:// under --media-path is 200, the same answer as the same bytes as a data: URI", r)
    for name, url in (("../", "file://%s/../outside.png" % media), ("a symlink", "file://" + os.path.join(media, "link.png")),
                      ("an absolute path", "file://" + outside)):
        st, r = s.chat(user(q, image_part(url)))
        ok(st == 400 and r["error"]["param"], "image: file:// escaping --media-path through %s is 400" % name, r)
    st, r = s.chat(user(q, image_part("http://127.0.0.1:1/a.png")))
    ok(st == 400, "image: an http URL without --allow-remote-media is 400", r)
    st, r = s.chat(user(q, image_part("data:image/png;base64,!!!not*base64!!!")))
    ok(st == 400, "image: bad base64 is 400", r)
    st, r = s.chat(user(q, image_part(data_uri("image/png", os.urandom(3000)))))
    ok(st == 422, "image: bytes that decode to no image are 422", r)
    for w, h in ((100000, 100000), (20000, 20000)):  # a few KiB that claim gigabytes of pixels
        st, r = s.chat(user(q, image_part(data_uri("image/png", png_bomb(w, h)))))
        ok(st in (400, 413, 422), "image: a %dx%d PNG bomb is 4xx (%s)" % (w, h, st), r)
    ok(s.serving(), "image: the server still serves after the bad images")

    # remote media from a local http.server, within and past --max-media-bytes 1 (MiB)
    with open(os.path.join(media, "big.png"), "wb") as f:
        f.write(png + os.urandom(3 << 20))
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: Files(*a, directory=media))
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        r_ = Server("--allow-remote-media", "--max-media-bytes", "1")
        base = "http://127.0.0.1:%d/" % web.server_address[1]
        st, r = r_.chat(user(q, image_part(base + "a.png")))
        ok(st == 200 and r["choices"][0]["message"]["content"] == by_data,
           "image: an http URL with --allow-remote-media is 200, the same answer as its bytes", r)
        st, r = r_.chat(user(q, image_part(base + "big.png")))
        ok(st == 413, "image: an http URL past --max-media-bytes is 413", r)
        st, r = r_.chat(user(q, image_part(base + "missing.png")))
        ok(st in (415, 422), "image: an http URL answering 404 is 422", r)
        ok(r_.serving(), "image: the remote-media server still serves")
        r_.stop()
    finally:
        web.shutdown()

    text_dir = os.path.join(TMP, "text-only")
    os.makedirs(text_dir, exist_ok=True)
    shutil.copy(lib.MODEL, text_dir)
    t = Server(model=os.path.join(text_dir, "model-f32.gguf"))
    st, _, raw = t.request("GET", "/v1/models")
    ok(json.loads(raw)["data"][0]["input_modalities"] == ["text"], "text-only model: /v1/models lists text only", raw)
    st, r = t.chat(user(q, image_part(data_uri("image/png", png))))
    ok(st == 400, "text-only model: an image is 400", r)
    ok(t.serving(), "text-only model: still serves text")
    t.stop()

    if not shutil.which("ffmpeg"):
        for n in range(4):
            skip("video %d" % n, "no ffmpeg to make a test video")
        return
    video = os.path.join(media, "clip.mp4")
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10", "-t", "2",
                    "-pix_fmt", "yuv420p", video], check=True)
    with open(video, "rb") as f:
        vbytes = f.read()
    st, r = s.chat(user("What happens?", {"type": "video_url", "video_url": {"url": data_uri("video/mp4", vbytes)}}))
    ok(st == 200, "video: video_url with a data: URI is 200", r)
    counts = {}
    for fps in (1, 4):
        st, r = s.chat(user("What happens?", {"type": "video", "video": "file://" + video, "fps": fps}))
        counts[fps] = r["usage"]["prompt_tokens"] if st == 200 else None
    ok(None not in counts.values() and counts[1] < counts[4],
       "video: Qwen's {type: video} file:// under --media-path is 200, and fps 4 makes a longer prompt than fps 1", counts)
    st, r = s.chat(user("What happens?", {"type": "video", "video": "file://" + video, "fps": 4, "max_frames": 2}))
    ok(st == 200 and r["usage"]["prompt_tokens"] < counts[4], "video: max_frames 2 shortens the fps 4 prompt", r)
    st, r = s.chat(user("What happens?", {"type": "video_url", "video_url": {"url": data_uri("video/mp4", os.urandom(4000))}}))
    ok(st == 422 and s.serving(), "video: bytes that are no video are 422, and the server still serves", r)
    s.stop()


# ---- 3. the prefix cache ------------------------------------------------------------------------

def prefix_cache():
    s = SHARED["main"]
    nocache = Server("--cache-ram", "0")
    msgs = user("Describe a quiet morning in the mountains, please, in some detail.")
    a1, u1 = s.answer(msgs, max_tokens=8)
    a2, u2 = s.answer(msgs, max_tokens=8)
    ok(a1 == a2 and u2["prompt_tokens_details"]["cached_tokens"] > 0,
       "cache: the same request twice, the same answer, the second with cached_tokens > 0", (a1, a2, u2))

    conv, ref, details = [], [], []
    for k in range(5):
        conv.append({"role": "user", "content": "Turn %d: and what about the number %d?" % (k + 1, 7 * k + 3)})
        a, u = s.answer(conv, max_tokens=6)
        b, v = nocache.answer(conv, max_tokens=6)
        details.append((k + 1, u["prompt_tokens_details"]["cached_tokens"], u["prompt_tokens"], a, b))
        ref.append(a == b and u["prompt_tokens"] == v["prompt_tokens"])
        conv.append({"role": "assistant", "content": a})
    ok(all(ref), "cache: every turn of a 5-turn chat equals the same chat on a server without a cache "
       "(content and prompt_tokens)", details)
    ok(all(d[1] > 0 and d[1] <= d[2] for d in details[1:]), "cache: turns 2-5 have 0 < cached_tokens <= prompt_tokens", details)

    # thinking on: the template drops the reasoning of earlier turns, so later prompts rewrite them
    conv, details = [], []
    for k in range(5):
        conv.append({"role": "user", "content": "Think about turn %d." % (k + 1)})
        st, a = s.chat(conv, max_tokens=10, chat_template_kwargs={"enable_thinking": True})
        st2, b = nocache.chat(conv, max_tokens=10, chat_template_kwargs={"enable_thinking": True})
        ma, mb = a["choices"][0]["message"], b["choices"][0]["message"]
        details.append((k + 1, ma == mb, a["usage"]["prompt_tokens_details"]["cached_tokens"], ma))
        conv.append({"role": "assistant", "content": ma["content"], "reasoning_content": ma.get("reasoning_content")})
    ok(all(d[1] for d in details) and all(d[2] > 0 for d in details[1:]),
       "cache with thinking on: 5 turns equal the uncached server's (content and reasoning_content), turns 2-5 cached",
       details)
    on, off = (s.chat(user("Think about turn 1."), max_tokens=10, chat_template_kwargs={"enable_thinking": t})[1]
               for t in (True, False))
    ok(on["choices"][0]["message"].get("reasoning_content") and on["usage"]["prompt_tokens"] != off["usage"]["prompt_tokens"],
       "enable_thinking: true opens a think block (another prompt), the reply's reasoning apart as reasoning_content",
       (on, off))

    png = make_image("PNG", (96, 64), seed=7)
    img = image_part(data_uri("image/png", png))
    a, u1 = s.answer(user("What colour dominates?", img))
    b, u2 = s.answer(user("How many objects are there?", img))
    c, _ = nocache.answer(user("How many objects are there?", img))
    ok(u2["prompt_tokens_details"]["cached_tokens"] > 0 and b == c,
       "cache: a second question about the same image in a new chat has cached_tokens > 0 and the uncached answer",
       (u1, u2, b, c))

    # a system message, two images in the first turn, an image again in later turns
    conv = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": [img, image_part(data_uri("image/png", make_image("PNG", (64, 64), 4))),
                                         {"type": "text", "text": "Two pictures."}]}]
    details = []
    for k in range(4):
        a, u = s.answer(conv, max_tokens=6)
        b, v = nocache.answer(conv, max_tokens=6)
        details.append((k + 1, a == b, u["prompt_tokens"], v["prompt_tokens"], u["prompt_tokens_details"]["cached_tokens"]))
        conv += [{"role": "assistant", "content": a},
                 {"role": "user", "content": [img, {"type": "text", "text": "Again %d?" % k}] if k % 2 else "Text %d." % k}]
    ok(all(d[1] and d[2] == d[3] for d in details) and all(d[4] > 0 for d in details[1:]),
       "cache: a chat with images in several turns equals the uncached server's, turns 2-4 cached", details)

    # a 1 MiB cache: entries evicted least recently used, the budget kept, the answers unchanged
    small = Server("--cache-ram", "1")
    convs, bad = [[] for _ in range(8)], []
    for turn in range(3):
        for i, cv in enumerate(convs):
            cv.append({"role": "user", "content": "Chat %d, turn %d: %s" % (i, turn, "pad " * 20)})
            a, _ = small.answer(cv, max_tokens=6)
            b, _ = nocache.answer(cv, max_tokens=6)
            bad += [] if a == b else [(i, turn, a, b)]
            cv.append({"role": "assistant", "content": a})
    text = small.metrics()[1]
    held, hits = metric(text, "seer_cache_bytes"), metric(text, "seer_cache_hits_total")
    ok(not bad and held is not None and 0 < held <= 1 << 20 and hits > 0,
       "cache: --cache-ram 1 holds %s bytes <= 1 MiB, %s hits, answers equal the uncached server's" % (held, hits), bad)
    small.stop()
    nocache.stop()

    # images fed while other slots decode
    prompts = [user("Concurrent question number %d about rivers." % i) for i in range(4)]
    prompts += [user("Concurrent image %d?" % i, image_part(data_uri("image/png", make_image("PNG", (64 + 16 * i, 48), i))))
                for i in range(4)]
    alone = [s.answer(p, max_tokens=12)[0] for p in prompts]
    with ThreadPoolExecutor(8) as ex:
        together = list(ex.map(lambda p: s.answer(p, max_tokens=12)[0], prompts))
    ok(together == alone, "batching: 8 concurrent requests (4 with images) on -np 4 each equal the same request alone",
       list(zip(alone, together)))


# ---- 4. errors and hostile clients ---------------------------------------------------------------

def leave_early(s, stream):
    """Starts the LONG reply and leaves once it began: (how far the cancelled counter moved, tokens
    generated for it, the status and seconds of the next request)."""
    before = s.metrics()[1]
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    c.request("POST", "/v1/chat/completions", json.dumps({"messages": user(LONG), "max_tokens": 1500, "stream": stream,
                                                          "temperature": 0}), {"Content-Type": "application/json"})
    if stream:
        c.getresponse().readline()
    else:  # leave once a slot has it: the whole reply takes ~0.15 s here, so a fixed wait missed it
        end = time.time() + 5
        while time.time() < end and metric(s.metrics()[1], "seer_slots_busy") == 0:
            pass
    c.sock.shutdown(socket.SHUT_RDWR)
    c.close()
    name = 'seer_requests_total{status="cancelled"}'
    end = time.time() + 10
    while time.time() < end:  # the engine's counters move when the slot is freed
        after = s.metrics()[1]
        if metric(after, name) > metric(before, name) and metric(after, "seer_slots_busy") == 0:
            break
        time.sleep(0.05)
    generated = metric(after, "seer_tokens_generated_total") - metric(before, "seer_tokens_generated_total")
    t0 = time.time()
    st = s.chat(user("next"), max_tokens=4)[0]
    return metric(after, name) - metric(before, name), generated, st, time.time() - t0


def errors():
    s = SHARED["main"]

    def check(st, want, name, r):
        ok(st == want and s.serving(), "%s is %d, and the server still serves" % (name, want), r)

    st, _, raw = s.request("POST", "/v1/chat/completions", b'{"messages": [{"role": "user", "content": "hi"}')
    check(st, 400, "malformed JSON", raw)
    err = json.loads(raw).get("error", {}) if st == 400 else {}
    ok(err.get("type") == "invalid_request_error" and err.get("message"), "malformed JSON: OpenAI's error object", raw)
    with open(s.log_path) as f:
        logged = f.read()
    ok(re.search(r"^seer serve: 200 /v1/chat/completions [\d.]+ s, first token [\d.]+ s, prompt \d+ \(cached \d+\), "
                 r"generated \d+$", logged, re.M) and
       re.search(r"^seer serve: 400 /v1/chat/completions [\d.]+ s: malformed JSON", logged, re.M) and
       not re.search(r"^seer serve: \d+ /health", logged, re.M),
       "the log: a line per request (status, route, time, tokens; an error's message), /health probes only with -v",
       logged[-600:])
    st, _, raw = s.request("POST", "/v1/chat/completions", b"[" * 200000)
    check(st, 400, "JSON nested 200,000 deep", raw[:300])
    st, r = s.post("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}] * 10000, "max_tokens": 1})
    check(st, 400, "10,000 messages", r)
    st, r = s.chat(user("hi"), max_tokens="many")
    check(st, 400, "a field of the wrong type", r)
    st, _, raw = s.request("GET", "/v1/nothing-here")
    check(st, 404, "an unknown path", raw)
    st, _, raw = s.request("GET", "/v1/chat/completions")
    check(st, 405, "GET on the chat endpoint", raw)
    st, _, raw = s.request("DELETE", "/health")
    check(st, 405, "DELETE /health", raw)
    st, r = s.chat([{"role": "user", "content": "word " * 3000}])
    check(st, 400, "a prompt longer than a slot's context", r)
    st, hdr, raw = s.request("POST", "/v1/chat/completions", {"messages": user("word " * 3000), "stream": True})
    ok(st == 400 and hdr.get("Content-Type") == "application/json" and b"context_length_exceeded" in raw,
       "a streamed prompt longer than the context is a 400 JSON error, not a 200 stream", (st, hdr, raw[:300]))

    small = Server("--max-body", "1", "-np", "1")
    st, _, raw = small.request("POST", "/v1/chat/completions", b'{"messages": "' + b"x" * (2 << 20) + b'"}')
    ok(st == 413 and small.serving(), "a body over --max-body 1 MiB is 413, and the server still serves", raw)
    c = http.client.HTTPConnection("127.0.0.1", small.port, timeout=30)  # chunked: no Content-Length to refuse early
    c.request("POST", "/v1/chat/completions", iter([b"x" * (1 << 19)] * 5), {"Content-Type": "application/json"},
              encode_chunked=True)
    st = c.getresponse().status
    c.close()
    ok(st == 413 and small.serving(), "a chunked body over --max-body is 413, and the server still serves", st)
    small.stop()

    key = Server("--api-key", "sekrit", "-np", "1")
    st, _ = key.chat(user("hi"))
    st2, _ = key.post("/v1/chat/completions", {"messages": user("hi")}, {"Authorization": "Bearer wrong"})
    st3, _ = key.post("/v1/chat/completions", {"messages": user("hi"), "max_tokens": 2}, {"Authorization": "Bearer sekrit"})
    st4 = key.request("GET", "/health")[0]
    st5 = key.request("GET", "/v1/models")[0]
    ok((st, st2, st3, st4, st5) == (401, 401, 200, 200, 401),
       "--api-key: missing and wrong keys are 401, the right one 200, /health open", (st, st2, st3, st4, st5))
    key.stop()

    # a client sending its request a byte a second holds one connection, never the others
    served, stop = [], threading.Event()

    def slow():
        body = b'{"messages": [{"role": "user", "content": "slow"}], "max_tokens": 2}'
        head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
        with socket.create_connection(("127.0.0.1", s.port), timeout=10) as c:
            for b in head + body:
                if stop.is_set():
                    return
                c.sendall(bytes([b]))
                time.sleep(1)
    th = threading.Thread(target=slow, daemon=True)
    th.start()
    t0 = time.time()
    while time.time() - t0 < 4:
        served.append(s.chat(user("meanwhile"), max_tokens=2)[0])
    stop.set()
    th.join()
    ok(len(served) >= 2 and set(served) == {200}, "a client sending a byte a second: other requests served meanwhile",
       served)

    # 800 connections that each sent half a request line (a slowloris flood; 800 stays within a
    # default open-file limit of 1024 on both sides): in libmicrohttpd's event mode they cost the server
    # sockets, no threads, so probes and generations go on
    held, st, chat = [], None, None
    try:
        for _ in range(800):
            held.append(socket.create_connection(("127.0.0.1", s.port), timeout=5))
            held[-1].sendall(b"GET /hea")
        st = s.request("GET", "/health", timeout=3)[0]
        chat = s.chat(user("flooded"), max_tokens=2)[0]
    except OSError as e:
        st = st or repr(e)
    for h in held:
        h.close()
    ok(st == 200 and chat == 200, "800 idle half-sent requests: /health still answers (%s), and a chat (%s)" % (st, chat))
    ok(s.serving(), "... and once they close, the server serves again")

    q = Server("-np", "1", "--max-queue", "1")
    for stream in (True, False):
        name = "a client leaving %s" % ("mid-stream" if stream else "an unstreamed request")
        if SHARED["long"] < 100:
            skip(name, "the greedy reply to %r ends after %d tokens: too soon to leave it" % (LONG, SHARED["long"]))
            continue
        moved, generated, st, took = leave_early(q, stream)
        ok(moved == 1 and generated < SHARED["long"] and st == 200 and took < 5,
           "%s: counted cancelled, its reply stopped after %d of %d tokens, the slot free (next request in %.1f s)"
           % (name, generated, SHARED["long"], took), (moved, st))

    with ThreadPoolExecutor(6) as ex:
        sts = list(ex.map(lambda i: q.chat(user("long %d" % i), max_tokens=40)[0], range(6)))
    ok(503 in sts and 200 in sts and set(sts) <= {200, 503},
       "a full queue (-np 1 --max-queue 1, 6 at once) is 503 for the excess, 200 for the rest", sts)
    ok(q.serving(), "... and the server still serves after")
    q.stop()


# ---- 5. load ------------------------------------------------------------------------------------

LOAD_TOTAL = int(os.environ.get("SEER_SERVE_LOAD", "2000"))


def load():
    s = Server("-np", "4")
    prompts = [(user("Load prompt %d: %s" % (i, "abc " * i)), 4 + i % 5) for i in range(6)]
    alone = [s.answer(p, max_tokens=n)[0] for p, n in prompts]

    def run(total):
        def one(i):
            p, n = prompts[i % len(prompts)]
            st, r = s.chat(p, max_tokens=n)
            return i, st, r["choices"][0]["message"]["content"] if st == 200 else r, r.get("id")
        with ThreadPoolExecutor(64) as ex:
            return list(ex.map(one, range(total)))
    warm = run(200)
    rss0 = s.rss_kib()
    before = s.metrics()[1]
    t0 = time.time()
    res = run(LOAD_TOTAL)
    took = time.time() - t0
    rss1 = s.rss_kib()
    answered = metric(s.metrics()[1], 'seer_requests_total{status="2xx"}') - metric(before, 'seer_requests_total{status="2xx"}')
    answered -= 1  # the first scrape, counted after its own text was written
    bad = [(i, st, a) for i, st, a, _ in res if st != 200 or a != alone[i % len(prompts)]]
    ok(len(res) == LOAD_TOTAL and not bad and all(st == 200 and a == alone[i % 6] for i, st, a, _ in warm),
       "load: %d requests from 64 threads on -np 4, each 200 and equal to the same request alone (%.0f s)"
       % (LOAD_TOTAL, took), bad[:10])
    ok(len({r[3] for r in res}) == LOAD_TOTAL and answered == LOAD_TOTAL,
       "load: %d distinct response ids, /metrics counted %d answers" % (len({r[3] for r in res}), answered))
    ok(rss1 <= rss0 * 1.3, "load: RSS after the run %d KiB within +30%% of %d KiB after the warm-up" % (rss1, rss0))
    s.stop()


# ---- 6. SIGTERM ---------------------------------------------------------------------------------

def sigterm():
    s = Server("-np", "1")
    queued = []
    threads = [threading.Thread(target=lambda i=i: queued.append(s.chat(user("queued %d" % i), max_tokens=10)[0]))
               for i in range(2)]
    n = min(SHARED["long"], 200) if SHARED["long"] else 200
    c, resp, first = start_stream(s, LONG, 200)
    for t in threads:
        t.start()
    time.sleep(0.3)  # the two others are queued behind the stream on -np 1
    s.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    try:
        socket.create_connection(("127.0.0.1", s.port), timeout=2).close()
        refused = False
    except ConnectionRefusedError:
        refused = True
    lines = [first] + resp.read().split(b"\n")
    c.close()
    for t in threads:
        t.join()
    events = [ln for ln in lines if ln.startswith(b"data: ")]
    want = b'"finish_reason":"%s"' % (b"length" if n == 200 else b"stop")
    ok(events and events[-1].strip() == b"data: [DONE]" and want in b"".join(events) and b'"error"' not in events[-2],
       "SIGTERM: the stream in flight completes (%d tokens, %s) with [DONE]" % (n, want.decode()), lines[-4:])
    ok(queued == [200, 200], "SIGTERM: the requests queued behind it are answered too", queued)
    ok(refused, "SIGTERM: new connections are refused")
    rc = s.exit_status()
    ok(rc == 0, "SIGTERM: the server exits 0 (%s)" % rc, s.log())

    # --grace 0: the reply is cut at once, and says so (an error event), never a false "stop"
    if SHARED["long"] < 100:
        skip("SIGTERM past --grace", "the greedy reply to %r ends after %d tokens: too soon" % (LONG, SHARED["long"]))
    else:
        g = Server("-np", "1", "--grace", "0")
        c, resp, first = start_stream(g, LONG, 1500)
        g.proc.send_signal(signal.SIGTERM)
        raw = resp.read()
        c.close()
        # parsed with the first line: a cut right after the first event leaves raw starting with that
        # event's blank line, and the error event behind it would not start with "data: "
        data, _ = sse(first + raw)
        rc = g.exit_status()
        ok(first.startswith(b"data: ") and len(data) >= 2 and data[-1] == "[DONE]" and '"error"' in data[-2]
           and rc == 0, "SIGTERM past --grace: the stream ends with an error event and [DONE], exit 0 (%s)" % rc,
           raw[-400:])

    # SIGTERM while a request fetches its image: it submits after the engine stopped (this crashed)
    png = make_image("PNG")

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            time.sleep(2)
            self.send_response(200)
            self.send_header("Content-Length", str(len(png)))
            self.end_headers()
            self.wfile.write(png)

        def log_message(self, *a):
            pass
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    f = Server("--allow-remote-media", "-np", "1")
    out = []
    url = "http://127.0.0.1:%d/a.png" % web.server_address[1]
    th = threading.Thread(target=lambda: out.append(f.chat(user("q", image_part(url)))[0]))
    th.start()
    time.sleep(0.5)
    f.proc.send_signal(signal.SIGTERM)
    th.join()
    web.shutdown()
    rc = f.exit_status()
    ok(rc == 0 and out and out[0] in (200, 503),
       "SIGTERM during a remote media fetch: the request answered 200 or 503, the server exits 0 (%s, %s)" % (out, rc),
       f.log())


def main():
    if not os.access(SEER, os.X_OK):
        print("1..0 # SKIP no seer binary at %s (set SEER_BUILD_DIR)" % SEER)
        return 0
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "reference", "gen_tiny.py"), "--preset", "tiny",
                    "--out", os.path.join(TMP, "model")], check=True, stdout=subprocess.DEVNULL)
    lib.MODEL = os.path.join(TMP, "model", "model-f32.gguf")
    for fn in (endpoints, images, prefix_cache, errors, load, sigterm):
        t0 = time.time()
        section(fn)
        print("# %s took %.1f s" % (fn.__name__, time.time() - t0), flush=True)
    status = {s.port: s.stop() for s in lib.SERVERS}
    bad = [s.log() for s in lib.SERVERS if s.proc.returncode != 0]
    ok(not bad, "every server exited 0 on SIGTERM (%d servers)" % len(status), "\n".join(bad))
    print("1..%d" % lib.N_TESTS)
    return 1 if lib.FAILED else 0


SHARED = {"long": 0}
LONG = "a long story please"  # greedy on the tiny model here: 666 tokens before its end of turn
if __name__ == "__main__":
    sys.exit(main())
