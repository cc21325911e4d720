#!/bin/sh
# TAP: two `seer serve` processes behind Debian's nginx on loopback (docs/SERVING.md, "Scale-out").
#  1. 40 chat requests through nginx, 8 at a time, round robin: every one 200, and both servers
#     answered some (each server's seer_requests_total{status="2xx"} on /metrics).
#  2. Requests keep flowing from 6 clients while one server gets SIGTERM: every request still gets a
#     200 (nginx retries a refused connection or a 503 "shutting down" on the other server), nginx
#     did retry some, a long stream in flight on the stopped server (sent to it directly) still
#     ends with its finish chunk and [DONE], and the stopped server exits 0.
# nginx runs unprivileged in the foreground with its whole prefix (config, pid, logs, temp paths) in a
# temporary directory. Skipped visibly without nginx or curl (scripts/install-deps.sh installs
# nginx-light and curl), failed then when SEER_REQUIRE_ORACLES=1. SEER_BUILD_DIR names the build.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/support/serve_lib.sh"

PATH="$PATH:/usr/sbin:/sbin" # nginx lives in sbin, which a user's PATH may lack
missing=
for tool in nginx curl; do
  command -v $tool >/dev/null 2>&1 || missing="${missing:+$missing, }$tool not installed"
done
require_tools "$missing" "nginx and curl"

serve_setup nginx_balance
started=0
for s in a b; do
  if serve_start "$tmp/serve_$s.log" -np 2 -c 1024 --grace 30 --alias seer-tiny; then
    eval "pid_$s=\$serve_pid port_$s=\$serve_port"
    started=$((started + 1))
  else
    diag "$tmp/serve_$s.log"
  fi
done
[ "$started" = 2 ]
ok $? "two seer serve processes start and answer /health"
[ "$started" = 2 ] || { echo "1..$n"; exit 1; }

# nginx: round robin over both; a refused connection, a reset or a 503 goes to the other server.
# non_idempotent lets nginx retry a POST it already sent: a chat completion changes nothing on the
# server (its cache aside), so a retry costs only time. $upstream_addr lists every server tried.
mkdir -p "$tmp/nginx/logs" "$tmp/nginx/temp"
nport=$(free_port)
user=
[ "$(id -u)" = 0 ] && user="user root;" # as root, workers would become nobody, who cannot enter $tmp
cat >"$tmp/nginx/nginx.conf" <<EOF
$user
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/logs/error.log warn;
events { worker_connections 256; }
http {
  access_log $tmp/nginx/logs/access.log;
  client_body_temp_path $tmp/nginx/temp/body;
  proxy_temp_path $tmp/nginx/temp/proxy;
  fastcgi_temp_path $tmp/nginx/temp/fastcgi;
  uwsgi_temp_path $tmp/nginx/temp/uwsgi;
  scgi_temp_path $tmp/nginx/temp/scgi;
  upstream seer {
    server 127.0.0.1:$port_a;
    server 127.0.0.1:$port_b;
  }
  server {
    listen 127.0.0.1:$nport;
    location / {
      proxy_pass http://seer;
      proxy_http_version 1.1;
      proxy_buffering off;
      proxy_read_timeout 120s;
      proxy_next_upstream error timeout http_503 non_idempotent;
      proxy_next_upstream_tries 2;
      add_header X-Upstream \$upstream_addr always;
    }
  }
}
EOF
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/logs/error.log" -g 'daemon off;' \
  >"$tmp/nginx/logs/stdout.log" 2>&1 &
nginx_pid=$!
serve_pids="$serve_pids $nginx_pid"
i=0
until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$nport/health")" = 200 ]; do
  i=$((i + 1))
  if [ $i -ge 100 ] || ! kill -0 "$nginx_pid" 2>/dev/null; then
    ok 1 "nginx starts on 127.0.0.1:$nport and proxies /health"
    diag "$tmp/nginx/logs/error.log" "$tmp/nginx/logs/stdout.log"
    echo "1..$n"
    exit 1
  fi
  sleep 0.1
done
ok 0 "nginx starts on 127.0.0.1:$nport and proxies /health"

# load.py URL CLIENTS (COUNT | STOPFILE): chat requests from CLIENTS threads, COUNT in all or until
# STOPFILE exists; one line per request: "STATUS UPSTREAMS" (what X-Upstream said).
cat >"$tmp/load.py" <<'EOF'
import http.client, json, os, sys, threading, urllib.parse

url, clients, until = urllib.parse.urlsplit(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
count = int(until) if until.isdigit() else None
lock, results = threading.Lock(), []

def one(i):
    # a 48-character string: every answer takes tens of decode steps, whenever the random model
    # would end its turn, so requests are in flight on both servers most of the time
    body = json.dumps({"model": "seer-tiny", "max_tokens": 256,
                       "response_format": {"type": "json_schema", "json_schema": {
                           "name": "line", "schema": {"type": "string", "minLength": 48, "maxLength": 48}}},
                       "messages": [{"role": "user", "content": f"Question {i}: what is {i} plus {i}?"}]})
    try:
        c = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        c.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        ok = r.status != 200 or isinstance(json.loads(data)["choices"][0]["message"]["content"], str)
        return f"{r.status if ok else 'badbody'} {r.getheader('X-Upstream', '-').replace(' ', '')}"
    except Exception as e:
        return f"error:{type(e).__name__} -"

def client():
    while True:
        with lock:
            i = len(results)
            if (count is not None and i >= count) or (count is None and os.path.exists(until)):
                return
            results.append(None)
        line = one(i)
        with lock:
            results[i] = line

threads = [threading.Thread(target=client) for _ in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
print("\n".join(results))
EOF

requests_2xx() { # requests_2xx PORT: seer_requests_total{status="2xx"} of that server
  curl -s --max-time 10 "http://127.0.0.1:$1/metrics" | sed -n 's/^seer_requests_total{status="2xx"} //p'
}

# 1. the spread
"$py" "$tmp/load.py" "http://127.0.0.1:$nport" 8 40 >"$tmp/spread.out" 2>&1
good=$(grep -c '^200 ' "$tmp/spread.out")
[ "$good" = 40 ]
ok $? "40 requests through nginx, 8 at a time: all 200 ($good)"
[ "$good" = 40 ] || diag "$tmp/spread.out"
a=$(requests_2xx "$port_a")
b=$(requests_2xx "$port_b")
echo "# served: $a by one server, $b by the other (their /health probes included)"
[ "${a:-0}" -gt 1 ] && [ "${b:-0}" -gt 1 ] && [ $((a + b)) -ge 42 ]
ok $? "both servers answered some (seer_requests_total 2xx: $a and $b)"

# 2. one server stops while requests flow
"$py" "$tmp/load.py" "http://127.0.0.1:$nport" 6 "$tmp/stop" >"$tmp/drain.out" 2>&1 &
load_pid=$!
sleep 2
# and one long streamed answer straight from the server about to stop: SIGTERM comes once its first
# event has arrived, so it is surely in flight
long='{"model":"seer-tiny","max_tokens":2048,"stream":true,"messages":[{"role":"user","content":"Write."}],
  "response_format":{"type":"json_schema","json_schema":{"name":"long","schema":{"type":"string","minLength":600,"maxLength":600}}}}'
curl -sSN --max-time 120 -H 'Content-Type: application/json' -d "$long" \
  "http://127.0.0.1:$port_a/v1/chat/completions" >"$tmp/long.out" 2>&1 &
long_pid=$!
i=0
while [ ! -s "$tmp/long.out" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$pid_a"
wait "$pid_a"
rc_a=$?
sleep 2 # requests now find only the other server
touch "$tmp/stop"
wait "$load_pid"
ok $? "the load script ran"
total=$(wc -l <"$tmp/drain.out")
good=$(grep -c '^200 ' "$tmp/drain.out")
[ "$good" = "$total" ] && [ "$total" -ge 20 ]
ok $? "while one server stopped: every request through nginx got 200 ($good of $total)"
[ "$good" = "$total" ] || { grep -v '^200 ' "$tmp/drain.out" | sort | uniq -c | diag; diag "$tmp/nginx/logs/error.log"; }
retried=$(grep -c ',' "$tmp/drain.out")
[ "$retried" -ge 1 ]
ok $? "nginx retried requests the stopped server refused on the other ($retried)"
[ "$rc_a" = 0 ]
ok $? "the stopped server exits 0 (got $rc_a)"
wait "$long_pid"
long_rc=$?
[ "$long_rc" = 0 ] && grep -q '"finish_reason":"stop"' "$tmp/long.out" && [ "$(tail -n 2 "$tmp/long.out")" = "data: [DONE]" ]
ok $? "a stream in flight on the stopped server when SIGTERM came finished (curl $long_rc, finish_reason stop, [DONE])"
[ "$long_rc" = 0 ] || tail -c 600 "$tmp/long.out" | diag

kill -TERM "$nginx_pid" && wait "$nginx_pid"
serve_stop "$pid_b"
ok $? "the other server exits 0 on SIGTERM"
echo "1..$n"
[ "$failed" = 0 ]
