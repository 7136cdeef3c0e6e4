"""A running `easel serve` on 127.0.0.1 for the Python checks (compat_test.py, thumbor_suite.py…), and
their deviations files' reader.

Every wait is bounded: start-up within 30 s, shutdown within 20 s.
"""
import json, os, socket, subprocess, time, urllib.error, urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(easel, work, config, arguments=(), environment=None):
    """Starts `easel serve` with `config` (written to work/easel.json, its `port` chosen here),
    `arguments` and `environment` (variables added to this process's); returns the process and
    its base URL once /health answers."""
    port = free_port()
    config = dict(config, port=port)
    path = os.path.join(work, "easel.json")
    with open(path, "w") as f:
        json.dump(config, f)
    log = open(os.path.join(work, "easel.log"), "w")
    env = dict(os.environ, **(environment or {}))
    process = subprocess.Popen([easel, "serve", "--config", path, *arguments], stdout=log, stderr=subprocess.STDOUT, env=env)
    base = "http://127.0.0.1:%d" % port
    for _ in range(300):
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as response:
                if response.status == 200:
                    return process, base
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)  # bounded start-up wait (30 s), not a wait for a result
    stop(process)
    raise SystemExit("easel serve did not start; its log:\n" + open(log.name).read()[-3000:])


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def deviations(path):
    """The `<pattern>  <reason>` lines of a deviations file (two spaces between; `#` comments and
    blank lines skipped), as (pattern, reason) pairs, in order."""
    entries = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.startswith("#"):
                pattern, _, reason = line.partition("  ")
                entries.append((pattern.strip(), reason.strip()))
    return entries
