"""imgproxy's own parser tests, replayed as URLs against a running `easel serve`.

imgproxy's `options/parser/processing_options_test.go` (vendored unchanged, with its licence, in
Tests/Compat/imgproxy/) calls imgproxy's parser with a path, settings and client features, and
asserts an error or the options it expects. Tests/Compat/imgproxy/cases.txt writes each test
(and sub-test) as the request it stands for and what a client sees of those options; this
asks each of `easel serve` under `/imgproxy/insecure`, with the test's settings as imgproxy's
environment variables and its `http://images.dev/` served by a loopback origin.

Every test function of the vendored file must have a line (a new upstream test is a failure
until it has one). Expected deviations are listed, each with its reason, in
Tests/Compat/imgproxy/deviations.txt: a failure no entry covers fails the run, and so does an
entry nothing fails with. Every request is bounded (30 s).

    python3 scripts/imgproxy_suite.py .build/debug/easel
"""
import base64, http.server, io, os, re, shutil, sys, tempfile, threading
import urllib.error, urllib.parse, urllib.request

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import easel_serve  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(ROOT, "Tests", "Compat", "imgproxy")
EASEL = os.path.abspath(sys.argv[1])
TYPES = {"jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp", "avif": "image/avif", "jxl": "image/jxl"}


def picture(width, height, blue=128):
    """A JPEG with a gradient (so sizes and crops differ visibly: the pixel at x, y is about
    x * 255 / width, y * 255 / height, blue), its blue channel `blue`, with EXIF and a comment
    (metadata an answer must not carry)."""
    image = Image.new("RGB", (width, height))
    image.putdata([(x * 255 // width, y * 255 // height, blue) for y in range(height) for x in range(width)])
    exif = Image.Exif()
    exif[0x0131] = "easel imgproxy suite"  # Software
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90, exif=exif, comment=b"easel-suite-comment")
    return out.getvalue()


IMAGES = {"/lorem/ipsum.jpg": picture(300, 200), "/lorem/dolor/ipsum.jpg": picture(400, 100)}
# The URL the tests build with `?param=value` is another picture (its blue channel full): an answer
# made from it shows the query reached the origin; any other query is a 404.
QUERIED = {"/lorem/ipsum.jpg?param=value": picture(300, 200, blue=255), "/lorem/dolor/ipsum.jpg?param=value": picture(400, 100, blue=255)}


class Origin(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the library's name)
        parts = urllib.parse.urlsplit(self.path)
        body = QUERIED.get(parts.path + "?" + parts.query) if parts.query else IMAGES.get(parts.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "image/jpeg" if body else "text/plain")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args):
        pass


def cases():
    entries = []
    with open(os.path.join(SUITE, "cases.txt")) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, settings, headers, path, expected = [part.strip() for part in line.rstrip("\n").split(" | ")]
            entries.append((name, settings, headers, path, expected))
    return entries


def test_functions():
    """The test functions of the vendored file (not the commented-out ones)."""
    with open(os.path.join(SUITE, "processing_options_test.go")) as f:
        return re.findall(r"^func \(s \*ProcessingOptionsTestSuite\) (Test\w+)\(", f.read(), re.M)


def deviations():
    return easel_serve.deviations(os.path.join(SUITE, "deviations.txt"))


def expand(path, host):
    path = path.replace("images.dev", host)
    path = re.sub(r"\{b64:([^}]*)\}", lambda m: base64.urlsafe_b64encode(m.group(1).encode()).decode().rstrip("="), path)
    # Go's url.PathEscape: everything but unreserved characters and $&+:=@.
    return re.sub(r"\{esc:([^}]*)\}", lambda m: urllib.parse.quote(m.group(1), safe="$&+:=@"), path)


def get(base, path, headers):
    request = urllib.request.Request(base + "/imgproxy/insecure" + path)
    for header in filter(None, (h.strip() for h in headers.split(" ; "))):
        name, _, value = header.partition(":")
        request.add_header(name.strip(), value.strip())
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def check(expected, status, headers, body, reference, fetch=None, path=""):
    """Why the answer is not what the test expects; None when it is. `reference(path)` is what a
    server without settings answers to `path`; `fetch(path)` asks this line's server (for
    `with=`)."""
    words = expected.split()
    if words[0] == "error":
        # imgproxy answers 404 to a URL its parser refuses; easel a 400 naming the option
        # (docs/compatibility.md, "Status codes").
        return None if status == 400 else "expected the 400 of a refused URL (imgproxy's 404), got %d" % status
    if words[0].startswith("error="):
        return None if status == int(words[0][len("error="):]) else "expected %s, got %d" % (words[0], status)
    if status != 200:
        return "expected 200, got %d: %s" % (status, body[:120].decode("utf-8", "replace"))
    for word in words[1:]:
        if word.startswith("with="):
            # What follows is checked on the answer to the same URL with these options added
            # after the test's own: what the options the Go test asserts do to an image, made
            # visible (a gravity needs a crop to show, a background an extended area).
            added = word[len("with="):]
            status, headers, body = fetch(path.replace("/plain/", added + "/plain/", 1))
            if status != 200:
                return "%s: expected 200, got %d: %s" % (word, status, body[:120].decode("utf-8", "replace"))
            continue
        problem = check_word(word, headers, body, reference)
        if problem:
            return problem
    return None


def check_word(word, headers, body, reference):
    """Why `body` fails one expectation word; None when it passes."""
    if word.startswith("format="):
        want = TYPES[word[len("format="):]]
        if headers.get("Content-Type") != want:
            return "expected %s, got %s" % (want, headers.get("Content-Type"))
    elif word.startswith("size="):
        size = "%dx%d" % Image.open(io.BytesIO(body)).size
        if size != word[len("size="):]:
            return "expected %s, got %s" % (word, size)
    elif word.startswith("px="):
        # px=X,Y:RRGGBB~T: the answer's pixel at X,Y is that colour within T a channel.
        place, _, colour = word[len("px="):].partition(":")
        colour, _, tolerance = colour.partition("~")
        x, y = (int(v) for v in place.split(","))
        want = tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))
        got = Image.open(io.BytesIO(body)).convert("RGB").getpixel((x, y))
        if any(abs(a - b) > int(tolerance or 0) for a, b in zip(got, want)):
            return "expected the pixel at %d,%d near #%s (within %s), got #%02x%02x%02x" % (x, y, colour, tolerance or 0, *got)
    elif word == "no-metadata":
        # The origin's picture carries EXIF and a comment; the answer carries neither.
        if b"Exif\x00\x00" in body or b"easel-suite-comment" in body:
            return "expected no metadata, the answer carries the source's"
    elif word == "source-bytes":
        if body != IMAGES["/lorem/ipsum.jpg"]:
            return "expected the source's bytes as they are"
    elif word.startswith("same-as="):
        if body != reference(word[len("same-as="):]):
            return "expected the bytes of " + word[len("same-as="):]
    elif word.startswith("differs-from="):
        # The option took effect: without it the answer is another.
        if body == reference(word[len("differs-from="):]):
            return "expected other bytes than " + word[len("differs-from="):] + " (the option changed nothing)"
    elif word == "from-query":
        # Made from the picture the URL's query names (blue full), not the one without it.
        image = Image.open(io.BytesIO(body)).convert("RGB")
        blue = sum(image.getdata(band=2)) / (image.size[0] * image.size[1])
        if blue < 200:
            return "expected the picture of the URL with its query (?param=value), mean blue %.0f" % blue
    elif word.startswith("vary~"):
        if word[len("vary~"):] not in headers.get("Vary", ""):
            return "expected Vary with %s, got %r" % (word[len("vary~"):], headers.get("Vary"))
    else:
        return "unknown expectation " + word
    return None


def main():
    work = tempfile.mkdtemp(prefix="easel-imgproxy-suite.")
    origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    host = "127.0.0.1:%d" % origin.server_address[1]
    mark = os.path.join(work, "mark.png")
    Image.new("RGBA", (40, 20), (255, 0, 0, 200)).save(mark)
    entries = cases()
    expected = deviations()
    missing = sorted(set(test_functions()) - {name.split("/")[0] for name, *_ in entries})
    failures, used, passed = [], set(), 0
    reference_server, reference_base = easel_serve.start(
        EASEL, work, {"origin": work, "cacheDirectory": os.path.join(work, "cache-reference"), "allowHosts": [host]},
        ["--allow-unsigned-ad-hoc"], {"IMGPROXY_WATERMARK_PATH": mark})

    def reference(path):
        status, _, body = get(reference_base, expand(path, host), "")
        return body if status == 200 else None

    try:
        groups = {}
        for entry in entries:
            groups.setdefault(entry[1], []).append(entry)
        for settings, group in groups.items():
            environment = {"IMGPROXY_WATERMARK_PATH": mark}
            for pair in filter(None, settings.split("  ")):
                name, _, value = pair.partition("=")
                environment[name] = value.replace("images.dev", host)
            config = {"origin": work, "cacheDirectory": os.path.join(work, "cache-%d" % len(used) + str(passed)), "allowHosts": [host]}
            server, base = easel_serve.start(EASEL, work, config, ["--allow-unsigned-ad-hoc"], environment)
            try:
                for name, _, headers, path, want in group:
                    status, answer_headers, body = get(base, expand(path, host), headers)
                    problem = check(want, status, answer_headers, body, reference,
                                    lambda other, headers=headers: get(base, expand(other, host), headers), path)
                    if problem is None:
                        passed += 1
                        continue
                    covering = [entry for entry, _ in expected if entry == name]
                    used.update(covering)
                    if not covering:
                        failures.append("%s: %s (%s)" % (name, problem, path))
            finally:
                easel_serve.stop(server)
        print("imgproxy parser cases: %d of %d as imgproxy's tests expect" % (passed, len(entries)))
        for line in failures:
            print("UNEXPECTED " + line)
        for name in missing:
            print("MISSING a line in cases.txt for imgproxy's " + name)
        stale = [name for name, _ in expected if name not in used]
        for name in stale:
            print("STALE deviation (nothing fails with it any more): " + name)
        return 1 if failures or missing or stale else 0
    finally:
        easel_serve.stop(reference_server)
        origin.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
