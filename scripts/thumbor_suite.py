"""thumbor's own integration URL set against a running `easel serve`.

thumbor's `integration_tests/urls_helpers.py` (vendored unchanged, with its test images and
licence, in Tests/Compat/thumbor/) lists every option and filter; its PIL-engine test asks
`/unsafe/{options}/{image}` for every option on every image (the single set) and expects 200
each time. This asks the same paths under `/thumbor/`, and also the combined set thumbor
defines (`combined_dataset`: options stacked). An answer is a pass when it is a 200 whose body
is what it should be (thumbor's test asks only for the 200): an image Pillow opens (AVIF and
HEIC, which Pillow here does not read, by their `ftyp` brand), or for `meta/` a JSON document with
thumbor's keys.

Expected deviations are listed, each with its reason, in Tests/Compat/thumbor/deviations.txt:
`<text in the options>  <reason>`. A failure that no entry covers fails the run, and so does an
entry that no longer matches a failure (the list stays true). Every request is bounded (30 s).

    python3 scripts/thumbor_suite.py .build/debug/easel
"""
import io, json, os, shutil, sys, tempfile, types
import urllib.error, urllib.parse, urllib.request

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import easel_serve  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(ROOT, "Tests", "Compat", "thumbor")
EASEL = os.path.abspath(sys.argv[1])

# urls_helpers.py prints with colorama, which the tests' virtualenv does not need otherwise: an
# empty stand-in (only its colour names are read).
sys.modules["colorama"] = types.SimpleNamespace(Fore=types.SimpleNamespace(GREEN="", RED="", RESET=""))
sys.path.insert(0, SUITE)
import urls_helpers  # noqa: E402  (thumbor's file, unchanged)


def deviations():
    return easel_serve.deviations(os.path.join(SUITE, "deviations.txt"))


def answers_well(path, body):
    """Whether a 200's body is what the path asks for."""
    if "/meta/" in path:
        try:
            document = json.loads(body)["thumbor"]
            return all(key in document for key in ("source", "operations", "target"))
        except (ValueError, KeyError, TypeError):
            return False
    if body[4:12] in (b"ftypavif", b"ftypavis", b"ftypheic", b"ftypheix", b"ftypmif1"):
        return True  # AVIF and HEIC, which this Pillow does not read: their ftyp brand
    try:
        Image.open(io.BytesIO(body)).load()
        return True
    except Exception:  # noqa: BLE001 (any decode failure is a failure here)
        return False


def get(base, path):
    try:
        with urllib.request.urlopen(base + urllib.parse.quote(path, safe="/:(),;[]|*"), timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def main():
    work = tempfile.mkdtemp(prefix="easel-thumbor-suite.")
    config = {"origin": os.path.join(SUITE, "imgs"), "cacheDirectory": os.path.join(work, "cache")}
    server, base = easel_serve.start(EASEL, work, config, ["--allow-unsigned-ad-hoc"])
    try:
        expected = deviations()
        used = set()
        unexpected = []
        results = {}
        for name, dataset in (("single", urls_helpers.single_dataset()), ("combined", urls_helpers.combined_dataset())):
            passed = failed = 0
            for options in dataset:
                path = "/thumbor/unsafe/" + "/".join(options)
                status, body = get(base, path)
                ok = status == 200 and answers_well(path, body)
                if ok:
                    passed += 1
                    continue
                failed += 1
                covering = [pattern for pattern, _ in expected if pattern in path]
                used.update(covering)
                message = body[:120].decode("utf-8", "replace").strip()
                if not covering:
                    unexpected.append("%s %d %s" % (path, status, message))
            results[name] = (passed, passed + failed)
            print("thumbor %s set: %d of %d answered 200 with an image" % (name, passed, passed + failed))
        stale = [pattern for pattern, _ in expected if pattern not in used]
        for line in unexpected:
            print("UNEXPECTED " + line)
        for pattern in stale:
            print("STALE deviation (nothing fails with it any more): " + pattern)
        print("deviations in use: %d (Tests/Compat/thumbor/deviations.txt)" % len(used))
        return 1 if unexpected or stale else 0
    finally:
        easel_serve.stop(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
