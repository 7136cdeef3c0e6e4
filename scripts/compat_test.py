"""Drives a real `easel serve` with URLs made by imgproxy's and thumbor's Python clients.

Run by scripts/compat-test.sh (make compat-test). Every wait is bounded.
"""
import base64, hashlib, hmac, io, json, os, random, re, shutil, subprocess, sys, tempfile, time
import urllib.error, urllib.request

from PIL import Image, ImageDraw
from imgproxy import ImgProxy
from libthumbor import CryptoURL

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import easel_serve  # noqa: E402

EASEL = os.path.abspath(sys.argv[1])
IMGPROXY_KEY, IMGPROXY_SALT = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881", "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
THUMBOR_KEY = "MY_SECURE_KEY"
NATIVE_KEY, NATIVE_SALT = "00112233445566778899aabbccddeeff", "5a17"
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def get(path, headers=None):
    request = urllib.request.Request(BASE + path, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def image(body):
    return Image.open(io.BytesIO(body))


def decodes():
    _, _, body = get("/metrics")
    match = re.search(rb"^easel_pipeline_decodes_total(?:\{[^}]*\})? (\d+)", body, re.M)
    return int(match.group(1)) if match else 0


def native_signed(path):
    signature = hmac.new(bytes.fromhex(NATIVE_KEY), bytes.fromhex(NATIVE_SALT) + path.encode(), hashlib.sha256).digest()
    return path + "?s=" + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


work = tempfile.mkdtemp(prefix="easel-compat.")
origin = os.path.join(work, "origin"); os.makedirs(origin)
rng = random.Random(7)
# A flat photo-sized image (800×600) with a noisy, saturated 120×120 patch: where it is, is known.
for name, (px, py) in {"left.jpg": (40, 240), "right.jpg": (640, 240), "centre.jpg": (340, 240)}.items():
    photo = Image.new("RGB", (800, 600), (120, 130, 140))
    draw = ImageDraw.Draw(photo)
    for y in range(py, py + 120, 4):
        for x in range(px, px + 120, 4):
            draw.rectangle([x, y, x + 3, y + 3], fill=(rng.randrange(150, 256), rng.randrange(0, 60), rng.randrange(0, 60)))
    photo.save(os.path.join(origin, name), quality=92)
Image.new("RGB", (800, 600), (10, 200, 30)).save(os.path.join(origin, "share.jpg"), quality=92)
Image.new("RGB", (200, 100), (200, 50, 50)).save(os.path.join(origin, "small.jpg"), quality=92)
Image.new("RGBA", (40, 20), (0, 0, 255, 255)).save(os.path.join(origin, "mark.png"))
config = {
    "origin": origin, "cacheDirectory": os.path.join(work, "cache"),
    "signingKeys": [NATIVE_KEY], "signingSalt": NATIVE_SALT,
    "imgproxyKeys": [IMGPROXY_KEY], "imgproxySalts": [IMGPROXY_SALT], "thumborSecurityKey": THUMBOR_KEY,
    "imgproxyPresets": {"square": "rs:fill:100:100:1"}, "watermark": os.path.join(origin, "mark.png"),
}
server, BASE = easel_serve.start(EASEL, work, config)
try:
    proxy = lambda url, **options: ImgProxy(url, key=IMGPROXY_KEY, salt=IMGPROXY_SALT, **options)

    # Sizes as imgproxy defines them.
    cases = [
        (dict(resizing_type="fill", width=300, height=200, enlarge=True), (300, 200)),
        (dict(resizing_type="fit", width=300, height=300), (300, 225)),
        (dict(resizing_type="fit", width=300, height=0), (300, 225)),
        (dict(resizing_type="auto", width=200, height=300), (200, 150)),   # orientations differ: fit
        (dict(resizing_type="auto", width=300, height=200), (300, 200)),   # both landscape: fill
    ]
    for options, size in cases:
        status, headers, body = get("/imgproxy" + proxy("local:///centre.jpg", extension="jpg", **options)())
        check(status == 200 and image(body).size == size, "imgproxy %s -> %s (got %s %s)" % (options, size, status, image(body).size if status == 200 else body[:80]))
    status, headers, body = get("/imgproxy" + proxy("local:///centre.jpg", resizing_type="force", width=100, height=300)())
    check(status == 200 and image(body).size == (100, 300), "imgproxy rs:force 100x300")
    status, headers, body = get("/imgproxy" + proxy("local:///small.jpg", resizing_type="fill", width=300, height=300)())
    check(status == 200 and image(body).size == (200, 100), "imgproxy rs:fill without enlarge keeps a small source's size: %s" % (image(body).size,))
    status, headers, body = get("/imgproxy" + proxy("local:///small.jpg", resizing_type="fill-down", width=300, height=300)())
    check(status == 200 and image(body).size == (100, 100), "imgproxy rs:fill-down crops a small source to the aspect ratio")
    # DPR multiplies the size, up to the source's.
    status, _, body = get("/imgproxy" + proxy("local:///centre.jpg", resizing_type="fit", width=200, height=200)("dpr:2"))
    check(status == 200 and image(body).size == (400, 300), "imgproxy dpr:2 doubles the size")
    status, _, body = get("/imgproxy" + proxy("local:///small.jpg", resizing_type="fit", width=150, height=150)("dpr:3"))
    check(status == 200 and image(body).size == (200, 100), "imgproxy dpr:3 stops at the source's size")
    # Formats: the extension, the format option, and Accept negotiation without either.
    status, headers, body = get("/imgproxy" + proxy("local:///centre.jpg", width=100, height=100, extension="webp")())
    check(status == 200 and headers.get("Content-Type") == "image/webp", "imgproxy .webp extension answers WebP")
    status, headers, body = get("/imgproxy" + proxy("local:///centre.jpg", width=100, height=100)("f:png"))
    check(status == 200 and headers.get("Content-Type") == "image/png", "imgproxy f:png answers PNG")
    status, headers, body = get("/imgproxy" + proxy("local:///centre.jpg", width=100, height=100)(), {"Accept": "image/avif,image/webp,*/*"})
    check(status == 200 and headers.get("Content-Type") == "image/avif" and "Accept" in headers.get("Vary", ""), "imgproxy without a format negotiates AVIF")
    # Presets, quality, plain sources.
    path = "/rs:fit:50:50/pr:square/q:70/plain/local:///centre.jpg@jpg"
    signature = base64.urlsafe_b64encode(hmac.new(bytes.fromhex(IMGPROXY_KEY), bytes.fromhex(IMGPROXY_SALT) + path.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
    status, _, body = get("/imgproxy/" + signature + path)
    check(status == 200 and image(body).size == (100, 100), "imgproxy preset and plain source")
    # Smart crop: the salient patch is kept wherever it is; centre gravity crops it away at the sides.
    for name, (px, py) in {"left.jpg": (40, 240), "right.jpg": (640, 240), "centre.jpg": (340, 240)}.items():
        status, _, body = get("/imgproxy" + proxy("local:///" + name, resizing_type="fill", width=200, height=600, gravity="sm", extension="png")())
        result = image(body).convert("RGB")
        # The window is 200 wide at scale 1: the patch spans px..px+120 of the source.
        reds = [x for x in range(result.width) if result.getpixel((x, 300))[0] > 140 and result.getpixel((x, 300))[1] < 90]
        check(status == 200 and result.size == (200, 600) and len(reds) >= 100, "imgproxy g:sm keeps the patch of %s (%d red columns)" % (name, len(reds)))
    # Focal point gravity lands to the pixel: fp:0:0 is the top-left window.
    status, _, body = get("/imgproxy" + proxy("local:///left.jpg", resizing_type="fill", width=100, height=100, gravity="fp:0.1375:0.4833", extension="png")())
    # The window is 600×600 (scale 1/6) centred at (110, 290), clamped: x 0..600. The patch (source
    # x 40..160) lands at output x 7..26; centre gravity (window x 100..700) would put flat source
    # x 220 at output x 20, and output x 35 is past the patch either way.
    focal = image(body).convert("RGB") if status == 200 else None
    def red(pixel):
        return pixel[0] > 140 and pixel[1] < 90
    check(status == 200 and focal.size == (100, 100) and red(focal.getpixel((20, 50))) and not red(focal.getpixel((35, 50))),
          "imgproxy fp gravity puts the patch where the focal point says (%s)" % ((focal.getpixel((20, 50)), focal.getpixel((35, 50))) if focal else status,))
    # Crop before resize: crop:200:200:nowe of right.jpg is flat (the patch is far away).
    status, _, body = get("/imgproxy" + proxy("local:///right.jpg", width=0, height=0, extension="png")("c:200:200:nowe"))
    flat = image(body).convert("RGB")
    check(status == 200 and flat.size == (200, 200) and max(abs(a - b) for a, b in zip(flat.getpixel((199, 199)), (120, 130, 140))) <= 4, "imgproxy crop:200:200:nowe")
    # Watermark at the bottom-right corner, opaque.
    status, _, body = get("/imgproxy" + proxy("local:///share.jpg", resizing_type="fit", width=400, height=300, extension="png")("wm:1:soea:0:0:0"))
    marked = image(body).convert("RGB")
    check(status == 200 and marked.getpixel((399, 299)) == (0, 0, 255) and marked.getpixel((360, 280)) == (0, 0, 255)
          and marked.getpixel((359, 280)) != (0, 0, 255) and marked.getpixel((360, 279)) != (0, 0, 255),
          "imgproxy wm:1:soea puts the 40×20 mark in the corner, to the pixel")
    # Signatures and options.
    good = proxy("local:///centre.jpg", width=100, height=100)()
    tampered = good.replace("rs:auto:100:100", "rs:auto:101:100")
    check(get("/imgproxy" + tampered)[0] == 403, "imgproxy tampered URL is 403")
    check(get("/imgproxy" + ImgProxy("local:///centre.jpg", width=100, height=100)())[0] == 403, "imgproxy insecure URL is 403 (unsigned URLs off)")
    status, _, body = get("/imgproxy" + proxy("local:///centre.jpg", width=100, height=100)("foo:1"))
    check(status == 400 and b"foo" in body, "imgproxy unknown option is a 400 naming it")

    # thumbor, through libthumbor.
    crypto = CryptoURL(key=THUMBOR_KEY)
    status, _, body = get("/thumbor" + crypto.generate(width=300, height=200, image_url="centre.jpg"))
    check(status == 200 and image(body).size == (300, 200), "thumbor 300x200 crops to the size")
    status, _, body = get("/thumbor" + crypto.generate(width=300, height=300, fit_in=True, image_url="centre.jpg"))
    check(status == 200 and image(body).size == (300, 225), "thumbor fit-in 300x300")
    status, _, body = get("/thumbor" + crypto.generate(width=300, height=300, fit_in=True, image_url="small.jpg"))
    check(status == 200 and image(body).size == (200, 100), "thumbor fit-in does not upscale")
    status, _, body = get("/thumbor" + crypto.generate(width=400, height=400, image_url="small.jpg"))
    check(status == 200 and image(body).size == (400, 400), "thumbor crop mode upscales")
    status, _, body = get("/thumbor" + crypto.generate(width=300, height=300, fit_in=True, image_url="centre.jpg", filters=["fill(red)", "format(png)"]))
    filled = image(body).convert("RGB")
    check(status == 200 and filled.size == (300, 300) and filled.getpixel((150, 5)) == (255, 0, 0), "thumbor fit-in with fill(red) pads to the box")
    status, headers, body = get("/thumbor" + crypto.generate(width=100, height=100, image_url="centre.jpg", filters=["quality(50)", "format(webp)"]))
    check(status == 200 and headers.get("Content-Type") == "image/webp", "thumbor format(webp)")
    status, _, body = get("/thumbor" + crypto.generate(width=100, height=100, image_url="centre.jpg", filters=["grayscale()", "format(png)"]))
    pixel = image(body).convert("RGB").getpixel((50, 50))
    check(status == 200 and pixel[0] == pixel[1] == pixel[2], "thumbor grayscale()")
    for name, (px, py) in {"left.jpg": (40, 240), "right.jpg": (640, 240)}.items():
        status, _, body = get("/thumbor" + crypto.generate(width=200, height=600, smart=True, image_url=name, filters=["format(png)"]))
        result = image(body).convert("RGB")
        reds = [x for x in range(result.width) if result.getpixel((x, 300))[0] > 140 and result.getpixel((x, 300))[1] < 90]
        check(status == 200 and len(reds) >= 100, "thumbor smart keeps the patch of %s" % name)
    status, _, body = get("/thumbor" + crypto.generate(width=200, height=600, halign="left", image_url="left.jpg", filters=["format(png)"]))
    check(status == 200 and image(body).convert("RGB").getpixel((100, 300))[0] > 140, "thumbor halign left")
    status, _, body = get("/thumbor" + crypto.generate(crop=((0, 0), (200, 200)), width=0, height=0, image_url="right.jpg", filters=["format(png)"]))
    check(status == 200 and image(body).size == (200, 200), "thumbor manual crop AxB:CxD")
    status, _, body = get("/thumbor" + crypto.generate(width=400, height=300, fit_in=True, image_url="share.jpg", filters=["watermark(mark.png,-0,-0,0)", "format(png)"]))
    marked = image(body).convert("RGB")
    check(status == 200 and marked.getpixel((399, 299)) == (0, 0, 255) and marked.getpixel((0, 0)) != (0, 0, 255), "thumbor watermark(-0,-0) at the bottom-right")
    status, _, body = get("/thumbor" + crypto.generate(width=400, height=300, fit_in=True, image_url="share.jpg", filters=["watermark(mark.png,10,20,50)", "format(png)"]))
    marked = image(body).convert("RGB")
    check(status == 200 and max(abs(a - b) for a, b in zip(marked.getpixel((10, 20)), (5, 100, 142))) <= 3 and marked.getpixel((9, 20)) == marked.getpixel((0, 0)),
          "thumbor watermark(10,20,50): half-transparent, 10 px from the left and 20 from the top (%s)" % (marked.getpixel((10, 20)),))
    status, _, body = get("/thumbor" + crypto.generate(width=100, height=100, image_url="centre.jpg", filters=["round_corner(20,255,255,255)", "format(png)"]))
    check(status == 200 and image(body).convert("RGB").getpixel((0, 0)) == (255, 255, 255), "thumbor round_corner")
    good = crypto.generate(width=100, height=100, image_url="centre.jpg")
    check(get("/thumbor" + good.replace("100x100", "101x100"))[0] == 403, "thumbor tampered URL is 403")
    check(get("/thumbor/unsafe/100x100/centre.jpg")[0] == 403, "thumbor unsafe URL is 403 (unsigned URLs off)")
    status, _, body = get("/thumbor" + crypto.generate(width=100, height=100, image_url="centre.jpg", filters=["sepia()"]))
    check(status == 400 and b"sepia" in body, "thumbor unknown filter is a 400 naming it")

    # One request in three styles: one cache entry, one decode, the same bytes. (A fit to PNG:
    # thumbor's fill cuts to the box's ratio before it resizes, as thumbor does, and its JPEG
    # drops alpha where the others composite it: each its own request.)
    before = decodes()
    native = get(native_signed("/images/w=300,h=200,fit=fit,f=png/share.jpg"))
    via_imgproxy = get("/imgproxy" + proxy("local:///share.jpg", resizing_type="fit", width=300, height=200, extension="png")())
    via_thumbor = get("/thumbor" + crypto.generate(width=300, height=200, fit_in=True, image_url="share.jpg", filters=["format(png)"]))
    after = decodes()
    check(native[0] == via_imgproxy[0] == via_thumbor[0] == 200 and native[2] == via_imgproxy[2] == via_thumbor[2],
          "native, imgproxy and thumbor answers are the same bytes")
    check(after - before == 1, "one decode for the three styles (%d)" % (after - before))

    # Info.
    status, _, body = get("/info/centre.jpg")
    info = json.loads(body) if status == 200 else {}
    check(status == 200 and info.get("width") == 800 and info.get("height") == 600 and info.get("format") == "jpeg"
          and info.get("blurhash") and info.get("thumbhash") and re.fullmatch(r"#[0-9a-f]{6}", info.get("dominantColor", "")),
          "GET /info: size, format, placeholders (%s)" % {k: info.get(k) for k in ("width", "format", "blurhash", "dominantColor")})
    status, _, body = get("/imgproxy/info" + proxy("local:///centre.jpg")())
    check(status == 200 and json.loads(body).get("width") == 800, "imgproxy-style /info")

    # Expiring native URLs and easel sign.
    def sign(*args):
        return subprocess.run([EASEL, "sign", *args], check=True, capture_output=True, text=True, timeout=30).stdout.strip()
    fresh = sign("native", "/images/w=64,h=64/centre.jpg", "--key", NATIVE_KEY, "--salt", NATIVE_SALT, "--expires-in", "600")
    check(get(fresh)[0] == 200, "easel sign native --expires-in: 200")
    stale = sign("native", "/images/w=64,h=64/centre.jpg", "--key", NATIVE_KEY, "--salt", NATIVE_SALT, "--expires-at", str(int(time.time()) - 5))
    check(get(stale)[0] == 410, "an expired native URL is 410")
    moved = re.sub(r"exp=(\d+)", lambda m: "exp=%d" % (int(m.group(1)) + 1000), fresh)
    check(get(moved)[0] == 403, "a native URL whose exp was changed is 403")
    options = "g:sm/rs:fill:120:80:1/plain/local:///centre.jpg@webp"
    check(get(sign("imgproxy", options, "--key", IMGPROXY_KEY, "--salt", IMGPROXY_SALT))[0] == 200, "easel sign imgproxy makes a URL the server takes")
    check(sign("thumbor", "300x200/smart/centre.jpg", "--key", THUMBOR_KEY) == "/thumbor" + crypto.generate(width=300, height=200, smart=True, image_url="centre.jpg"),
          "easel sign thumbor equals libthumbor's URL")
finally:
    easel_serve.stop(server)
    if failures:
        print(open(os.path.join(work, "easel.log")).read()[-3000:], file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)

if failures:
    print("compat test FAILED: %d checks" % len(failures), file=sys.stderr)
    sys.exit(1)
print("compat test: OK")
