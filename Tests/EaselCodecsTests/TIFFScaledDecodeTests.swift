import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// A TIFF page shrinks on load (issue 40): read in bands of strips or tile rows, each block of
/// the largest of 1/2, 1/4 and 1/8 that covers the size asked for becoming its mean, so the
/// full-size raster never exists. Every layout of the TIFF corpus (strips, tiles, compressions,
/// gray, 16-bit, palette, bilevel, alpha, the orientation tag, pages) decodes shrunk to the block
/// means of its full decode; a photo's thumbnail from the reduced decode is the full decode's
/// within the PSNR bar; a file cut in the middle of a band is an error, not a partial image.
@Suite("TIFF shrink-on-load", .timeLimit(.minutes(2)))
struct TIFFScaledDecodeTests {
    /// The mean of each `factor × factor` block of `bitmap` (the last ones partial): colour
    /// weighed by alpha, alpha rounded — what the shrunk decode computes in C.
    static func blockMeans(_ bitmap: Bitmap, factor: Int) -> Bitmap {
        let width = (bitmap.width + factor - 1) / factor, height = (bitmap.height + factor - 1) / factor
        return painted(width: width, height: height) { bx, by in
            var sums = [0, 0, 0, 0], count = 0
            for y in by * factor..<min(bitmap.height, by * factor + factor) {
                for x in bx * factor..<min(bitmap.width, bx * factor + factor) {
                    let p = bitmap.pixel(x: x, y: y).map(Int.init)
                    for c in 0..<3 { sums[c] += p[c] * p[3] }
                    sums[3] += p[3]
                    count += 1
                }
            }
            let alpha = sums[3]
            return (0..<3).map { alpha == 0 ? 0 : UInt8((sums[$0] + alpha / 2) / alpha) } + [UInt8((alpha + count / 2) / count)]
        }
    }

    /// `shrunk` (stored orientation) against the block means of the full decode: within a level of
    /// rounding (the full decode's straightening of premultiplied alpha rounds once more), colour
    /// where the block is visible at all, alpha always.
    static func expectBlockMeans(_ shrunk: Bitmap, of data: Data, info: ImageInfo, factor: Int, name: String) throws {
        let expected = Self.blockMeans(try ImageDecoder.decode(data, info: info, applyOrientation: false), factor: factor)
        #expect(shrunk.width == expected.width && shrunk.height == expected.height, "\(name) at 1/\(factor)")
        var worst = 0
        for y in 0..<min(shrunk.height, expected.height) {
            for x in 0..<min(shrunk.width, expected.width) {
                let a = shrunk.pixel(x: x, y: y), b = expected.pixel(x: x, y: y)
                let channels = b[3] == 0 ? [3] : [0, 1, 2, 3]
                for c in channels { worst = max(worst, abs(Int(a[c]) - Int(b[c]))) }
            }
        }
        #expect(worst <= 1, "\(name) at 1/\(factor): a channel \(worst) levels off the block mean")
    }

    @Test func everyLayoutDecodesShrunkToTheBlockMeansOfItsFullDecode() throws {
        let directory = try TemporaryDirectory()
        for name in try TIFFTests.corpus(in: directory.url) {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            // 67×45 stored; covering 17×12 (stored) is 1/4, 33×22 is 1/2.
            for (box, factor) in [((17, 12), 4), ((33, 22), 2)] {
                let size = ImageDecoder.decodedSize(of: info, covering: (5...8).contains(info.orientation) ? (box.1, box.0) : box)
                let shrunk = try ImageDecoder.decode(data, info: info, covering: box, applyOrientation: false)
                #expect(shrunk.width == (67 + factor - 1) / factor && shrunk.height == (45 + factor - 1) / factor, "\(name) at 1/\(factor)")
                try Self.expectBlockMeans(shrunk, of: data, info: info, factor: factor, name: name)
                // Upright: the size `decodedSize` promised, the orientation tag applied after.
                let turned = try ImageDecoder.decode(data, info: info, covering: (5...8).contains(info.orientation) ? (box.1, box.0) : box)
                #expect(turned.width == size.width && turned.height == size.height, "\(name): \(turned.width)×\(turned.height), \(size)")
            }
        }
    }

    /// Layouts read in many bands at row offsets (301×211, strips of 5 or 16 rows, 16 px tiles)
    /// and pages stored as one strip taller than a band (67×1100: read a scanline at a time),
    /// made by Pillow and libtiff's `tiffcp` and `tiffset`: JPEG's YCbCr (2×2 subsampled), separate
    /// planes, CMYK, 16-bit gray, palette, Group 4 bilevel, unassociated alpha, orientations 3 and 8.
    static func bandedLayouts(in directory: URL) throws -> [String] {
        let program = """
            import os, subprocess, sys
            from PIL import Image
            out = sys.argv[1]
            def base(w, h):
                im = Image.new("RGBA", (w, h))
                im.putdata([((x * 7 + y) % 256, (y * 3) % 256, (x * y) % 256, 255 if (x + y) % 50 < 30 else 90 + (x * 5) % 160)
                            for y in range(h) for x in range(w)])
                return im
            def made(name, image, *tiffcp, orientation=None):
                plain = os.path.join(out, name + ".plain.tif")
                image.save(plain)
                path = os.path.join(out, name)
                subprocess.run(["tiffcp", *tiffcp, plain, path], check=True)
                if orientation:
                    subprocess.run(["tiffset", "-s", "274", str(orientation), path], check=True)
                os.remove(plain)
            small, tall = base(301, 211), base(67, 1100)
            rgb = small.convert("RGB")
            made("rgb-zip-r5.tif", rgb, "-c", "zip", "-r", "5")
            made("rgba-lzw-r5.tif", small, "-c", "lzw", "-r", "5")
            made("rgb-jpeg-ycbcr-r16.tif", rgb, "-c", "jpeg:90", "-r", "16")
            made("rgb-jpeg-ycbcr-tiles.tif", rgb, "-c", "jpeg:90", "-t", "-w", "16", "-l", "16")
            made("gray16-r5.tif", small.convert("I;16"), "-r", "5")
            made("palette-r5.tif", rgb.convert("P", palette=Image.ADAPTIVE, colors=60), "-c", "lzw", "-r", "5")
            made("bilevel-g4-r5.tif", small.convert("1"), "-c", "g4", "-r", "5")
            made("rgb-separate-r5.tif", rgb, "-p", "separate", "-r", "5")
            made("cmyk-r5.tif", rgb.convert("CMYK"), "-r", "5")
            made("rgb-tiles-orientation3.tif", rgb, "-c", "zip", "-t", "-w", "16", "-l", "16", orientation=3)
            made("rgb-r5-orientation8.tif", rgb, "-c", "zip", "-r", "5", orientation=8)
            made("tall-rgb-zip-one-strip.tif", tall.convert("RGB"), "-c", "zip", "-r", "1100")
            made("tall-rgba-one-strip.tif", tall, "-c", "zip", "-r", "1100")
            made("tall-bilevel-g4-one-strip.tif", tall.convert("1"), "-c", "g4", "-r", "1100")
            made("tall-gray16-one-strip.tif", tall.convert("I;16"), "-c", "zip", "-r", "1100")
            made("tall-palette-one-strip.tif", tall.convert("RGB").convert("P", palette=Image.ADAPTIVE, colors=40), "-c", "lzw", "-r", "1100")
            made("tall-jpeg-ycbcr-one-strip.tif", tall.convert("RGB"), "-c", "jpeg:90", "-r", "1100")
            made("tall-rgb-r1500-orientation3.tif", base(67, 1600).convert("RGB"), "-c", "zip", "-r", "1500", orientation=3)
            print("\\n".join(sorted(n for n in os.listdir(out) if n.endswith(".tif"))))
            """
        try #require(FileManager.default.isExecutableFile(atPath: TIFFTests.python), "no \(TIFFTests.python): run `make deps-test`")
        #expect(try runTool(TIFFTests.python, ["-c", program, directory.path]), "Pillow and tiffcp wrote the layouts")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tif") }.sorted()
    }

    @Test func layoutsReadInManyBandsOrAScanlineAtATimeDecodeToTheBlockMeans() throws {
        let directory = try TemporaryDirectory()
        let names = try Self.bandedLayouts(in: directory.url)
        #expect(names.count == 18, "\(names)")
        for name in names {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            for factor in name.hasPrefix("tall") ? [2, 8] : [2, 4, 8] {
                // A box each side of which the factor's decode just covers (stored orientation).
                let box = ((info.width + factor - 1) / factor, (info.height + factor - 1) / factor)
                let shrunk = try ImageDecoder.decode(data, info: info, covering: box, applyOrientation: false)
                #expect(shrunk.width == box.0 && shrunk.height == box.1, "\(name) at 1/\(factor): \(shrunk.width)×\(shrunk.height)")
                try Self.expectBlockMeans(shrunk, of: data, info: info, factor: factor, name: name)
            }
            // What a shrunk decode holds besides its result: a band, never the page's raster (the
            // tall pages' strips are read a scanline at a time: 64 rows and a scanline, with
            // libtiff's 1 MiB read-ahead).
            let page = info.width * info.height * 4
            if name.hasPrefix("tall") {
                #expect(info.shrunkDecodeWorkingBytes <= info.width * 64 * 4 + info.width * 8 + (1 << 20)
                        && info.shrunkDecodeWorkingBytes - (1 << 20) < page / 4,
                        "\(name): \(info.shrunkDecodeWorkingBytes) bytes besides the result, the page is \(page)")
            } else {
                #expect(info.shrunkDecodeWorkingBytes > 0 && info.shrunkDecodeWorkingBytes < page, "\(name): \(info.shrunkDecodeWorkingBytes)")
            }
        }
    }

    /// A 2003×1401 photo as deflate strips (Pillow) and as 256 px tiles (`tiffcp`).
    static func photos(in directory: URL) throws -> [URL] {
        let png = directory.appendingPathComponent("photo.png")
        try ImageEncoder.encode(photoLike(width: 2003, height: 1401), as: .png()).write(to: png)
        let program = """
            import sys
            from PIL import Image
            Image.open(sys.argv[1]).convert("RGB").save(sys.argv[2], compression="tiff_adobe_deflate")
            """
        let strips = directory.appendingPathComponent("strips.tif"), tiles = directory.appendingPathComponent("tiles.tif")
        try #require(FileManager.default.isExecutableFile(atPath: TIFFTests.python), "no \(TIFFTests.python): run `make deps-test`")
        #expect(try runTool(TIFFTests.python, ["-c", program, png.path, strips.path]), "Pillow wrote the strips")
        #expect(try runTool("/usr/bin/tiffcp", ["-t", "-w", "256", "-l", "256", "-c", "zip", strips.path, tiles.path]), "tiffcp wrote the tiles")
        return [strips, tiles]
    }

    @Test func aPhotosThumbnailFromTheReducedDecodeIsTheFullDecodesWithinTheBarAndACutFileIsAnError() throws {
        let directory = try TemporaryDirectory()
        for url in try Self.photos(in: directory.url) {
            let data = try Data(contentsOf: url)
            for (box, factor) in [((256, 256), 4), ((120, 120), 8), ((600, 600), 2), ((1500, 1500), 1)] {
                _ = try expectReducedDecode(of: data, covering: box, factor: factor)
            }
            try expectThumbnailFromTheReducedDecodeWithinTheBar(of: data)
        }
        // Cut in the middle of a band: refused, with libtiff's reason, never a partial image. (The
        // file is Pillow's uncompressed one, whose directory comes first, so the cut leaves it
        // whole and the error is the band's: the info is read from the cut file itself.)
        let plain = directory.url.appendingPathComponent("plain.tif")
        let program = "import sys\nfrom PIL import Image\nImage.open(sys.argv[1]).convert('RGB').save(sys.argv[2])"
        #expect(try runTool(TIFFTests.python, ["-c", program, directory.url.appendingPathComponent("photo.png").path, plain.path]))
        let cut = try Data(contentsOf: plain).prefix(2003 * 1401 * 3 * 3 / 5)
        let info = try ImageDecoder.info(of: cut)
        #expect(info.width == 2003 && info.height == 1401)
        for box in [(256, 256), (120, 120)] {
            #expect(throws: CodecError.self, "cut, covering \(box)") { try ImageDecoder.decode(cut, info: info, covering: box) }
        }
    }
}
