"""Python side of peers/thumbnail.sh. Each subcommand runs in whichever venv the script picks.

  corpus SAMPLES_DIR OUT_DIR        the mixed corpus: Samples/*.jpg cover-cropped (Lanczos) to three sizes each from
                                    1280x853 to 4000x3000, light grain, q85, every third file progressive (Pillow)
  pngcorpus OUT_DIR JPEG...         the given JPEGs cover-cropped to 1920x1080 and saved as PNG (compress_level 6)
  pyvips OUT_DIR BOX QUALITY JPEG...   pyvips.Image.thumbnail(path, W, height=H) -> OUT_DIR/tn_<stem>.jpg, Q=QUALITY
  pillow OUT_DIR BOX QUALITY JPEG...   Image.open, draft('RGB', box), thumbnail(box, LANCZOS), save JPEG quality=QUALITY
                                       (Pillow and Pillow-SIMD alike: whichever PIL the venv has)
  pyvips-png PNG...                 decode each PNG with pyvips (sequential access, copy_memory)
  pillow-png PNG...                 decode each PNG with Pillow (Image.open(...).load())
  psnr CORPUS_DIR TOOL=DIR...       mean PSNR of each tool's thumbnails against Pillow's Lanczos resize of the full decode
  versions                          print the library versions of the venv
  report RESULTS_TSV                print the final table

The workload subcommands print "loop_seconds=<s>" (time inside the process,
after imports) so that the script can show the interpreter start-up separately.
"""

from figures_out import figure
import math
import os
import sys
import time


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def parse_box(text):
    w, h = text.lower().split("x")
    return int(w), int(h)


# The mixed corpus: real-photo sizes from 1280x853 to 4000x3000, every third file progressive
# (Pillow's progressive script, as a camera app or an image CDN writes it), the rest baseline.
MIXED_SIZES = ((1280, 853), (1920, 1080), (2048, 1536), (2560, 1600), (3000, 2000), (4000, 3000))


def cmd_corpus(samples, out):
    """Each sample, cover-cropped with Lanczos to three of MIXED_SIZES (rotating through them), with a
    light grain (Gaussian, sigma 4) so that upscaled samples keep a photo's entropy, saved at q85 4:2:0."""
    from PIL import Image, ImageChops, ImageOps

    os.makedirs(out, exist_ok=True)
    names = sorted(n for n in os.listdir(samples) if n.lower().endswith((".jpg", ".jpeg")))
    made = progressive = 0
    for index, name in enumerate(names):
        with Image.open(os.path.join(samples, name)) as im:
            rgb = im.convert("RGB")
        for step in range(3):
            w, h = MIXED_SIZES[(index + 2 * step) % len(MIXED_SIZES)]
            big = ImageOps.fit(rgb, (w, h), Image.LANCZOS)
            grain = Image.effect_noise((w, h), 4).convert("RGB")  # centred on 128
            big = ImageChops.add(big, grain, scale=1.0, offset=-128)
            is_progressive = made % 3 == 2
            kind = "prog" if is_progressive else "base"
            big.save(os.path.join(out, f"{stem(name)}-{w}x{h}-{kind}.jpg"), "JPEG", quality=85,
                     progressive=is_progressive, optimize=is_progressive)
            made += 1
            progressive += is_progressive
    print(f"corpus: {made} JPEGs ({progressive} progressive) from {len(names)} samples in {out}")


def cmd_pngcorpus(out, files):
    """The given JPEGs cover-cropped to 1920x1080 and saved as PNG (compress_level 6)."""
    from PIL import Image, ImageOps

    os.makedirs(out, exist_ok=True)
    for path in files:
        with Image.open(path) as im:
            ImageOps.fit(im.convert("RGB"), (1920, 1080), Image.LANCZOS).save(
                os.path.join(out, stem(path) + ".png"), "PNG", compress_level=6)
    print(f"png corpus: {len(files)} PNGs in {out}")


def cmd_pyvips(out, box, quality, files):
    import pyvips

    pyvips.cache_set_max(0)  # the corpus list may repeat files: no operation cache
    w, h = parse_box(box)
    q = int(quality)
    start = time.perf_counter()
    for path in files:
        thumb = pyvips.Image.thumbnail(path, w, height=h)
        thumb.write_to_file(os.path.join(out, f"tn_{stem(path)}.jpg"), Q=q)
    print(f"loop_seconds={time.perf_counter() - start:.6f}")


def cmd_pillow(out, box, quality, files):
    from PIL import Image

    size = parse_box(box)
    q = int(quality)
    start = time.perf_counter()
    for path in files:
        with Image.open(path) as im:
            im.draft("RGB", size)
            im.thumbnail(size, Image.LANCZOS)
            im.save(os.path.join(out, f"tn_{stem(path)}.jpg"), "JPEG", quality=q)
    print(f"loop_seconds={time.perf_counter() - start:.6f}")


def cmd_pyvips_png(files):
    import pyvips

    pyvips.cache_set_max(0)
    start = time.perf_counter()
    for path in files:
        pyvips.Image.new_from_file(path, access="sequential").copy_memory()
    print(f"loop_seconds={time.perf_counter() - start:.6f}")


def cmd_pillow_png(files):
    from PIL import Image

    start = time.perf_counter()
    for path in files:
        with Image.open(path) as im:
            im.load()
    print(f"loop_seconds={time.perf_counter() - start:.6f}")


def psnr(a, b):
    from PIL import ImageChops, ImageStat

    stat = ImageStat.Stat(ImageChops.difference(a, b))
    mse = sum(stat.sum2) / (len(stat.sum2) * a.size[0] * a.size[1])
    return float("inf") if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def cmd_psnr(corpus, pairs):
    from PIL import Image

    tools = [p.split("=", 1) for p in pairs]
    scores = {t: [] for t, _ in tools}
    sizes = {t: {} for t, _ in tools}  # "src->thumb" -> PSNR values
    missing = {t: 0 for t, _ in tools}
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".jpg"):
            continue
        with Image.open(os.path.join(corpus, name)) as im:
            full = im.convert("RGB")  # full decode, no draft
        refs = {}
        for tool, folder in tools:
            path = os.path.join(folder, f"tn_{stem(name)}.jpg")
            if not os.path.exists(path):
                missing[tool] += 1
                continue
            with Image.open(path) as im:
                thumb = im.convert("RGB")
            if thumb.size not in refs:
                refs[thumb.size] = full.resize(thumb.size, Image.LANCZOS)
            value = psnr(thumb, refs[thumb.size])
            scores[tool].append(value)
            key = f"{full.size[0]}x{full.size[1]}->{thumb.size[0]}x{thumb.size[1]}"
            sizes[tool].setdefault(key, []).append(value)
    for tool, _ in tools:
        values = scores[tool]
        mean = sum(values) / len(values) if values else float("nan")
        per_size = "  ".join(f"{k} {sum(v) / len(v):.2f} dB" for k, v in sorted(sizes[tool].items()))
        print(f"{tool}\t{mean:.3f}\t{len(values)}\t{missing[tool]}\t{per_size}")


def cmd_versions():
    try:
        import PIL
        from PIL import features

        print(f"PIL {PIL.__version__} (libjpeg-turbo {features.version('libjpeg_turbo')}, zlib {features.version('zlib')})")
    except ImportError:
        pass
    try:
        import pyvips

        import glob
        import re

        mode = "API" if pyvips.API_mode else "ABI"
        jpeg = ""
        libs = glob.glob(os.path.join(os.path.dirname(os.path.dirname(pyvips.__file__)), "pyvips_binary.libs", "libvips*.so*"))
        if libs:
            found = re.search(rb"(mozjpeg|libjpeg-turbo) version [0-9.]+", open(libs[0], "rb").read())
            jpeg = f", bundled {found.group(0).decode()}" if found else ""
        print(f"pyvips {pyvips.__version__}, libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}"
              f" ({mode} mode{jpeg})")
    except ImportError:
        pass


def cmd_report(path):
    rows = [line.rstrip("\n").split("\t") for line in open(path) if line.strip()]
    # kind, tool, images, wall_s, loop_s, psnr
    by = {(r[0], r[1]): r for r in rows}
    easel = by.get(("thumb", "easel"))
    easel_ips = int(easel[2]) / float(easel[3]) if easel and easel[3] != "-" else None

    def fmt(x, spec):
        width = int(spec.split(".")[0])
        return "-".rjust(width) if x is None else format(x, spec)

    print()
    print("Thumbnails (256x256 contain, JPEG q80, one core; images/s over the whole corpus, process wall time,")
    print("best of the runs; 'in-process' leaves out interpreter start-up and imports;")
    print("'easel/tool' = easel images/s / tool images/s, >1 means easel is faster)")
    print()
    header = f"{'tool':<18} {'images/s':>9} {'in-process':>11} {'easel/tool':>11} {'PSNR dB':>8}"
    print(header)
    print("-" * len(header))
    for r in rows:
        kind, tool, n, wall, loop, score = r
        if kind != "thumb":
            continue
        if wall == "-":
            print(f"{tool:<18} {'failed':>9} {'-':>11} {'-':>11} {'-':>8}")
            continue
        ips = int(n) / float(wall)
        loop_ips = int(n) / float(loop) if loop != "-" else None
        ratio = easel_ips / ips if easel_ips else None
        psnr_value = float(score) if score != "-" else None
        print(f"{tool:<18} {ips:9.1f} {fmt(loop_ips, '11.1f')} {fmt(ratio, '11.2f')} {fmt(psnr_value, '8.2f')}")
        if tool in ("pyvips", "pillow", "pillow-simd", "c-floor") and easel_ips:
            # Whole processes on both sides (start-up and imports included), one core.
            figure("Thumbnails", "256 px JPEG thumbnails of 30 photos (1.1–12 MP), images/s, whole processes, one core",
                   tool, easel_ips, ips, "images/s", "higher")
    png = [r for r in rows if r[0] == "png"]
    if png:
        print()
        print("PNG decode only (1920x1080 PNGs, one core; in-process = read + decode, without start-up;")
        print("easel/tool compares in-process rates, >1 means easel is faster)")
        print()
        header = f"{'tool':<18} {'images/s':>9} {'in-process':>11} {'easel/tool':>11}"
        print(header)
        print("-" * len(header))
        easel_png = next((int(n) / float(loop) for _, tool, n, wall, loop, _ in png
                          if tool == "easel-png-decode" and loop != "-"), None)
        for kind, tool, n, wall, loop, _ in png:
            if wall == "-":
                print(f"{tool:<18} {'failed':>9} {'-':>11} {'-':>11}")
                continue
            in_process = int(n) / float(loop) if loop != '-' else None
            ratio = easel_png / in_process if easel_png and in_process else None
            print(f"{tool:<18} {int(n) / float(wall):9.1f} {fmt(in_process, '11.1f')} {fmt(ratio, '11.2f')}")
            if tool != "easel-png-decode" and easel_png and in_process:
                figure("Formats", "PNG decode, 1920x1080, in process, one core", tool.replace("-png-decode", ""),
                       easel_png, in_process, "images/s", "higher")


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    cmd, args = argv[0], argv[1:]
    if cmd == "corpus":
        cmd_corpus(*args)
    elif cmd == "pngcorpus":
        cmd_pngcorpus(args[0], args[1:])
    elif cmd == "pyvips":
        cmd_pyvips(args[0], args[1], args[2], args[3:])
    elif cmd == "pillow":
        cmd_pillow(args[0], args[1], args[2], args[3:])
    elif cmd == "pyvips-png":
        cmd_pyvips_png(args)
    elif cmd == "pillow-png":
        cmd_pillow_png(args)
    elif cmd == "psnr":
        cmd_psnr(args[0], args[1:])
    elif cmd == "versions":
        cmd_versions()
    elif cmd == "report":
        cmd_report(args[0])
    else:
        print(f"unknown subcommand {cmd}\n{__doc__}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
