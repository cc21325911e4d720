#!/usr/bin/env python3
"""Structured output (-j/--json-schema, --format json, --grammar; TAP on stdout), proven against an
independent validator: random-weight tiny models (tests/reference/gen_tiny.py, whose logits favour no
shape at all) answer under every schema of a corpus, with several seeds and temperatures, and every
answer that ended by itself (stop "eos") must parse as JSON and validate with python3-jsonschema
(Draft 2020-12). Answers cut by -n (stop "length") are counted and must stay rare; one check makes
-n cut on purpose and expects "length" and an incomplete text. GBNF answers are checked with Python
regular expressions / a small parser written here. With --think the reasoning is free text and the
answer after </think> validates. Unsupported schema features and broken grammars fail with a
message naming what is wrong.
Seeds (of the models' weights and of sampling) are fresh each run, from SEER_TEST_SEED when set (printed
as "# seed N", so a failure can be replayed). Environment: SEER_BUILD_DIR (default build) holds seer.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Tap  # noqa: E402

tap = Tap()
base = int(os.environ.get("SEER_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
tap.diag(f"seed {base}")
here = os.path.dirname(os.path.abspath(__file__))
seer = os.path.join(os.environ.get("SEER_BUILD_DIR", "build"), "seer")
try:
    import jsonschema
except ImportError:
    tap.skip("python3-jsonschema is not installed (apt install python3-jsonschema)", "schema corpus")
    sys.exit(tap.done())
if not os.access(seer, os.X_OK):
    tap.skip(f"{seer} is not built", "schema corpus")
    sys.exit(tap.done())

CORPUS = [
    ("object, bounded integer, enum items", {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 12},
                       "age": {"type": "integer", "minimum": 18, "maximum": 120},
                       "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3}},
        "required": ["name", "age", "tags"], "additionalProperties": False}),
    ("nested arrays with min/maxItems", {
        "type": "array", "minItems": 2, "maxItems": 4,
        "items": {"type": "array", "minItems": 1, "maxItems": 3,
                  "items": {"type": "integer", "minimum": -5, "maximum": 5}}}),
    ("enum of mixed values", {"enum": ["red", "green", 1, None, True, {"a": [1, 2]}, 2.5]}),
    ("number in [-3, 7.5)", {"type": "number", "minimum": -3, "exclusiveMaximum": 7.5}),
    ("integer in (-10, 1000)", {"type": "integer", "exclusiveMinimum": -10, "exclusiveMaximum": 1000}),
    ("number with fractional bounds", {"type": "number", "minimum": -20.25, "maximum": -2.5}),
    ("anchored pattern", {"type": "string", "pattern": "^[A-Z]{2}-\\d{3,5}$"}),
    ("patterns in an object", {
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^(ab|cd)+x?$"},
                       "mail": {"type": "string", "pattern": "^[a-z0-9._]{1,8}@[a-z]{1,8}\\.(com|org)$"},
                       "q": {"type": "string", "pattern": "^\"[^\"\\\\]{0,3}\\\\$"}},
        "required": ["id", "mail", "q"], "additionalProperties": False}),
    ("unanchored pattern", {"type": "string", "pattern": "x[0-9]y"}),
    ("anyOf", {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "minimum": 100, "maximum": 200},
                         {"type": "null"}]}),
    ("const, boolean, null", {
        "type": "object",
        "properties": {"v": {"const": "1.0"}, "ok": {"type": "boolean"}, "n": {"type": "null"}},
        "required": ["v", "ok", "n"], "additionalProperties": False}),
    ("optional properties only", {
        "type": "object",
        "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 9}, "b": {"type": "string", "maxLength": 4},
                       "c": {"type": "boolean"}},
        "additionalProperties": False}),
    ("recursive $ref", {
        "$defs": {"node": {"type": "object",
                           "properties": {"v": {"type": "integer", "minimum": 0, "maximum": 9},
                                          "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 1}},
                           "required": ["v"], "additionalProperties": False}},
        "$ref": "#/$defs/node"}),
    ("type list", {"type": ["string", "integer", "boolean"], "maxLength": 2, "minimum": 0, "maximum": 3}),
    ("required but undescribed", {"type": "object", "properties": {"a": {"type": "integer"}},
                                  "required": ["a", "z"]}),
    ("exactly three booleans", {"type": "array", "items": {"type": "boolean"}, "minItems": 3, "maxItems": 3}),
    ("non-ASCII keys and values", {
        "type": "object", "properties": {"naïve ✓": {"enum": ["日本", "é\"q\\"]}},
        "required": ["naïve ✓"], "additionalProperties": False}),
    ("string lengths", {"type": "string", "minLength": 5, "maxLength": 8}),
]

tmp = tempfile.mkdtemp(prefix="seer-schema-")
models = []
for preset, seed in (("tiny", base % 100000), ("tiny-gqa", base % 100000 + 1)):
    d = os.path.join(tmp, preset)
    r = subprocess.run([sys.executable, os.path.join(here, "gen_tiny.py"), "--out", d, "--preset", preset,
                        "--seed", str(seed)], capture_output=True, text=True)
    if r.returncode:
        tap.diag(r.stderr)
    models.append(os.path.join(d, "model-f32.gguf"))
tap.ok(all(os.path.exists(m) for m in models), "tiny random models written")

PROMPTS = ["Describe it", "Give me data", "Hello"]


def run(args, timeout=300):
    r = subprocess.run([seer] + args, capture_output=True, text=True, timeout=timeout)
    try:
        j = json.loads(r.stdout) if r.returncode == 0 else None
    except json.JSONDecodeError:
        j = None
    return r, j


# ---- the corpus: every finished answer validates ------------------------------------------------
for title, schema in CORPUS:
    validator = jsonschema.Draft202012Validator(schema)
    n_eos = n_len = 0
    bad = []
    for mi, model in enumerate(models):
        for si, temp in enumerate(("0", "0.7", "1.5")):
            seed = base + 100 * mi + 10 * si + len(title)
            r, j = run(["run", "-m", model, "-p", PROMPTS[seed % 3], "-t", "1", "-n", "2500", "-c", "4096",
                        "--temp", temp, "-s", str(seed), "--json", "-j", json.dumps(schema)])
            if j is None:
                bad.append(f"seed {seed} temp {temp}: exit {r.returncode}: {r.stderr.strip()[:300]}")
                continue
            if j["stop"] == "length":
                n_len += 1
                continue
            n_eos += j["stop"] == "eos"
            try:
                validator.validate(json.loads(j["text"]))
            except (json.JSONDecodeError, jsonschema.ValidationError) as e:
                bad.append(f"seed {seed} temp {temp}: {j['text'][:200]!r}: {str(e).splitlines()[0]}")
    for b in bad:
        tap.diag(b)
    # every finished answer validated; a cut by -n 2500 is allowed but must be the exception
    tap.ok(not bad and n_eos >= 4 and n_len <= 2,
           f"{title}: {n_eos} answers validate, {n_len} cut by -n")

# ---- --format json: any JSON value -----------------------------------------------------------------
ok = True
for seed in range(4):
    r, j = run(["run", "-m", models[seed % 2], "-p", "x", "-t", "1", "-n", "2500", "--temp", "1", "-s", str(base + seed),
                "--json", "--format", "json"])
    if j is None or j["stop"] != "eos":
        ok = j is not None and j["stop"] == "length"
        continue
    try:
        json.loads(j["text"])
    except json.JSONDecodeError:
        ok = False
        tap.diag(f"--format json gave {j['text'][:200]!r}")
tap.ok(ok, "--format json: every finished answer is one JSON value")

# ---- --grammar: GBNF answers checked with Python ---------------------------------------------------
GRAMMARS = [
    ("list", r'''# llama.cpp style: comments, groups, repetition, classes
root ::= "Answer: " answer "\n" ( "- " item "\n" ){0,2} "- " item
answer ::= "yes" | "no"
item ::= [a-z]+ ( " " [a-z]{1,5} )?
''', lambda t: re.fullmatch(r"Answer: (yes|no)\n(- [a-z]+( [a-z]{1,5})?\n){0,2}- [a-z]+( [a-z]{1,5})?", t)),
    ("arithmetic", r'''root ::= expr
expr ::= term ( [-+*/] term ){0,4}
term ::= [1-9] [0-9]? | "(" expr ")"
''', None),
    ("negated class and escapes", r'''root ::= "<" [^<>\n\x00-\x1f]{1,20} ">" ( "\t" | "\u00e9" | [α-ω] )
''', lambda t: re.fullmatch(r"<[^<>\n\x00-\x1f]{1,20}>(\t|é|[α-ω])", t, re.S)),
]


def arith_ok(t):
    pos = 0

    def expr():
        nonlocal pos
        if not term():
            return False
        for _ in range(4):
            if pos < len(t) and t[pos] in "-+*/":
                save = pos
                pos += 1
                if not term():
                    pos = save
                    return True
            else:
                break
        return True

    def term():
        nonlocal pos
        m = re.match(r"[1-9][0-9]?", t[pos:])
        if m:
            pos += m.end()
            return True
        if t[pos:pos + 1] == "(":
            pos += 1
            if expr() and t[pos:pos + 1] == ")":
                pos += 1
                return True
        return False

    return expr() and pos == len(t)


for title, text, check in GRAMMARS:
    path = os.path.join(tmp, title.replace(" ", "_") + ".gbnf")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    check = check or arith_ok
    good = n = 0
    for seed in range(6):
        r, j = run(["run", "-m", models[seed % 2], "-p", "go", "-t", "1", "-n", "1500", "--temp", "1.2",
                    "-s", str(base + seed), "--json", "--grammar", path])
        if j is None:
            tap.diag(f"{title}: exit {r.returncode}: {r.stderr.strip()[:300]}")
            continue
        if j["stop"] != "eos":
            continue
        n += 1
        if check(j["text"]):
            good += 1
        else:
            tap.diag(f"{title}: {j['text']!r} does not match")
    tap.ok(n >= 4 and good == n, f"--grammar {title}: {good} of {n} finished answers match")

# ---- --think: free reasoning, constrained answer ------------------------------------------------------
schema = CORPUS[0][1]
n_ans = n_think = 0
bad = []
for seed in range(8):
    r, j = run(["run", "-m", models[seed % 2], "-p", "think", "-t", "1", "-n", "3000", "--temp", "1", "-s", str(base + seed),
                "--json", "--think", "-j", json.dumps(schema)])
    if j is None:
        bad.append(f"exit {r.returncode}: {r.stderr.strip()[:200]}")
        continue
    if j["stop"] != "eos":
        continue
    n_ans += 1
    # reasoning is not held to the schema: random weights write text that is no JSON at all
    try:
        json.loads(j["thinking"])
    except json.JSONDecodeError:
        n_think += j["thinking"] != ""
    try:
        jsonschema.validate(json.loads(j["text"]), schema)
    except (json.JSONDecodeError, jsonschema.ValidationError) as e:
        bad.append(f"{j['text'][:200]!r}: {str(e).splitlines()[0]}")
for b in bad:
    tap.diag(b)
tap.ok(not bad and n_ans >= 3 and n_think >= 1,
       f"--think: {n_ans} answers after </think> validate, {n_think} with free-text reasoning")

# ---- -n cuts an answer: stop "length", the text is incomplete ---------------------------------------
r, j = run(["run", "-m", models[0], "-p", "x", "-t", "1", "-n", "3", "--temp", "1", "-s", "1", "--json",
            "-j", json.dumps(CORPUS[0][1])])
incomplete = False
if j is not None:
    try:
        json.loads(j["text"])
    except json.JSONDecodeError:
        incomplete = True
tap.ok(j is not None and j["stop"] == "length" and incomplete, "-n 3 cuts the object: stop \"length\", text incomplete")

# ---- an answer that completes exactly at -n ends with "eos", not "length" ----------------------------
r, j = run(["run", "-m", models[1], "-p", "x", "-t", "1", "-n", "500", "--temp", "1", "-s", str(base + 5), "--json",
            "-j", json.dumps(CORPUS[10][1])])
same = None
if j is not None and j["stop"] == "eos":
    r, same = run(["run", "-m", models[1], "-p", "x", "-t", "1", "-n", str(len(j["tokens"])), "--temp", "1", "-s", str(base + 5),
                   "--json", "-j", json.dumps(CORPUS[10][1])])
tap.ok(same is not None and same["stop"] == "eos" and same["text"] == j["text"],
       f"an answer of exactly -n {len(j['tokens']) if j else '?'} tokens: stop \"eos\"")

# ---- refusals: a message naming the problem, never a silently ignored keyword -------------------------
REFUSED = [
    ({"type": "string", "format": "date-time"}, "format"),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, "oneOf"),
    ({"type": "array", "uniqueItems": True}, "uniqueItems"),
    ({"type": "number", "multipleOf": 3}, "multipleOf"),
    ({"type": "object", "patternProperties": {"^a": {}}}, "patternProperties"),
    ({"type": "object", "additionalProperties": {"type": "string"}}, "additionalProperties"),
    ({"type": "string", "pattern": "^(?=a)b$"}, "lookaround"),
    ({"type": "string", "pattern": "^a\\bb$"}, "word boundar"),
    ({"not": {"type": "null"}}, "not"),
    ({"type": "integer", "minimum": 5, "maximum": 4}, "minimum/maximum"),
    ({"$ref": "http://example.com/s.json"}, "$ref"),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["b"], "additionalProperties": False},
     "required"),
]
for schema, word in REFUSED:
    r, _ = run(["run", "-m", models[0], "-p", "x", "-t", "1", "-n", "5", "-j", json.dumps(schema)])
    tap.ok(r.returncode != 0 and word in r.stderr and r.stdout == "",
           f"refused: {json.dumps(schema)} ({r.stderr.strip()[:160]})")
r, _ = run(["run", "-m", models[0], "-p", "x", "-n", "5", "-j", "{\"type\": "])
tap.ok(r.returncode != 0 and "not JSON" in r.stderr, f"a schema that is not JSON: {r.stderr.strip()[:120]}")
BROKEN = [("root ::= a\n", "never defined"), ("root ::= root \"x\" | \"y\"\n", "left-recursive"),
          ("root ::= [a-z\n", "not closed"), ("r ::= \"x\"\n", "root"), ("root ::= \"a\" x\nx ::= x \"b\"\n", "never finish"),
          ("root ::= \"a\"{3,2}\n", "n < m")]
for text, word in BROKEN:
    path = os.path.join(tmp, "broken.gbnf")
    with open(path, "w") as f:
        f.write(text)
    r, _ = run(["run", "-m", models[0], "-p", "x", "-n", "5", "--grammar", path])
    tap.ok(r.returncode != 0 and word in r.stderr, f"broken grammar {text.strip()!r}: {r.stderr.strip()[:160]}")
r, _ = run(["run", "-m", models[0], "-p", "x", "-n", "5", "--format", "yaml"])
tap.ok(r.returncode == 2 and "json" in r.stderr, "--format yaml is a usage error")
r, _ = run(["run", "-m", models[0], "-p", "x", "-n", "5", "--format", "json", "-j", "{}"])
tap.ok(r.returncode == 2 and "only one" in r.stderr, "--format with -j is a usage error")
path = os.path.join(tmp, "schema.json")
with open(path, "w") as f:
    json.dump(CORPUS[10][1], f)
r, j = run(["run", "-m", models[0], "-p", "x", "-t", "1", "-n", "500", "-s", "3", "--json", "-j", "@" + path])
tap.ok(j is not None and (j["stop"] != "eos" or jsonschema.Draft202012Validator(CORPUS[10][1]).is_valid(json.loads(j["text"]))),
       "-j @FILE reads the schema from the file")

subprocess.run(["rm", "-rf", tmp])
sys.exit(tap.done())
