#!/usr/bin/env python3
"""docs/figures.md from one `make figures` run (scripts/figures.sh): WORK/figures.tsv holds the
figures the benchmark scripts measured (Benchmarks/peers/figures_out.py: area, what, peer,
Easel's value, the peer's, unit, higher|lower is better, goal), WORK/runs.tsv each script's
settings, seconds and exit status. Also rewrites README's block between its figures markers
with the headline figures, read from the same rows.

    python3 scripts/figures.py WORK docs/figures.md README.md
"""
import datetime
import os
import platform
import subprocess
import sys

AREAS = ["Thumbnails", "Big photos", "Serving cold", "Serving warm", "Formats", "Disk cache", "Scale-out"]

NOTES = {
    "Thumbnails": "Whole processes on both sides, so start-up counts on both: Python's and its imports for "
                  "the peers, easel's for easel. One core (`taskset`), except the row that uses every core "
                  "(`easel thumbnail --jobs N` against N Pillow processes). The C floor is libjpeg-turbo used "
                  "directly, the least a JPEG thumbnailer can take.",
    "Big photos": "One file a process, both whole processes on one core (`VIPS_CONCURRENCY=1`): peak resident "
                  "memory is the kernel's `ru_maxrss` of each process.",
    "Serving cold": "Every request a cold thumbnail (nothing cached), from a file origin, over keep-alive "
                    "connections from a Python client's 4 threads. thumbor runs 2 processes and keeps no storage; easel is one "
                    "process, starts fresh for each pass and writes each answer to its disk cache.",
    "Serving warm": "The same cached thumbnails, `wrk` on the same two cores as the server; the peers write no "
                    "access log, nor does easel here.",
    "Formats": "In process on both sides where both are libraries (easel's codecs, pyvips), whole processes "
               "where the peer is a command (rsvg-convert, pdftoppm, ffmpeg); one core.",
    "Disk cache": "In process on both sides (EaselStorage's `DiskCache`, python-diskcache), each operation timed "
                  "on its own, the median of the runs.",
    "Scale-out": "A second instance's answers from the shared S3 tier against the same answers computed again; "
                 "the lookup against botocore making the same S3 calls.",
}

# README's five headline figures: (area, words in the measure, words in the peer, how to say it).
HEADLINES = [
    ("Thumbnails", "256 px JPEG thumbnails", "pyvips", "thumbnails from JPEG photos"),
    ("Big photos", "PNG to a 256 px JPEG, peak", "pyvips", None),
    ("Serving cold", "cold thumbnails", "thumbor", "cold thumbnails served"),
    ("Serving warm", "warm 256 px", "nginx", "warm thumbnails served"),
    ("Disk cache", "10 KB values, empty cache, get", "default policy", "disk cache reads (10 KB values)"),
]


def ratio(row):
    easel, theirs, better = float(row["easel"]), float(row["theirs"]), row["better"]
    if easel <= 0 or theirs <= 0:
        return None
    return easel / theirs if better == "higher" else theirs / easel


def number(value):
    value = float(value)
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3g}"


def said(r):
    if r is None:
        return "–"
    word = "ahead" if r >= 1 else "behind"
    return f"**{r:.2f}×** ({word})"


def machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{model or platform.processor()}, {os.cpu_count()} cores, {memory:.0f} GiB, {platform.system()} {platform.release()}"


def commit():
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"]).returncode != 0
    return head + (" (with uncommitted changes)" if dirty else "")


def main(work, page, readme):
    rows = []
    for line in open(os.path.join(work, "figures.tsv"), encoding="utf-8"):
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 8:
            continue
        rows.append(dict(zip(["area", "what", "peer", "easel", "theirs", "unit", "better", "goal"], fields)))
    runs = [line.rstrip("\n").split("\t") for line in open(os.path.join(work, "runs.tsv"), encoding="utf-8") if line.strip()]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    made = commit()

    out = ["# Figures", ""]
    out.append(f"Measured by `make figures` (scripts/figures.sh) on {when}, commit `{made}`, on {machine()}.")
    out.append("")
    out.append("Every row is one measurement made side by side with the named peer, in the same run, by the "
               "script of `Benchmarks/peers/` named at the end of this page, at the size `make figures` gives "
               "it for a two-core machine. **Easel vs peer** says how many times better Easel did: Easel's rate "
               "over the peer's, or the peer's time or memory over Easel's. Above 1 Easel is ahead, below 1 the "
               "peer is. This page is made whole by each run; earlier figures are in git's history "
               "(and in [benchmarks.md](benchmarks.md), the log of every measurement as it was made).")
    for area in AREAS:
        mine = [r for r in rows if r["area"] == area]
        out += ["", f"## {area}", "", NOTES[area], ""]
        if not mine:
            out.append("Not measured in this run (see the runs below).")
            continue
        goals = any(r["goal"] for r in mine)
        out.append("| What | Peer | Easel | Peer | Easel vs peer |" + (" Goal |" if goals else ""))
        out.append("|---|---|---|---|---|" + ("---|" if goals else ""))
        for r in mine:
            value = ratio(r)
            cells = [r["what"], r["peer"], f"{number(r['easel'])} {r['unit']}", f"{number(r['theirs'])} {r['unit']}", said(value)]
            if goals:
                if r["goal"]:
                    goal = float(r["goal"])
                    met = value is not None and value >= goal
                    cells.append(f"≥ {goal:g}×: {'met' if met else 'missed'}")
                else:
                    cells.append("")
            out.append("| " + " | ".join(cells) + " |")
    out += ["", "## The runs", "", "| script | settings | seconds | outcome |", "|---|---|---|---|"]
    for name, settings, seconds, status in runs:
        outcome = "ok" if status == "0" else ("stopped at its time limit" if status in ("124", "137") else f"failed (exit {status})")
        out.append(f"| `Benchmarks/peers/{name}.sh` | `{settings or 'defaults'}` | {seconds} | {outcome} |")
    with open(page, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")

    # README: the headline rows.
    lines = [f"Measured side by side by `make figures` on {when} (commit `{made.split()[0]}`, "
             f"{os.cpu_count()} cores); every figure and how each was measured: [docs/figures.md](docs/figures.md).",
             "", "| | against | Easel vs peer |", "|---|---|---|"]
    for area, measure, peer, words in HEADLINES:
        match = next((r for r in rows if r["area"] == area and measure in r["what"] and peer in r["peer"]), None)
        if match:
            # (The big photo's size is the run's: "peak memory, a 49 MP PNG".)
            words = words or "peak memory, " + match["what"].split(" to ")[0]
            lines.append(f"| {words} | {match['peer']} | {said(ratio(match))} |")
    text = open(readme, encoding="utf-8").read()
    begin, end = "<!-- figures:begin -->", "<!-- figures:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(readme, "w", encoding="utf-8") as f:
        f.write(head + begin + "\n" + "\n".join(lines) + "\n" + end + tail)


if __name__ == "__main__":
    main(*sys.argv[1:4])
