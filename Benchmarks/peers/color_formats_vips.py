"""The pyvips side of color-and-formats.sh (Debian's libvips 8.14 with libheif, aom and libde265:
the same codec libraries easel links). One thread (VIPS_CONCURRENCY=1 and taskset by the
caller), operation cache off. Prints one JSON object.

    color_formats_vips.py avif QUALITY EFFORT REPS FILE.png...   heifsave (AV1) of each PNG
    color_formats_vips.py decode REPS FILE...                   full decode into memory
    color_formats_vips.py psnr REFERENCE.png CANDIDATE...         mean PSNR (RGB) of candidates
    color_formats_vips.py svg SIZE REPS FILE.svg...              each square SVG rendered at SIZE px
    color_formats_vips.py tiff OUT-DIR FILE...                   each file saved as an LZW TIFF
    color_formats_vips.py jxl QUALITY EFFORT REPS FILE.png...    jxlsave of each PNG
    color_formats_vips.py pdf SIZE REPS FILE.pdf...              each first page rendered SIZE px wide
"""
import json
import math
import statistics
import sys
import time

import pyvips

pyvips.cache_set_max(0)


def avif(quality, effort, reps, files):
    images = [pyvips.Image.new_from_file(path).copy_memory() for path in files]
    times, size, outputs = [], 0, []
    for rep in range(reps):
        for path, image in zip(files, images):
            start = time.perf_counter()
            data = image.heifsave_buffer(compression="av1", Q=quality, effort=effort, subsample_mode="on")
            times.append(time.perf_counter() - start)
            if rep == 0:
                size += len(data)
                out = f"{path}.vips-e{effort}.avif"
                with open(out, "wb") as handle:
                    handle.write(data)
                outputs.append(out)
    return {"encodes": len(times), "medianMs": statistics.median(times) * 1000, "totalS": sum(times), "bytes": size, "outputs": outputs}


def decode(reps, files):
    times = []
    for _ in range(reps):
        for path in files:
            start = time.perf_counter()
            pyvips.Image.new_from_file(path, access="sequential").copy_memory()
            times.append(time.perf_counter() - start)
    return {"decodes": len(times), "medianMs": statistics.median(times) * 1000, "totalS": sum(times)}


def svg(size, reps, files):
    scales = [size / pyvips.Image.svgload(path).width for path in files]
    times = []
    for _ in range(reps):
        for path, scale in zip(files, scales):
            start = time.perf_counter()
            pyvips.Image.svgload(path, scale=scale).copy_memory()
            times.append(time.perf_counter() - start)
    return {"decodes": len(times), "medianMs": statistics.median(times) * 1000, "totalS": sum(times)}


def jxl(quality, effort, reps, files):
    images = [pyvips.Image.new_from_file(path).copy_memory() for path in files]
    times, size = [], 0
    for rep in range(reps):
        for image in images:
            start = time.perf_counter()
            data = image.jxlsave_buffer(Q=quality, effort=effort)
            times.append(time.perf_counter() - start)
            if rep == 0:
                size += len(data)
    return {"encodes": len(times), "medianMs": statistics.median(times) * 1000, "totalS": sum(times), "bytes": size}


def pdf(size, reps, files):
    scales = [size / pyvips.Image.pdfload(path).width for path in files]
    times = []
    for _ in range(reps):
        for path, scale in zip(files, scales):
            start = time.perf_counter()
            pyvips.Image.pdfload(path, scale=scale).copy_memory()
            times.append(time.perf_counter() - start)
    return {"decodes": len(times), "medianMs": statistics.median(times) * 1000, "totalS": sum(times)}


def tiff(out, files):
    outputs = []
    for path in files:
        target = f"{out}/{path.rsplit('/', 1)[-1].rsplit('.', 1)[0]}.tif"
        pyvips.Image.new_from_file(path).tiffsave(target, compression="lzw")
        outputs.append(target)
    return {"outputs": outputs}


def psnr(reference, candidates):
    ref = pyvips.Image.new_from_file(reference)[0:3].cast("float")
    values = []
    for path in candidates:
        image = pyvips.Image.new_from_file(path)[0:3].cast("float")
        mse = ((image - ref) ** 2).avg()
        values.append(99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse))
    return {"psnr": statistics.mean(values)}


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "avif":
        result = avif(int(args[0]), int(args[1]), int(args[2]), args[3:])
    elif mode == "decode":
        result = decode(int(args[0]), args[1:])
    elif mode == "svg":
        result = svg(int(args[0]), int(args[1]), args[2:])
    elif mode == "tiff":
        result = tiff(args[0], args[1:])
    elif mode == "jxl":
        result = jxl(int(args[0]), int(args[1]), int(args[2]), args[3:])
    elif mode == "pdf":
        result = pdf(int(args[0]), int(args[1]), args[2:])
    else:
        result = psnr(args[0], args[1:])
    print(json.dumps(result))


main()
