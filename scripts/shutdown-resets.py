#!/usr/bin/env python3
"""Counts connections reset by a SIGTERM under load: starts `easel serve` (on the bundled
samples, a fresh cache), runs 32 client threads for 4 s (each asks /health: on a new connection
every time with `new`, on one kept-alive connection with `keep`), sends SIGTERM after 1 s, and
prints how each request ended: answered, reset, refused (the server had stopped listening) or a
clean end of stream. Loopback only; bounded in time.

Usage: scripts/shutdown-resets.py [.build/debug/easel] [new|keep] [RUNS]
"""
import os, re, signal, socket, subprocess, sys, tempfile, threading, time

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/easel"
mode = sys.argv[2] if len(sys.argv) > 2 else "new"
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 1


def run_once():
    cache = tempfile.mkdtemp(prefix="easel-shutdown-")
    server = subprocess.Popen([binary, "serve", "--port", "0", "--cache-dir", cache],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    port = int(re.search(r":(\d+)/", server.stdout.readline().decode()).group(1))
    counts = {"answered": 0, "reset": 0, "refused": 0, "eof": 0, "other": 0}
    lock = threading.Lock()
    stop = time.time() + 4

    def bump(key):
        with lock:
            counts[key] += 1

    def client():
        conn = None
        while time.time() < stop:
            try:
                if conn is None or mode == "new":
                    if conn:
                        conn.close()
                    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
                conn.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                received = b""
                while not received.endswith(b"ok\n"):
                    data = conn.recv(4096)
                    if not data:
                        bump("eof")
                        conn.close()
                        conn = None
                        break
                    received += data
                else:
                    bump("answered")
            except (ConnectionResetError, BrokenPipeError):
                bump("reset")
                conn = None
            except ConnectionRefusedError:
                bump("refused")
                conn = None
                time.sleep(0.01)
            except Exception:
                bump("other")
                conn = None

    threads = [threading.Thread(target=client) for _ in range(32)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    os.kill(server.pid, signal.SIGTERM)
    for thread in threads:
        thread.join()
    server.wait(timeout=60)
    return counts


for _ in range(runs):
    print(mode, run_once(), flush=True)
