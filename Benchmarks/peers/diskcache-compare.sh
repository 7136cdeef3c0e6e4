#!/usr/bin/env bash
# Side-by-side: EaselStorage's DiskCache vs Python's diskcache (PyPI).
#
# Runs the same workload (peers/diskcache_workload.py for diskcache,
# the DiskCachePeerWorkload executable for Easel) and prints a table of mean
# µs/op, ops/s and the ratio ours/diskcache for set and get of 10 KB and
# 100 KB random values, in two modes:
#   empty  a new cache without a size limit
#   full   a cache held at its byte limit, so every set also evicts
#
# Environment (all optional):
#   REPEATS            runs of each case per implementation; the median is shown (default 3)
#   N_10K, N_100K      operations per phase (default 5000, 2000)
#   LIMIT_10K, LIMIT_100K  byte limit in full mode (default 20000000, 100000000)
#   SWIFT_BUILD_FLAGS  extra flags for `swift build` (e.g. "-j 1")
#   WORK_DIR           where the caches are created (default: a new dir under ${TMPDIR:-/tmp})
#   SKIP_BUILD=1       use the already built release binary
#   EASEL_FLAGS        extra flags for our workload, e.g. "--trim-ratio 1 --access-resolution 0"
#                      for a like-for-like run (trim exactly to the limit; every get updates
#                      the access date, as diskcache's least-recently-used policy does)
set -euo pipefail

PEERS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="$(dirname "$PEERS_DIR")"
VENV="$BENCH_DIR/.venv-peers"

REPEATS="${REPEATS:-3}"
N_10K="${N_10K:-5000}"
N_100K="${N_100K:-2000}"
LIMIT_10K="${LIMIT_10K:-20000000}"
LIMIT_100K="${LIMIT_100K:-100000000}"

log() { echo "[diskcache-compare] $*" >&2; }

# 1. diskcache in its own venv.
if ! "$VENV/bin/python" -c 'import diskcache' >/dev/null 2>&1; then
    log "installing diskcache into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check diskcache
fi
PY="$VENV/bin/python"
DISKCACHE_VERSION="$("$PY" -c 'import diskcache; print(diskcache.__version__)')"

# 2. Our workload, release build.
cd "$BENCH_DIR"
# shellcheck disable=SC2086
if [ "${SKIP_BUILD:-0}" != "1" ]; then
    log "building DiskCachePeerWorkload (release)"
    swift build -c release --product DiskCachePeerWorkload ${SWIFT_BUILD_FLAGS:-} >&2
fi
# shellcheck disable=SC2086
BIN="$(swift build -c release --show-bin-path ${SWIFT_BUILD_FLAGS:-})/DiskCachePeerWorkload"
[ -x "$BIN" ] || { log "missing $BIN"; exit 1; }

# 3. Run both, alternating, each run in a fresh directory.
if [ -n "${WORK_DIR:-}" ]; then
    mkdir -p "$WORK_DIR"
    WORK="$(mktemp -d "$WORK_DIR/diskcache-compare.XXXXXX")"
else
    WORK="$(mktemp -d "${TMPDIR:-/tmp}/diskcache-compare.XXXXXX")"
fi
trap 'rm -rf "$WORK"' EXIT
RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

run_case() { # size count mode limit
    local size="$1" count="$2" mode="$3" limit="$4" rep dir
    for rep in $(seq 1 "$REPEATS"); do
        log "size=$size mode=$mode run $rep/$REPEATS"
        dir="$WORK/easel-$size-$mode-$rep"
        # shellcheck disable=SC2086
        "$BIN" --dir "$dir" --size "$size" --count "$count" --mode "$mode" --limit "$limit" ${EASEL_FLAGS:-} >>"$RESULTS"
        rm -rf "$dir"
        for policy in default lru; do
            dir="$WORK/diskcache-$policy-$size-$mode-$rep"
            "$PY" "$PEERS_DIR/diskcache_workload.py" --dir "$dir" --size "$size" --count "$count" --mode "$mode" --limit "$limit" \
                --policy "$policy" >>"$RESULTS"
            rm -rf "$dir"
        done
    done
}

for mode in empty full; do
    run_case 10240 "$N_10K" "$mode" "$LIMIT_10K"
    run_case 102400 "$N_100K" "$mode" "$LIMIT_100K"
done

# 4. The table.
python3 - "$RESULTS" "$DISKCACHE_VERSION" "$REPEATS" "$PEERS_DIR" <<'PY'
import json, statistics, sys
sys.path.insert(0, sys.argv[4])
from figures_out import figure

path, version, repeats = sys.argv[1], sys.argv[2], sys.argv[3]
runs = {}
for line in open(path):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    runs.setdefault((r["size"], r["mode"], r["op"], r["impl"]), []).append(r)

def median_of(rs, field):
    return statistics.median(r[field] for r in rs)

def fmt_size(n):
    return "%d KB" % (n // 1024) if n % 1024 == 0 else "%d B" % n

def fmt_limit(n):
    return "%g MB" % (n / 1e6)

header = ("value", "mode", "op", "N", "easel µs/op", "easel ops/s",
          "default µs/op", "ratio vs default", "LRU µs/op", "ratio vs LRU")
rows, problems = [], []
for size in sorted({k[0] for k in runs}):
    for mode in ("empty", "full"):
        for op in ("set", "get"):
            ours = runs.get((size, mode, op, "easel"), [])
            default = runs.get((size, mode, op, "diskcache-default"), [])
            lru = runs.get((size, mode, op, "diskcache-lru"), [])
            if not ours or not default or not lru:
                problems.append("missing results for %s %s %s" % (fmt_size(size), mode, op))
                continue
            for name, rs in (("easel", ours), ("diskcache default", default), ("diskcache LRU", lru)):
                missed = sum(r["misses"] for r in rs)
                if missed:
                    problems.append("%s: %d misses in %s %s %s (expected hits only)"
                                    % (name, missed, fmt_size(size), mode, op))
            o_ops = median_of(ours, "ops_per_s")
            d_ops, l_ops = median_of(default, "ops_per_s"), median_of(lru, "ops_per_s")
            label = mode if mode == "empty" else "at %s" % fmt_limit(ours[0]["limit"])
            what = "%s values, %s, %s" % (fmt_size(size), "empty cache" if mode == "empty" else "held " + label, op)
            figure("Disk cache", what + ", ops/s in process", "python-diskcache %s (default policy)" % version, o_ops, d_ops, "ops/s", "higher")
            figure("Disk cache", what + ", ops/s in process", "python-diskcache %s (LRU)" % version, o_ops, l_ops, "ops/s", "higher")
            rows.append((fmt_size(size), label, op, str(ours[0]["count"]),
                         "%.1f" % median_of(ours, "mean_us"), "%.0f" % o_ops,
                         "%.1f" % median_of(default, "mean_us"), "%.2fx" % (o_ops / d_ops if d_ops else float("nan")),
                         "%.1f" % median_of(lru, "mean_us"), "%.2fx" % (o_ops / l_ops if l_ops else float("nan"))))

widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
def line(cells):
    return "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

print()
print("EaselStorage DiskCache vs python-diskcache %s, median of %s run(s) each" % (version, repeats))
print("empty: no size limit; at LIMIT: held at its byte limit, each set evicts (diskcache: cull_limit=1)")
print("diskcache twice: its default policy (least-recently-stored: gets never write) and least-recently-used")
print("ops/s = N / sum of per-op times; ratio > 1 means Easel is faster")
print()
print(line(header))
print(line(["-" * w for w in widths]))
for r in rows:
    print(line(r))

# Stored bytes after the set phase (sanity check that both really were held at their limit).
print()
print("stored bytes after the set phase (median): " + "; ".join(
    "%s %s: easel %d, diskcache default %d, LRU %d" % (
        fmt_size(size), mode,
        median_of(runs[(size, mode, "set", "easel")], "stored_bytes"),
        median_of(runs[(size, mode, "set", "diskcache-default")], "stored_bytes"),
        median_of(runs[(size, mode, "set", "diskcache-lru")], "stored_bytes"))
    for size in sorted({k[0] for k in runs}) for mode in ("empty", "full")
    if all((size, mode, "set", name) in runs for name in ("easel", "diskcache-default", "diskcache-lru"))))

if problems:
    print()
    for p in problems:
        print("PROBLEM: " + p)
    sys.exit(1)
PY
