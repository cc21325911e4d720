#!/bin/sh
# Prints the call cycles between source files of a build: file A calls (or reads a global of) a
# function defined in file B while B, directly or through other files, calls back into A. From the
# object files of the library (seer_obj, seer_randmodel) and of the command (seer, seer_bench), `nm`
# gives each object's defined and undefined global symbols; an undefined symbol of A defined by B
# is an edge A -> B. Each strongly connected component of more than one file is a cycle, printed as
#   cycle library: media/decode.c media/jpeg.c
#     media/decode.c -> media/jpeg.c: media_jpeg_decode
#     media/jpeg.c -> media/decode.c: media_image_alloc media_orient
# ("command" when it holds a file of cli/, server/ or tools/). Objects map to sources by their path under
# CMakeFiles/<target>.dir/; where one source has objects in two targets the newer one counts.
# Usage: scripts/call-cycles.sh [BUILD_DIR]   (default $SEER_BUILD_DIR, else build; relative to the
# source tree, which is this script's parent folder or $SEER_SOURCE_DIR)
# Exit status: 0 no cycle, 1 cycles printed, 2 no objects found (build first).
set -eu
root=${SEER_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${1:-${SEER_BUILD_DIR:-build}}
case $build in /*) ;; *) build="$root/$build" ;; esac

objs=$(for t in seer_obj seer_randmodel seer seer_bench; do
  if [ -d "$build/CMakeFiles/$t.dir" ]; then find "$build/CMakeFiles/$t.dir" -name '*.c.o'; fi
done | sort)
if [ -z "$objs" ]; then
  echo "call-cycles: no object files under $build/CMakeFiles (build seer first)" >&2
  exit 2
fi

# Strongly connected components (Tarjan, iterative) of the file graph; the source of an object is
# its path under CMakeFiles/<target>.dir/ less ".o", and a source present in two targets keeps its
# newest object (an older one is left over from before the source moved between targets).
prog=$(cat <<'PY'
import os, sys
from collections import defaultdict

best = {}  # source -> (mtime, object)
rows = []
for line in sys.stdin:
    o, _, rest = line.partition(".o:")
    o += ".o"
    f = rest.split()
    if len(f) == 2 and f[0] == "U":
        kind, sym = "U", f[1]
    elif len(f) == 3 and f[1] in "TDBRVWGSC":
        kind, sym = "D", f[2]
    else:
        continue
    src = o.split(".dir/", 1)[1][:-2]
    if not os.path.exists(os.path.join(sys.argv[1], src)):
        continue  # an object whose source is gone
    m = os.path.getmtime(o)
    if src not in best or best[src][0] < m:
        best[src] = (m, o)
    rows.append((o, src, kind, sym))
definer, uses = {}, defaultdict(set)
for o, src, kind, sym in rows:
    if best[src][1] != o:
        continue
    if kind == "D":
        definer[sym] = src
    else:
        uses[src].add(sym)
edges = defaultdict(lambda: defaultdict(list))  # a -> b -> symbols a takes from b
for a, syms in uses.items():
    for s in sorted(syms):
        b = definer.get(s)
        if b and b != a:
            edges[a][b].append(s)
nodes = sorted(best)
index, low, on, stack, sccs, n = {}, {}, set(), [], [], 0
for v0 in nodes:
    if v0 in index:
        continue
    work = [(v0, iter(sorted(edges[v0])))]
    index[v0] = low[v0] = n; n += 1; stack.append(v0); on.add(v0)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = n; n += 1; stack.append(w); on.add(w)
                work.append((w, iter(sorted(edges[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))
for comp in sorted(sccs):
    part = "command" if any(f.startswith(("cli/", "tools/", "server/")) for f in comp) else "library"
    print("cycle %s: %s" % (part, " ".join(comp)))
    for a in comp:
        for b in comp:
            if b in edges[a]:
                print("  %s -> %s: %s" % (a, b, " ".join(edges[a][b])))
sys.exit(1 if sccs else 0)
PY
)

# nm -A prints "OBJECT:[ADDRESS] KIND SYMBOL" per global symbol.
# shellcheck disable=SC2086 # one object path per word
nm -A -g $objs | python3 -c "$prog" "$root"
