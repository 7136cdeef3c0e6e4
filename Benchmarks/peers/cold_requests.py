#!/usr/bin/env python3
"""Requests every path once, split among CLIENTS threads (thread k takes paths k, k+CLIENTS, …),
each thread on its own keep-alive connection, all threads released together. Every answer must be
200 with the expected Content-Type and a non-empty body, or it exits 1 (the first problems on
stderr). Prints one JSON object: seconds from the first request to the last answer, requests,
body bytes, and the median and slowest request in seconds.

    cold_requests.py HOST:PORT CLIENTS PATHS_FILE [ACCEPT [CONTENT_TYPE]]

ACCEPT is sent as the Accept header (default image/jpeg); CONTENT_TYPE is what every answer's
Content-Type must start with (default: ACCEPT). Each socket operation times out after
EASEL_CLIENT_TIMEOUT seconds (default 60), so a stuck server fails the run instead of hanging it."""
import http.client
import json
import os
import statistics
import sys
import threading
import time

host, port = sys.argv[1].rsplit(":", 1)
clients = int(sys.argv[2])
paths = [line.strip() for line in open(sys.argv[3]) if line.strip()]
accept = sys.argv[4] if len(sys.argv) > 4 else "image/jpeg"
expected_type = sys.argv[5] if len(sys.argv) > 5 else accept
timeout = float(os.environ.get("EASEL_CLIENT_TIMEOUT", "60"))
clients = max(1, min(clients, len(paths)))

shares = [paths[k::clients] for k in range(clients)]
barrier = threading.Barrier(clients + 1, timeout=timeout)
ends = [0.0] * clients
latencies = [[] for _ in range(clients)]
sizes = [0] * clients
errors = []
lock = threading.Lock()


def worker(k):
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.connect()  # connected before the clock starts
    except OSError as error:
        with lock:
            errors.append(f"connect: {error}")
        barrier.abort()
        return
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        return
    try:
        for path in shares[k]:
            start = time.perf_counter()
            conn.request("GET", path, headers={"Accept": accept})
            response = conn.getresponse()
            body = response.read()
            latencies[k].append(time.perf_counter() - start)
            sizes[k] += len(body)
            content_type = response.getheader("Content-Type", "")
            if response.status != 200 or not content_type.startswith(expected_type) or not body:
                with lock:
                    errors.append(f"{path}: HTTP {response.status}, Content-Type {content_type!r}, {len(body)} bytes")
                return
    except (OSError, http.client.HTTPException) as error:
        with lock:
            errors.append(f"{path}: {type(error).__name__}: {error}")
        return
    finally:
        ends[k] = time.perf_counter()
        conn.close()


threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(clients)]
for thread in threads:
    thread.start()
try:
    barrier.wait()
except threading.BrokenBarrierError:
    pass
start = time.perf_counter()
for thread in threads:
    thread.join()
if errors:
    for error in errors[:10]:
        print(error, file=sys.stderr)
    sys.exit(1)
every = [t for share in latencies for t in share]
print(json.dumps({
    "seconds": round(max(ends) - start, 6),
    "requests": len(every),
    "bytes": sum(sizes),
    "median_request_seconds": round(statistics.median(every), 6),
    "slowest_request_seconds": round(max(every), 6),
}))
