# serve_lib.sh — sourced (not run) by the tests that start `seer serve` from the shell
# (tests/scripts/openai_client.sh, tests/scripts/nginx_balance.sh): TAP counters, a fresh tiny random
# model, servers on free loopback ports, and their SIGTERM exit. Lives outside tests/scripts so prove
# does not run it as a test. Needs $root (the repository) set by the caller.

build=${SEER_BUILD_DIR:-build}
case $build in /*) ;; *) build="$root/$build" ;; esac
seer="$build/seer"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
n=0
failed=0

ok() { # ok STATUS DESCRIPTION
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else
    echo "not ok $n - $2"; failed=$((failed + 1))
    echo "$test_name: seed $seed: not ok $n - $2" >&2 # prove shows stderr: the replay seed and why
  fi
}
diag() { sed 's/^/# /' "$@"; }

# require_tools MISSING WHAT: nothing when MISSING (what is lacking) is empty; else the test is
# skipped visibly, or fails when SEER_REQUIRE_ORACLES=1, and the script ends.
require_tools() {
  [ -z "$1" ] && return 0
  if [ "${SEER_REQUIRE_ORACLES:-0}" = 1 ]; then
    echo "1..1"
    echo "not ok 1 - $2 required (SEER_REQUIRE_ORACLES=1): $1"
    exit 1
  fi
  echo "1..0 # SKIP $1"
  exit 0
}

# serve_setup NAME: a temporary directory ($tmp, removed at exit with every server still running)
# and a tiny random model in $model (SEER_TEST_SEED replays one). A missing seer or model generator
# ends the test with a failure: they are the project's own.
serve_setup() {
  test_name=$1
  seed=${SEER_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
  echo "# seed $seed"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$test_name.XXXXXX") || exit 1
  serve_pids=
  trap 'for p in $serve_pids; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
  if [ ! -x "$seer" ]; then
    echo "1..1"
    echo "not ok 1 - $seer is built (cmake --build $build --target seer)"
    exit 1
  fi
  if ! "$py" "$root/tests/reference/gen_tiny.py" --out "$tmp/model" --preset tiny --no-gguf \
         --seed $((seed % 1000000)) >"$tmp/gen.log" 2>&1; then
    echo "1..1"
    echo "not ok 1 - tests/reference/gen_tiny.py writes a tiny model"
    diag "$tmp/gen.log"
    exit 1
  fi
  model="$tmp/model/hf"
}

free_port() {
  "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# serve_start LOG [seer serve options]: starts `seer serve` greedy (--temp 0) on a free loopback
# port and waits up to 60 s for /health to answer 200. Sets serve_pid and serve_port; non-zero when
# it exited or never became ready (its log says why). A port taken between free_port and the bind is
# retried on another.
serve_start() {
  log=$1
  shift
  for try in 1 2 3; do
    serve_port=$(free_port) || return 1
    "$seer" serve -m "$model" --host 127.0.0.1 --port "$serve_port" --temp 0 -t 1 "$@" >"$log" 2>&1 &
    serve_pid=$!
    serve_pids="$serve_pids $serve_pid"
    i=0
    while [ $i -lt 600 ]; do
      kill -0 "$serve_pid" 2>/dev/null || break
      [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$serve_port/health")" = 200 ] &&
        return 0
      sleep 0.1
      i=$((i + 1))
    done
    kill -0 "$serve_pid" 2>/dev/null && { kill -KILL "$serve_pid"; return 1; }
    grep -q 'cannot listen' "$log" || return 1
  done
  return 1
}

# serve_stop PID: SIGTERM, then the server's exit status (it finishes requests in flight first).
serve_stop() {
  kill -TERM "$1" && wait "$1"
}
