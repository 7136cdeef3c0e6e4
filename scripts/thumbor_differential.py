"""Real thumbor and `easel serve`, asked the same URLs of the same images, compared answer by answer.

thumbor 7.8.0 from PyPI (its PIL engine, the file loader, no storage, its OpenCV face and feature
detectors on) and easel both run on 127.0.0.1 with one origin directory: thumbor's integration
test images (Tests/Compat/thumbor/imgs), a few of the bundled samples (photos with faces, a
transparent cut-out) and sources made here with Pillow (an animated RGBA GIF, an animated WebP, a
transparent WebP). The URLs are thumbor's integration sets (urls_helpers.py: single and combined)
and this suite's own (`own_dataset`): every built-in filter with three or more realistic parameter
sets, on a photo and alone at the source size in PNG; filters whose order matters, both ways round;
every geometry form; `meta`; PNG, GIF, WebP and transparent sources.

An answer matches when easel's has thumbor's status and, for a 200: the same format, exactly the
same size (and number of frames), and pixels with SSIM >= 0.95 (colour premultiplied by alpha,
per channel, alpha included; every frame); for `meta/`, the JSON equal field by field (numbers
within 1). Every URL that does not match must be covered by an entry of
Tests/Compat/thumbor/differential-deviations.txt, each with its reason; an uncovered mismatch
fails the run, and so does an entry nothing needs any more. The report (counts by set, every
mismatch with what differs, the entry covering it) is written to the file named by
THUMBOR_DIFF_REPORT (default .build/compat/thumbor-differential.txt) and its summary printed.

    .venv-thumbor/bin/python3 scripts/thumbor_differential.py .build/debug/easel

Bounded: every request 60 s, start-ups 30 s; the whole run is under `timeout` in compat-test.sh.
"""
import concurrent.futures, io, json, os, shutil, socket, subprocess, sys, tempfile, time, types
import urllib.error, urllib.parse, urllib.request

import numpy as np
from PIL import Image, ImageSequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import easel_serve  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(ROOT, "Tests", "Compat", "thumbor")
EASEL = os.path.abspath(sys.argv[1])
REPORT = os.environ.get("THUMBOR_DIFF_REPORT", os.path.join(ROOT, ".build", "compat", "thumbor-differential.txt"))
SSIM_BAR = 0.95

sys.modules.setdefault("colorama", types.SimpleNamespace(Fore=types.SimpleNamespace(GREEN="", RED="", RESET="")))
sys.path.insert(0, SUITE)
import urls_helpers  # noqa: E402  (thumbor's file, unchanged)

SAMPLES = ["astronaut.jpg", "chelsea-cat.jpg", "rocket-launchpad-portrait.jpg", "coffee-cup-cutout.png"]


# --- sources -------------------------------------------------------------------------------------

def make_sources(directory):
    """thumbor's test images, some samples, and sources Pillow makes here."""
    for name in os.listdir(os.path.join(SUITE, "imgs")):
        shutil.copy(os.path.join(SUITE, "imgs", name), directory)
    for name in SAMPLES:
        shutil.copy(os.path.join(ROOT, "Samples", name), directory)
    frames = []
    for index in range(4):
        frame = Image.new("RGBA", (120, 80), (0, 0, 0, 0))
        for x in range(120):
            for y in range(80):
                if (x // 20 + y // 20 + index) % 2 == 0:
                    frame.putpixel((x, y), (40 * index + 60, 200 - 30 * index, 90, 255))
        frames.append(frame)
    frames[0].save(os.path.join(directory, "frames.gif"), save_all=True, append_images=frames[1:], duration=100, loop=0, disposal=2)
    frames[0].save(os.path.join(directory, "frames.webp"), save_all=True, append_images=frames[1:], duration=100, loop=0, lossless=True)
    cutout = Image.open(os.path.join(ROOT, "Samples", "coffee-cup-cutout.png")).convert("RGBA").resize((300, 200))
    cutout.save(os.path.join(directory, "cutout.webp"), lossless=True)


# --- the URL sets --------------------------------------------------------------------------------

FILTER_SETS = {
    "brightness": ["brightness(-40)", "brightness(10)", "brightness(60)"],
    "contrast": ["contrast(-30)", "contrast(10)", "contrast(50)"],
    "rgb": ["rgb(10,-10,20)", "rgb(-40,0,40)", "rgb(100,100,-100)"],
    "saturation": ["saturation(0.5)", "saturation(1.5)", "saturation(2)"],
    "colorize": ["colorize(40,80,20,ff0000)", "colorize(0,0,100,00ff00)", "colorize(100,10,10,fabada)"],
    "grayscale": ["grayscale()"],
    "equalize": ["equalize()"],
    "curve": ["curve([(0,0),(255,255)],[(0,50),(128,170),(255,254)],[(0,0),(128,182),(255,252)],[(0,48),(128,144),(255,225)])",
              "curve([(0,0),(64,32),(192,224),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])",
              "curve([(0,255),(255,0)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])"],
    "blur": ["blur(1)", "blur(3)", "blur(8,4)"],
    "sharpen": ["sharpen(6,2.5,false)", "sharpen(2,1,true)", "sharpen(1.5,0.5,true)"],
    "convolution": ["convolution(1;2;1;2;4;2;1;2;1,3,true)", "convolution(-1;-1;-1;-1;8;-1;-1;-1;-1,3,false)",
                    "convolution(0;-1;0;-1;5;-1;0;-1;0,3,false)"],
    "rotate": ["rotate(90)", "rotate(180)", "rotate(270)"],
    "round_corner": ["round_corner(20,255,255,100)", "round_corner(30|10,0,0,0)", "round_corner(12,255,255,255,1)"],
    "fill": ["fill(ff0000)", "fill(auto)", "fill(blue,true)", "fill(transparent)"],
    "background_color": ["background_color(ff0000)", "background_color(fff)", "background_color(00ff0080)"],
    "watermark": ["watermark(rgba-interlaced.png,10,10,50)", "watermark(rgba-interlaced.png,center,center,0)",
                  "watermark(rgba-interlaced.png,-10,-10,30)", "watermark(rgba-interlaced.png,20p,10p,40)",
                  "watermark(rgba-interlaced.png,repeat,repeat,50)", "watermark(rgba-interlaced.png,0,0,0,50,50)"],
    "frame": ["frame(rgba.png)"],
    "quality": ["quality(5)", "quality(50)", "quality(95)"],
    "format": ["format(png)", "format(webp)", "format(jpeg)", "format(gif)"],
    "strip": ["strip_exif()", "strip_icc()"],
    "max_bytes": ["max_bytes(4000)", "max_bytes(10000)", "max_bytes(40000)"],
    "proportion": ["proportion(0.25)", "proportion(0.5)", "proportion(0.8)"],
    "stretch": ["stretch()"],
    "no_upscale": ["no_upscale()"],
    "upscale": ["upscale()"],
    "extract_focal": ["extract_focal()"],
    "focal": ["focal(100x80:300x240)", "focal(0x0:50x50)", "focal(400x400:500x500)"],
    "max_age": ["max_age(600)", "max_age(0)", "max_age(86400)"],
    "noise": ["noise(10)", "noise(40)", "noise(90)"],
}

GEOMETRY = [
    "300x200", "200x300", "-300x200", "300x-200", "-300x-200", "300x0", "0x200", "origx200", "300xorig",
    "origxorig", "100x100", "1000x600",
    "fit-in/300x200", "fit-in/200x300", "fit-in/1000x1000", "adaptive-fit-in/300x200", "full-fit-in/300x200",
    "adaptive-full-fit-in/200x300", "fit-in/-300x200",
    "300x200/left/top", "300x200/right/bottom", "300x200/center/middle", "200x300/left", "200x300/right",
    "300x100/top", "300x100/bottom",
    "smart", "300x200/smart", "200x300/smart", "100x100/smart",
    "10x10:200x200", "10x10:200x200/100x100", "50x30:250x180/fit-in/100x100", "0x0:100x100/300x300",
    "trim", "trim/300x200", "trim:bottom-right/200x200", "trim:top-left:10/fit-in/200x200",
]

PHOTO_FILTERS_ON = "300x200"
FILTER_SOURCES = ["chelsea-cat.jpg", "rgba.png"]
GEOMETRY_SOURCES = ["astronaut.jpg", "chelsea-cat.jpg", "rocket-launchpad-portrait.jpg", "coffee-cup-cutout.png"]
FORMAT_SOURCES = ["rgba.png", "gradient.gif", "animated.gif", "gradient.webp", "frames.gif", "frames.webp", "cutout.webp",
                  "16bit.png", "thumbor-exif.png", "cmyk.jpg", "grayscale.jpg"]
FORMAT_OPTIONS = ["", "200x150", "fit-in/80x80", "filters:format(png)", "filters:grayscale()", "50x50/filters:rotate(90)"]
# Filters whose order changes the answer: thumbor applies them in the URL's order.
ORDERED_FILTERS = ["rgb(60,0,0):grayscale()", "grayscale():rgb(60,0,0)", "blur(3):sharpen(3,1,false)", "sharpen(3,1,false):blur(3)",
                   "contrast(60):brightness(40)", "brightness(40):contrast(60)", "grayscale():colorize(100,0,0,ff0000)",
                   "rotate(90):proportion(0.5)", "equalize():blur(2)", "blur(2):equalize()"]
META_OPTIONS = ["meta/300x200", "meta/fit-in/300x200", "meta/smart", "meta/300x200/smart", "meta/10x10:200x200/100x100",
                "meta/trim/200x200", "meta/-300x200/left/top", "meta/300x200/filters:focal(100x80:300x240)"]


def own_dataset():
    urls = []
    for family, settings in FILTER_SETS.items():
        for setting in settings:
            for source in FILTER_SOURCES:
                urls.append(("filters", "%s/filters:%s/%s" % (PHOTO_FILTERS_ON, setting, source)))
            # alone, at the source's size, in PNG (nothing lossy between the two answers)
            if family not in ("format", "quality", "max_bytes"):
                urls.append(("filters-png", "filters:format(png):%s/%s" % (setting, "chelsea-cat.jpg")))
    for geometry in GEOMETRY:
        for source in GEOMETRY_SOURCES:
            urls.append(("geometry", "%s/%s" % (geometry, source)))
    for source in FORMAT_SOURCES:
        for options in FORMAT_OPTIONS:
            urls.append(("formats", "/".join(part for part in (options, source) if part)))
    for filters in ORDERED_FILTERS:
        for source in ("chelsea-cat.jpg", "rgba.png"):
            urls.append(("filter-order", "filters:format(png):%s/%s" % (filters, source)))
    for options in META_OPTIONS:
        for source in ("astronaut.jpg", "rocket-launchpad-portrait.jpg", "rgba.png"):
            urls.append(("meta", "%s/%s" % (options, source)))
    return urls


def all_urls():
    urls = [("integration-single", "/".join(options)) for options in urls_helpers.single_dataset()]
    urls += [("integration-combined", "/".join(options)) for options in urls_helpers.combined_dataset()]
    seen, unique = set(), []
    for entry in urls + own_dataset():
        if entry[1] not in seen:
            seen.add(entry[1])
            unique.append(entry)
    return unique


# --- the two servers -----------------------------------------------------------------------------

def start_thumbor(origin, work):
    port = easel_serve.free_port()
    conf = os.path.join(work, "thumbor.conf")
    with open(conf, "w") as f:
        f.write("LOADER = 'thumbor.loaders.file_loader'\n")
        f.write("FILE_LOADER_ROOT_PATH = %r\n" % origin)
        f.write("STORAGE = 'thumbor.storages.no_storage'\nRESULT_STORAGE = None\n")
        f.write("DETECTORS = ['thumbor.detectors.face_detector', 'thumbor.detectors.feature_detector']\n")
        f.write("ALLOW_UNSAFE_URL = True\n")
    thumbor = os.path.join(os.path.dirname(sys.executable), "thumbor")
    log = open(os.path.join(work, "thumbor.log"), "w")
    process = subprocess.Popen([thumbor, "--ip=127.0.0.1", "--port=%d" % port, "--conf=%s" % conf],
                               stdout=log, stderr=subprocess.STDOUT)
    base = "http://127.0.0.1:%d" % port
    for _ in range(300):
        try:
            with urllib.request.urlopen(base + "/healthcheck", timeout=5) as response:
                if response.status == 200:
                    return process, base
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)  # bounded start-up wait (30 s), not a wait for a result
    easel_serve.stop(process)
    raise SystemExit("thumbor did not start; its log:\n" + open(log.name).read()[-3000:])


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()
    except (OSError, urllib.error.URLError) as error:
        return 0, "", str(error).encode()


def quoted(path):
    return urllib.parse.quote(path, safe="/:(),;[]|*-.!~_")


# --- comparing -----------------------------------------------------------------------------------

def frames_of(body):
    image = Image.open(io.BytesIO(body))
    frames = [np.asarray(frame.convert("RGBA"), dtype=np.float64) for frame in ImageSequence.Iterator(image)]
    return image.format, frames


def premultiplied(rgba):
    alpha = rgba[..., 3:4] / 255.0
    return np.concatenate([rgba[..., :3] * alpha, rgba[..., 3:4]], axis=2)


def box_mean(a, k):
    """Mean over every k×k window (valid positions only), by summed-area tables."""
    s = np.cumsum(np.cumsum(np.pad(a, ((1, 0), (1, 0))), axis=0), axis=1)
    return (s[k:, k:] - s[:-k, k:] - s[k:, :-k] + s[:-k, :-k]) / (k * k)


def ssim(a, b):
    """Mean SSIM over 7×7 windows and the four channels (the whole image as one window when smaller)."""
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    scores = []
    for channel in range(a.shape[2]):
        x, y = a[..., channel], b[..., channel]
        k = min(7, x.shape[0], x.shape[1])
        mx, my = box_mean(x, k), box_mean(y, k)
        vx = box_mean(x * x, k) - mx * mx
        vy = box_mean(y * y, k) - my * my
        cov = box_mean(x * y, k) - mx * my
        value = ((2 * mx * my + c1) * (2 * cov + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
        scores.append(float(value.mean()))
    return min(scores)


def compare_json(expected, actual, path="$"):
    """The first difference between two JSON values (numbers within 1), or None."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                return "%s.%s missing" % (path, key)
            if key not in expected:
                return "%s.%s not in thumbor's" % (path, key)
            difference = compare_json(expected[key], actual[key], "%s.%s" % (path, key))
            if difference:
                return difference
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return "%s: %d items, thumbor %d" % (path, len(actual), len(expected))
        for index, (e, a) in enumerate(zip(expected, actual)):
            difference = compare_json(e, a, "%s[%d]" % (path, index))
            if difference:
                return difference
        return None
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool):
        return None if abs(expected - actual) <= 1 else "%s: %s, thumbor %s" % (path, actual, expected)
    return None if expected == actual else "%s: %r, thumbor %r" % (path, actual, expected)


def difference(path, thumbor, easel):
    """What differs between thumbor's answer and easel's, or None when they match."""
    (t_status, t_type, t_body), (e_status, e_type, e_body) = thumbor, easel
    if t_status == 0 or e_status == 0:
        # (A refused or timed-out request is never a match, even on both sides.)
        return "no answer: thumbor %d, easel %d" % (t_status, e_status)
    if t_status != e_status:
        return "status %d, thumbor %d" % (e_status, t_status)
    if t_status != 200:
        return None
    if path.startswith("meta/") or "/meta/" in path:
        try:
            return compare_json(json.loads(t_body), json.loads(e_body))
        except ValueError:
            return "meta: not JSON"
    t_kind, e_kind = t_type.split(";")[0].strip(), e_type.split(";")[0].strip()
    if t_kind != e_kind:
        return "format %s, thumbor %s" % (e_kind, t_kind)
    try:
        _, t_frames = frames_of(t_body)
    except Exception:  # noqa: BLE001 (a format this Pillow cannot read: compare the bytes' kind only)
        return None
    try:
        _, e_frames = frames_of(e_body)
    except Exception as error:  # noqa: BLE001
        return "easel's body does not decode: %s" % error
    if len(t_frames) != len(e_frames):
        return "%d frames, thumbor %d" % (len(e_frames), len(t_frames))
    t_size, e_size = t_frames[0].shape[1::-1], e_frames[0].shape[1::-1]
    if t_size != e_size:
        return "size %dx%d, thumbor %dx%d" % (e_size + t_size)
    score = min(ssim(premultiplied(t), premultiplied(e)) for t, e in zip(t_frames[:10], e_frames[:10]))
    if score < SSIM_BAR:
        return "SSIM %.3f" % score
    return None


def deviations():
    return easel_serve.deviations(os.path.join(SUITE, "differential-deviations.txt"))


def covering(entries, path, what):
    """The first entry whose pattern the URL (or `URL => difference`) contains."""
    text = "%s => %s" % (path, what)
    for pattern, reason in entries:
        if pattern in text:
            return pattern, reason
    return None


def main():
    work = tempfile.mkdtemp(prefix="easel-thumbor-diff.")
    origin = os.path.join(work, "imgs")
    os.makedirs(origin)
    make_sources(origin)
    thumbor, t_base = start_thumbor(origin, work)
    try:
        easel, e_base = easel_serve.start(EASEL, work, {"origin": origin, "cacheDirectory": os.path.join(work, "cache")},
                                          ["--allow-unsigned-ad-hoc"])
    except BaseException:
        easel_serve.stop(thumbor)
        raise
    try:
        urls = all_urls()

        def both(entry):
            path = quoted(entry[1])
            return entry, get(t_base + "/unsafe/" + path), get(e_base + "/thumbor/unsafe/" + path)

        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            answers = list(pool.map(both, urls))
        entries = deviations()
        used, counts, lines, unexpected = set(), {}, [], []
        for (name, path), t_answer, e_answer in answers:
            what = difference(path, t_answer, e_answer)
            total, matched, deviating = counts.get(name, (0, 0, 0))
            if what is None:
                counts[name] = (total + 1, matched + 1, deviating)
                continue
            entry = covering(entries, path, what)
            counts[name] = (total + 1, matched, deviating + (1 if entry else 0))
            if entry:
                used.add(entry[0])
                lines.append("DEVIATION %s => %s  [%s]" % (path, what, entry[0]))
            else:
                unexpected.append("MISMATCH %s => %s" % (path, what))
        stale = [pattern for pattern, _ in entries if pattern not in used]
        summary = []
        all_total = all_matched = 0
        for name, (total, matched, deviating) in counts.items():
            all_total, all_matched = all_total + total, all_matched + matched
            summary.append("%-22s %4d URLs: %4d match thumbor (%.1f%%), %4d listed deviations, %4d unexplained"
                           % (name, total, matched, 100.0 * matched / total, deviating, total - matched - deviating))
        summary.append("%-22s %4d URLs: %4d match thumbor (%.1f%%)" % ("all", all_total, all_matched, 100.0 * all_matched / all_total))
        os.makedirs(os.path.dirname(REPORT), exist_ok=True)
        with open(REPORT, "w") as f:
            f.write("thumbor 7.8.0 (PyPI) against easel serve: status, format, size, frames, SSIM >= %.2f, meta field by field\n\n" % SSIM_BAR)
            f.write("\n".join(summary) + "\n\n")
            f.write("\n".join(unexpected + ["STALE deviation: " + p for p in stale] + lines) + "\n")
        print("\n".join(summary))
        for line in unexpected[:200]:
            print(line)
        if len(unexpected) > 200:
            print("... %d more in %s" % (len(unexpected) - 200, REPORT))
        for pattern in stale:
            print("STALE deviation (nothing needs it any more): " + pattern)
        print("report: %s" % REPORT)
        return 1 if unexpected or stale else 0
    finally:
        easel_serve.stop(easel)
        easel_serve.stop(thumbor)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
