#!/usr/bin/env python3
"""Every public symbol of the library modules has a documentation comment.

Reads the symbol graphs `swift package dump-symbol-graph --minimum-access-level public` writes
(DIR, default .build/x86_64-unknown-linux-gnu/symbolgraph) and lists each public symbol of
MODULES that has no doc comment of its own. Not counted: members a type gets from a protocol
it conforms to (their documentation is the protocol's: the graph marks them with
`sourceOrigin`), symbols the compiler made (`init(from:)`, `==`, `hash(into:)` without source
location), and enum cases' and protocol requirements' implementations that repeat their
declaration's docs. Exits 1 with the list when any is missing.

    scripts/doc-coverage.py [DIR]
"""
import json
import os
import sys

MODULES = ["Easel", "EaselStorage", "EaselCodecs", "EaselTables", "EaselRemote", "EaselPipeline", "EaselServer"]
directory = sys.argv[1] if len(sys.argv) > 1 else ".build/x86_64-unknown-linux-gnu/symbolgraph"

missing, total = [], 0
for module in MODULES:
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
            if not location["uri"].startswith("file://" + os.getcwd() + "/Sources/"):
                continue                        # an extension of another package's type
            total += 1
            comment = symbol.get("docComment", {}).get("lines", [])
            if not any(line.get("text", "").strip() for line in comment):
                file = location["uri"].replace("file://" + os.getcwd() + "/", "")
                line = location["position"]["line"] + 1
                missing.append(f"{file}:{line}: {symbol['kind']['displayName'].lower()} {'.'.join(symbol['pathComponents'])}")

print(f"{total - len(missing)} of {total} public symbols documented")
if missing:
    print("\n".join(sorted(missing)))
    sys.exit(1)
