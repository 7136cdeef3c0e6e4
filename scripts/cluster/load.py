#!/usr/bin/env python3
"""A bounded load client for scripts/cluster.sh: GETs URLs round-robin from several threads and
reports every status. Optionally runs a command (killing an instance) after a given number of
requests: the command runs while the requests already started are in flight, and the requests
after those start only once it has finished, so however fast the answers are, most of them meet
what the command did. Prints a JSON summary; exits 1 if any request failed (or the command did)."""
import argparse
import json
import subprocess
import sys
import threading
import time
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
    if args.command and not 0 < args.after < args.requests:
        parser.error("--command needs 0 < --after < --requests")
    paths = [line.strip() for line in open(args.paths) if line.strip()]
    statuses: dict[str, int] = {}
    failures: list[str] = []
    lock = threading.Lock()
    done = 0
    fired = threading.Event()
    command_done = threading.Event()
    if not args.command:
        command_done.set()
    # Requests from `held` on wait for the command. The pool takes requests in order, so every
    # request before `held` is already running or done when one after it waits: `after` of them
    # finish and the command runs, with up to `threads` of them still in flight. One deadline
    # bounds every wait together (the command itself has a timeout within it).
    held = args.after + args.threads
    deadline = time.monotonic() + 90

    def one(index: int) -> None:
        nonlocal done
        path = paths[index % len(paths)]
        if index >= held and not command_done.wait(timeout=max(0.0, deadline - time.monotonic())):
            with lock:
                failures.append(f"{path}: not sent, the command after {args.after} requests had not finished")
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
                subprocess.run(args.command, shell=True, check=True, timeout=60)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
                with lock:
                    failures.append(f"the command failed: {error}")
            finally:
                command_done.set()

    with ThreadPoolExecutor(max_workers=args.threads) as pool:
        list(pool.map(one, range(args.requests)))
    print(json.dumps({"requests": args.requests, "statuses": statuses, "failures": failures[:10], "fired": fired.is_set()}))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
