#!/bin/sh
# seer serve against llama-server (issue 20 item 7): the same random-weight GGUF of the released 0.8B
# shape (Q8_0) and the same random F16 mmproj, the same threads (-t), slots (-np = the number of
# clients) and per-slot context, greedy, the same prompts, images and max_tokens, the servers run
# one after the other (never at once; the order swapped every round so the machine's load falls on
# both alike). llama-server is built natively from node-llama-cpp 3.22.1's llama.cpp
# (bench/llama_native.sh), with its own defaults for the prompt cache (--cache-ram 8192 MiB, slot
# checkpoints) and the Qwen3.5 chat template llama.cpp ships (models/templates/Qwen3.5-4B.jinja; the
# random GGUF has none, and seer renders Qwen3.5's template itself).
#   bench/serve_vs_llama.sh
# Per server start (-np L for each L in LEVELS), the load client bench/serve_load.py measures, streaming:
#   - "text xL" / "image xL": L clients at once, aggregate generated tokens/s and the median time to
#     first token, every prompt and image distinct (no cache can help);
#   - at -np $CACHE_NP (when in LEVELS): "chat turn 5" (thinking on, earlier replies sent back as
#     received) and "same image" (a second question about an image in a new conversation): TTFT,
#     also for seer with --cache-ram 0 (the "no-cache" column).
# Prints the raw lines as they come (stderr: progress with `uptime`), then the table (medians over
# rounds; seer/llama for tokens/s, llama/seer for TTFT: > 1 means seer is better).
# Environment: SEER (default build/seer), ROUNDS (1), LEVELS ("1 4 16"), KINDS ("text image"),
# MAX_TOKENS (16), WORDS (12: words per text prompt and per chat turn, ~4 tokens each; the chat's
# first turn has 4x), IMAGE (448x448), REQS_1 (2: requests per client at one client; 1 at more),
# CACHE_NP (4), CTX (2048 tokens per slot), THREADS (2), PORT (18960), BENCH_DIR
# (/tmp/seer-serve-bench: models and images, kept and reused), RAW (default $BENCH_DIR/raw.tsv,
# rewritten), ENGINES ("seer seer-nocache llama", run in this order in odd rounds, reversed in even
# ones; a part run alone gives a raw file that `bench/serve_load.py table` reads with the others,
# concatenated). On a busy machine, run the text and image tests apart, e.g. KINDS=text, then
# LEVELS="1 4" KINDS=image CACHE_NP=0 RAW=...: the cache tests run only when CACHE_NP is in LEVELS.
set -eu
cd "$(dirname "$0")/.."
. bench/random_inputs.sh
seer=$(realpath "${SEER:-build/seer}")
rounds=${ROUNDS:-1} levels=${LEVELS:-1 4 16} kinds=${KINDS:-text image}
maxtok=${MAX_TOKENS:-16} words=${WORDS:-12} image=${IMAGE:-448x448} reqs1=${REQS_1:-2}
cache_np=${CACHE_NP:-4} ctx=${CTX:-2048} threads=${THREADS:-2} port=${PORT:-18960}
dir=${BENCH_DIR:-/tmp/seer-serve-bench}
raw=${RAW:-$dir/raw.tsv}
url=http://127.0.0.1:$port
engines=${ENGINES:-seer seer-nocache llama}
case " $engines " in
  *" llama "*)
    bin=$(bench/llama_native.sh llama-server | tail -1)
    template=$bin/../../models/templates/Qwen3.5-4B.jinja
    [ -f "$template" ] || { echo "serve_vs_llama.sh: $template missing" >&2; exit 1; } ;;
esac
mkdir -p "$dir/img"
text=$dir/text-0.8b-q8_0.gguf mmproj=$dir/mmproj-0.8b-f16.gguf
[ -f "$text" ] || "$seer" bench --preset 0.8b --dtype q8_0 --seed 1 -o "$text" -p 0 -n 0 >/dev/null
[ -f "$mmproj" ] || random_mmproj "$seer" "$mmproj"

# Images: every load test of one server start gets its own, the same ones for both servers.
reqs() { if [ "$1" = 1 ]; then echo "$reqs1"; else echo 1; fi; }
n_img=1
for l in $levels; do n_img=$((n_img + l * $(reqs "$l"))); done
w=${image%x*} h=${image#*x} i=0
while [ $i -lt $n_img ]; do
  [ -f "$dir/img/$image-$i.png" ] || png "$dir/img/$image-$i.png" "$w" "$h" "$i"
  i=$((i + 1))
done
images() { # first count
  i_k=$1; while [ "$i_k" -lt $(($1 + $2)) ]; do printf '%s ' "$dir/img/$image-$i_k.png"; i_k=$((i_k + 1)); done
}

load() { cut -d' ' -f1 /proc/loadavg; }
pid=
start() { # engine slots
  case $1 in
    seer) "$seer" serve -m "$text" --mmproj "$mmproj" --device cpu -t "$threads" -np "$2" -c "$ctx" --port "$port" ;;
    seer-nocache) "$seer" serve -m "$text" --mmproj "$mmproj" --device cpu -t "$threads" -np "$2" -c "$ctx" --port "$port" --cache-ram 0 ;;
    llama) "$bin/llama-server" -m "$text" --mmproj "$mmproj" -t "$threads" -tb "$threads" -np "$2" -c $(($2 * ctx)) \
             --port "$port" --chat-template-file "$template" --no-webui ;;
  esac >"$dir/server.log" 2>&1 &
  pid=$!
  s_wait=0
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/health")" = 200 ]; do
    kill -0 $pid 2>/dev/null && [ $s_wait -lt 600 ] || { tail -5 "$dir/server.log" >&2; echo "serve_vs_llama.sh: $1 did not start" >&2; exit 1; }
    sleep 1; s_wait=$((s_wait + 1))
  done
}
stop() { kill $pid; wait $pid || true; pid=; }
trap '[ -z "$pid" ] || kill $pid' EXIT
# (sh has no local variables: the functions' names are their own, so no caller's loop is disturbed)
measure() { # engine args...
  m_eng=$1; shift
  m_load=$(load)
  m_res=$(python3 bench/serve_load.py "$url" "$@" --max-tokens "$maxtok" --words "$words")
  printf '%s\t%s\t%s\n' "$m_eng" "$m_load" "$m_res" | tee -a "$raw"
}
cache_tests() { # engine
  measure "$1" chat --turns 5
  measure "$1" image2 --images "$dir/img/$image-$((n_img - 1)).png"
}
engine_run() { # engine round
  if [ "$1" = seer-nocache ]; then
    case " $levels " in *" $cache_np "*) ;; *) return ;; esac # no cache tests in this run
    start seer-nocache "$cache_np"; cache_tests seer-nocache; stop; return
  fi
  first=0
  for l in $levels; do
    echo "round $2: $1 -np $l: $(uptime)" >&2
    start "$1" "$l"
    for k in $kinds; do
      if [ "$k" = image ]; then
        # shellcheck disable=SC2046
        measure "$1" load --clients "$l" --requests "$(reqs "$l")" --kind image --images $(images $first $((l * $(reqs "$l"))))
      else
        measure "$1" load --clients "$l" --requests "$(reqs "$l")" --kind text
      fi
    done
    [ "$l" != "$cache_np" ] || cache_tests "$1"
    stop
    first=$((first + l * $(reqs "$l")))
  done
}

: >"$raw"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# -t $threads, -c $ctx per slot, max_tokens $maxtok, $words words per prompt, images $image, rounds $rounds"
r=1
while [ $r -le "$rounds" ]; do
  order=$engines
  [ $((r % 2)) -eq 1 ] || order=$(echo "$engines" | tr ' ' '\n' | tac | tr '\n' ' ')
  for e in $order; do engine_run "$e" "$r"; done
  r=$((r + 1))
done
echo "# done $(date -u +%H:%MZ); load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 bench/serve_load.py table "$raw"
