#!/usr/bin/env python3
"""A bounded load client for scripts/cluster.sh: GETs URLs round-robin from several threads and
reports every status. Optionally runs a command (killing an instance) after a given number of
requests; the requests after that number start only once the command has finished, so however
fast the answers are, they all meet what the command did. Prints a JSON summary; exits 1 if any
request failed."""
import argparse
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--paths", required=True, help="file with one path per line")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--after", type=int, default=-1, help="run --command after this many requests")
    parser.add_argument("--command", default="")
    args = parser.parse_args()
    paths = [line.strip() for line in open(args.paths) if line.strip()]
    statuses: dict[str, int] = {}
    failures: list[str] = []
    lock = threading.Lock()
    done = 0
    fired = threading.Event()
    command_done = threading.Event()
    if args.after < 0 or not args.command:
        command_done.set()

    def one(index: int) -> None:
        nonlocal done
        path = paths[index % len(paths)]
        # The pool takes requests in order, so every request before `after` is already running
        # or done when one after it waits here: the wait always ends (and is bounded anyway).
        if index >= args.after and not command_done.wait(timeout=60):
            with lock:
                failures.append(f"{path}: the command after {args.after} requests never finished")
            return
        try:
            with urllib.request.urlopen(args.base + path, timeout=30) as response:
                response.read()
                status = response.status
        except urllib.error.HTTPError as error:
            status = error.code
        except Exception as error:  # a connection nginx could not answer at all
            status = 0
            with lock:
                failures.append(f"{path}: {error}")
        with lock:
            statuses[str(status)] = statuses.get(str(status), 0) + 1
            if status != 200 and status != 0:
                failures.append(f"{path}: HTTP {status}")
            done += 1
            fire = done == args.after and not fired.is_set()
            if fire:
                fired.set()
        if fire and args.command:
            try:
                subprocess.run(args.command, shell=True, check=True)
            finally:
                command_done.set()

    with ThreadPoolExecutor(max_workers=args.threads) as pool:
        list(pool.map(one, range(args.requests)))
    print(json.dumps({"requests": args.requests, "statuses": statuses, "failures": failures[:10], "fired": fired.is_set()}))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
