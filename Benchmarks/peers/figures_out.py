"""One figure for `make figures` (scripts/figures.sh): when FIGURES_OUT names a file, a line of
tab-separated fields is appended to it: area, what was measured, the peer, Easel's value, the
peer's value, the unit, whether higher or lower is better, and the goal (a least ratio, or
empty). scripts/figures.py turns the lines into docs/figures.md."""
import os


def figure(area, measure, peer, easel, theirs, unit, better, goal=""):
    path = os.environ.get("FIGURES_OUT")
    if not path or easel is None or theirs is None:
        return
    fields = [area, measure, peer, f"{float(easel):.6g}", f"{float(theirs):.6g}", unit, better, str(goal)]
    with open(path, "a", encoding="utf-8") as out:
        out.write("\t".join(f.replace("\t", " ") for f in fields) + "\n")
