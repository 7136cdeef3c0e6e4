#!/usr/bin/env python3
"""The python-diskcache side of diskcache-compare.sh.

Runs one set phase and one get phase against a diskcache.Cache and prints one
JSON line per phase. DiskCachePeerWorkload (the EaselStorage side) takes the
same arguments, runs the same workload and prints the same lines.

  --dir PATH     a fresh (empty or missing) cache directory
  --size BYTES   value size; values are random bytes (incompressible)
  --count N      operations per phase
  --mode MODE    empty: a new cache without a size limit; N sets of new keys,
                 then N gets of those keys.
                 full: a cache with a size limit of --limit bytes, first filled
                 past the limit (not measured), then N sets of NEW keys, each
                 of which evicts, then N gets of keys that are present.
  --limit BYTES  the size limit in full mode
  --pool K       number of distinct random values cycled through (default 64)

Each operation is timed on its own with time.perf_counter_ns(); the phase's
total is the sum, from which mean, ops/s and percentiles are reported.
"""

import argparse
import json
import os
import sys
import time

import diskcache


def values_pool(size, count):
    return [os.urandom(size) for _ in range(count)]


def summarize(impl, op, args, durations, misses, stored_bytes):
    total = sum(durations)
    ordered = sorted(durations)
    n = len(ordered)
    return {
        "impl": impl,
        "op": op,
        "mode": args.mode,
        "size": args.size,
        "count": n,
        "limit": args.limit if args.mode == "full" else 0,
        "total_ns": total,
        "mean_us": total / n / 1000.0,
        "p50_us": ordered[n // 2] / 1000.0,
        "p99_us": ordered[min(n - 1, (n * 99) // 100)] / 1000.0,
        "ops_per_s": n / (total / 1e9) if total else 0.0,
        "misses": misses,
        "stored_bytes": stored_bytes,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--mode", choices=["empty", "full"], required=True)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--pool", type=int, default=64)
    # default: diskcache's own default policy (least-recently-stored: gets never write);
    # lru: least-recently-used, where every get updates the entry's access time.
    parser.add_argument("--policy", choices=["default", "lru"], default="lru")
    args = parser.parse_args()
    if args.mode == "full" and args.limit <= 0:
        parser.error("--mode full needs --limit > 0")

    values = values_pool(args.size, args.pool)
    policy = "least-recently-used" if args.policy == "lru" else "least-recently-stored"
    perf = time.perf_counter_ns

    if args.mode == "full":
        # cull_limit=1: once the cache's volume reaches size_limit, every set
        # evicts exactly one entry (the least recently used), so with values
        # of one size the cache stays at its limit and each set evicts.
        cache = diskcache.Cache(
            args.dir,
            size_limit=args.limit,
            eviction_policy=policy,
            cull_limit=1,
        )
    else:
        # "No limit": the same policy, with a limit that is never reached.
        cache = diskcache.Cache(
            args.dir,
            size_limit=2**62,
            eviction_policy=policy,
        )

    try:
        if args.mode == "full":
            fill = (args.limit // args.size) * 12 // 10 + 10
            for i in range(fill):
                cache.set("fill-%d" % i, values[i % len(values)])

        keys = ["key-%d" % i for i in range(args.count)]

        durations = [0] * args.count
        for i, key in enumerate(keys):
            value = values[i % len(values)]
            t0 = perf()
            cache.set(key, value)
            durations[i] = perf() - t0
        print(json.dumps(summarize("diskcache-" + args.policy, "set", args, durations, 0, cache.volume())), flush=True)

        if args.mode == "full":
            # The most recently set keys are present; cycle over the newest
            # half of what fits, so no get can miss (gets do not evict).
            present = max(1, min(args.count, (args.limit // args.size) // 2))
            get_keys = [keys[args.count - present + (i % present)] for i in range(args.count)]
        else:
            get_keys = keys

        misses = 0
        for i, key in enumerate(get_keys):
            t0 = perf()
            value = cache.get(key)
            durations[i] = perf() - t0
            if value is None or len(value) != args.size:
                misses += 1
        print(json.dumps(summarize("diskcache-" + args.policy, "get", args, durations, misses, cache.volume())), flush=True)
    finally:
        cache.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
