#!/usr/bin/env python3
"""Times GETs of the given paths, one at a time (a keep-alive connection per server), against one
or more servers interleaved: for each path every server in turn, the order rotated from path to
path so that no server always goes first. Prints a JSON list of per-request seconds per server
(in the order given); exits 1 on any answer but 200.

    time_requests.py PATHS_FILE HOST:PORT [HOST:PORT …]"""
import http.client
import json
import sys
import time

paths = [line.strip() for line in open(sys.argv[1]) if line.strip()]
servers = sys.argv[2:]
connections = [http.client.HTTPConnection(*server.rsplit(":", 1), timeout=60) for server in servers]
times = [[] for _ in servers]
for index, path in enumerate(paths):
    order = [(index + k) % len(servers) for k in range(len(servers))]
    for which in order:
        start = time.perf_counter()
        connections[which].request("GET", path)
        response = connections[which].getresponse()
        response.read()
        times[which].append(time.perf_counter() - start)
        if response.status != 200:
            print(f"{servers[which]}{path}: HTTP {response.status}", file=sys.stderr)
            sys.exit(1)
print(json.dumps(times))
