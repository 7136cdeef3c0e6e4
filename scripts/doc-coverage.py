#!/usr/bin/env python3
"""Every public symbol of the library modules has a documentation comment.

Reads the symbol graphs `swift package dump-symbol-graph --minimum-access-level public` writes
(DIR, default .build/x86_64-unknown-linux-gnu/symbolgraph) and lists each public symbol of
MODULES that has no doc comment of its own. Not counted: members a type gets from a protocol
it conforms to (their documentation is the protocol's: the graph marks them with
`sourceOrigin`) and symbols the compiler made (`init(from:)`, `==`, `hash(into:)` without a
source location). Exits 1 with the list when any is missing.

    scripts/doc-coverage.py [DIR]
"""
import json
import os
import sys

MODULES = ["Easel", "EaselStorage", "EaselCodecs", "EaselTables", "EaselRemote", "EaselPipeline", "EaselServer"]
ROOT = os.path.realpath(os.getcwd())
directory = sys.argv[1] if len(sys.argv) > 1 else ".build/x86_64-unknown-linux-gnu/symbolgraph"

missing, total = [], 0
counted = {}
for module in MODULES:
    before = total
    paths = [os.path.join(directory, name) for name in os.listdir(directory)
             if name == f"{module}.symbols.json" or name.startswith(f"{module}@")]
    for path in paths:
        graph = json.load(open(path))
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            if "sourceOrigin" in symbol:       # the protocol's documentation applies
                continue
            location = symbol.get("location")
            if location is None:                # made by the compiler
                continue
            if not location["uri"].startswith("file://" + ROOT + "/Sources/"):
                continue                        # an extension of another package's type
            total += 1
            comment = symbol.get("docComment", {}).get("lines", [])
            if not any(line.get("text", "").strip() for line in comment):
                file = location["uri"].replace("file://" + ROOT + "/", "")
                line = location["position"]["line"] + 1
                missing.append(f"{file}:{line}: {symbol['kind']['displayName'].lower()} {'.'.join(symbol['pathComponents'])}")
    counted[module] = total - before

# A module with nothing counted means a missing graph or paths that did not match: never a pass.
# (Easel re-exports the others and declares nothing of its own.)
empty = [module for module, count in counted.items() if count == 0 and module != "Easel"]
if empty:
    print(f"no public symbols found for {', '.join(empty)} in {directory}: run swift package dump-symbol-graph first")
    sys.exit(1)

print(f"{total - len(missing)} of {total} public symbols documented")
if missing:
    print("\n".join(sorted(missing)))
    sys.exit(1)
