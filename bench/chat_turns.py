#!/usr/bin/env python3
"""What a chat turn costs as the conversation grows (issue 21 item 4), `seer chat` driven as a user
drives it: a message, the reply, a pause for typing the next one, and so on. Since the chat is
rendered as the template renders it, the last reply is fed again once the next message comes (its
think block dropped); seer chat does that while the user types (seer_chat_settle), so a turn feeds
only its own message. With BASE (a seer built before that), both run the same turns, alternating.

    bench/chat_turns.py [SEER [BASE]]

Per turn: the wall time from sending the message to the reply's end (the timing line of -v), the
prompt tokens the turn fed, and what was fed again while the user "typed". A GBNF grammar keeps
every reply to plain English words, so it tokenizes again as it was generated (a random model's own
replies are byte soup that tokenizes to 2-3x its tokens). Environment: MODEL (default: the serve
bench's random 0.8B Q8_0, /tmp/seer-serve-bench/text-0.8b-q8_0.gguf, made by bench/serve_vs_llama.sh
or `seer bench --preset 0.8b --dtype q8_0 --seed 1 -o FILE -p 0 -n 0`), TURNS (6), N (48 tokens per
reply), PAUSE (3 s of typing), ROUNDS (2), THREADS (2)."""
import os
import re
import subprocess
import sys
import tempfile
import time

seer = sys.argv[1] if len(sys.argv) > 1 else "build/seer"
base = sys.argv[2] if len(sys.argv) > 2 else None
model = os.environ.get("MODEL", "/tmp/seer-serve-bench/text-0.8b-q8_0.gguf")
turns, n, pause = int(os.environ.get("TURNS", 6)), int(os.environ.get("N", 48)), float(os.environ.get("PAUSE", 3))
rounds, threads = int(os.environ.get("ROUNDS", 2)), os.environ.get("THREADS", "2")

WORDS = "the a cat dog sat ran on by far and of to in it we see red blue sun sea".split()
MESSAGES = [
    "Tell me about the old lighthouse on the hill above the harbour and who kept its lamp burning.",
    "What did the keeper see on the night of the great storm, when the ships came in late?",
    "How did the people of the town thank him once the weather cleared the next morning?",
    "Where did the keeper go after the lighthouse was closed and the lamp was put out for good?",
    "Did anyone ever climb the stairs again, and what did they find at the very top of the tower?",
    "Write the last lines of the story, as the keeper would have told them to his grandchildren.",
]
TIMING = re.compile(r"seer: prompt (\d+) tokens in ([\d.]+) s .*generated (\d+) tokens in ([\d.]+) s")
SETTLED = re.compile(r"seer: the last reply.*: (\d+) tokens fed again while the message was typed \(([\d.]+) s\)")


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def run(binary, grammar):
    """One conversation: [(wall s, prompt tokens, prefill s, generated, decode s, settled tokens, load)]."""
    p = subprocess.Popen([binary, "chat", "-m", model, "--temp", "0", "-n", str(n), "-t", threads, "-v",
                          "--grammar", grammar], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, bufsize=1)
    rows, settled = [], 0
    for i in range(turns):
        t0 = time.monotonic()
        p.stdin.write(MESSAGES[i % len(MESSAGES)] + "\n")
        p.stdin.flush()
        while True:
            line = p.stderr.readline()
            if not line:
                sys.exit(f"chat_turns.py: {binary} ended early")
            m = SETTLED.search(line)
            if m:
                settled = int(m.group(1))
            m = TIMING.search(line)
            if m:
                break
        wall = time.monotonic() - t0
        rows.append((wall, int(m.group(1)), float(m.group(2)), int(m.group(3)), float(m.group(4)), settled, load()))
        settled = 0
        time.sleep(pause)
    p.stdin.close()
    p.wait()
    return rows


def main():
    with tempfile.NamedTemporaryFile("w", suffix=".gbnf", delete=False) as g:
        g.write("root ::= (" + " | ".join(f'"{w} "' for w in WORDS) + ")+\n")
    engines = [("seer", seer)] + ([("base", base)] if base else [])
    print(f"# {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, {os.cpu_count()} cores, model {model}, "
          f"-t {threads}, -n {n}, pause {pause} s; load {open('/proc/loadavg').read().strip()}")
    print("engine\tround\tturn\twall s\tprompt tokens\tprefill s\tgenerated\tdecode s\tsettled while typing\tload")
    for r in range(rounds):
        for name, binary in engines if r % 2 == 0 else engines[::-1]:
            for i, row in enumerate(run(binary, g.name)):
                print(f"{name}\t{r + 1}\t{i + 1}\t{row[0]:.2f}\t{row[1]}\t{row[2]:.2f}\t{row[3]}\t{row[4]:.2f}\t{row[5]}\t{row[6]}",
                      flush=True)
    os.unlink(g.name)


main()
