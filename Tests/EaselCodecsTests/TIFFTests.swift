@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// TIFF through libtiff: files Pillow and libtiff's own `tiffcp` write at test time (strips and
/// tiles, every common compression, 8- and 16-bit, gray, palette, RGBA, the orientation tag,
/// several pages) decode to the pixels Pillow reads from them; CMYK goes through its profile;
/// lying headers, damaged strips and a file of ten thousand pages are refused or bounded.
@Suite("TIFF", .timeLimit(.minutes(2)))
struct TIFFTests {
    static let python = BMPAndICOTests.python

    /// The start of a Pillow program: `out` (its first argument), and the 67×45 pattern as `im`
    /// (RGBA, opaque on its left, translucent on its right) and `rgb` (without alpha).
    static let pattern = """
            import sys, os, struct
            from PIL import Image
            out = sys.argv[1]
            w, h = 67, 45
            im = Image.new("RGBA", (w, h))
            im.putdata([((x * 4) % 256, (y * 5) % 256, (x * y) % 256, 255 if x < 30 else 128 + (x * 3) % 128) for y in range(h) for x in range(w)])
            rgb = im.convert("RGB")

            """

    /// Writes Pillow's files, and the RGBA Pillow reads from each (`<name>.rgba`, upright).
    static func corpus(in directory: URL) throws -> [String] {
        let program = pattern + """
            files = {
                "rgb-none.tif": (rgb, {}),
                "rgb-lzw.tif": (rgb, {"compression": "tiff_lzw"}),
                "rgb-deflate.tif": (rgb, {"compression": "tiff_adobe_deflate"}),
                "rgb-packbits.tif": (rgb, {"compression": "packbits"}),
                "rgb-jpeg.tif": (rgb, {"compression": "jpeg", "quality": 95}),
                "rgba-lzw.tif": (im, {"compression": "tiff_lzw"}),
                "gray.tif": (im.convert("L"), {}),
                "gray16.tif": (Image.frombytes("I;16", (w, h), b"".join(struct.pack("<H", v * 257) for v in im.convert("L").getdata())), {}),
                "palette.tif": (rgb.convert("P", palette=Image.ADAPTIVE, colors=60), {}),
                "bilevel.tif": (im.convert("1"), {"compression": "group4"}),
            }
            for name, (image, options) in files.items():
                path = os.path.join(out, name)
                image.save(path, **options)
            # The orientation tag (6: turned a quarter clockwise to view).
            rgb.save(os.path.join(out, "rotated.tif"), tiffinfo={274: 6})
            for name in list(files) + ["rotated.tif"]:
                path = os.path.join(out, name)
                back = Image.open(path)
                if name == "rotated.tif":
                    # (Pillow's own read of this file is not upright: the source, turned.)
                    back = rgb.transpose(Image.Transpose.ROTATE_270)
                if back.mode == "I;16":
                    back = im.convert("L")  # what the 16-bit samples hold, times 257
                open(path + ".rgba", "wb").write(back.convert("RGBA").tobytes())
                open(path + ".size", "w").write(f"{back.width} {back.height}")
            """
        try #require(FileManager.default.isExecutableFile(atPath: python), "no \(python): run `make deps`")
        #expect(try runTool(python, ["-c", program, directory.path]), "Pillow wrote its files")
        // Tiles and several pages, by libtiff's own tool.
        let tiffcp = "/usr/bin/tiffcp"
        try #require(FileManager.default.isExecutableFile(atPath: tiffcp), "no tiffcp: run `make deps` (libtiff-tools)")
        let dir = directory.path
        #expect(try runTool(tiffcp, ["-t", "-w", "16", "-l", "16", "-c", "lzw", "\(dir)/rgba-lzw.tif", "\(dir)/tiled.tif"]))
        try FileManager.default.copyItem(atPath: "\(dir)/rgba-lzw.tif.rgba", toPath: "\(dir)/tiled.tif.rgba")
        #expect(try runTool(tiffcp, ["\(dir)/gray.tif", "\(dir)/rgb-lzw.tif", "\(dir)/palette.tif", "\(dir)/pages.tif"]))
        try FileManager.default.copyItem(atPath: "\(dir)/gray.tif.rgba", toPath: "\(dir)/pages.tif.rgba")
        return ["rgb-none.tif", "rgb-lzw.tif", "rgb-deflate.tif", "rgb-packbits.tif", "rgb-jpeg.tif", "rgba-lzw.tif", "gray.tif",
                "gray16.tif", "palette.tif", "bilevel.tif", "rotated.tif", "tiled.tif", "pages.tif"]
    }

    /// The mean absolute difference over visible pixels' colours and every alpha.
    static func meanDifference(_ bitmap: Bitmap, _ expected: Data) -> Double {
        let bytes = [UInt8](expected)
        var total = 0, count = 0
        bitmap.withUnsafeBytes { pixels in
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width {
                    let at = y * bitmap.rowBytes + x * 4, e = (y * bitmap.width + x) * 4
                    total += abs(Int(pixels[at + 3]) - Int(bytes[e + 3])); count += 1
                    for c in 0..<3 { total += abs(Int(pixels[at + c]) - Int(bytes[e + c])); count += 1 }
                }
            }
        }
        return Double(total) / Double(max(count, 1))
    }

    @Test func pillowsAndTiffcpsFilesDecodeToThePixelsPillowReads() throws {
        let directory = try TemporaryDirectory()
        for name in try Self.corpus(in: directory.url) {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            #expect(info.fileType == .tiff, "\(name)")
            let bitmap = try ImageDecoder.decode(data)
            // Upright: 67×45, or turned by the orientation tag.
            let upright = name == "rotated.tif" ? (45, 67) : (67, 45)
            #expect(bitmap.width == upright.0 && bitmap.height == upright.1, "\(name)")
            let expected = try Data(contentsOf: directory.child(name + ".rgba"))
            let difference = Self.meanDifference(bitmap, expected)
            // Lossless files to the level; with alpha within one (libtiff hands alpha over
            // premultiplied, made straight again); the JPEG-compressed one within two (another IDCT).
            let alpha = name == "rgba-lzw.tif" || name == "tiled.tif"
            #expect(difference <= (name == "rgb-jpeg.tif" ? 2 : alpha ? 1 : 0.01), "\(name): \(difference)")
            #expect(info.hasAlpha == (name == "rgba-lzw.tif" || name == "tiled.tif"), "\(name)")
            #expect(info.isGrayscale == ["gray.tif", "gray16.tif", "bilevel.tif", "pages.tif"].contains(name), "\(name)")
        }
        let pages = try ImageDecoder.info(of: try Data(contentsOf: directory.child("pages.tif")))
        #expect(pages.frameCount == 3 && !pages.isAnimated)
        #expect(try ImageDecoder.info(of: try Data(contentsOf: directory.child("gray16.tif"))).bitDepth == 16)
        #expect(try ImageDecoder.info(of: try Data(contentsOf: directory.child("rotated.tif"))).orientation == 6)
    }

    /// Each page of a file `tiffcp` joins decodes to its own pixels, size and orientation (the
    /// second is turned by its tag); one past the last is `noSuchPage` with the count.
    @Test func everyPageDecodesToItsOwnPixels() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.corpus(in: directory.url)
        let dir = directory.path
        let pages = ["gray.tif", "rotated.tif", "palette.tif", "rgba-lzw.tif"]
        #expect(try runTool("/usr/bin/tiffcp", pages.map { "\(dir)/\($0)" } + ["\(dir)/mixed.tif"]))
        let data = try Data(contentsOf: directory.child("mixed.tif"))
        for (page, name) in pages.enumerated() {
            let info = try ImageDecoder.info(of: data, page: page)
            #expect(info.page == page && info.frameCount == 4 && info.orientation == (name == "rotated.tif" ? 6 : 1), "\(name)")
            #expect(info.hasAlpha == (name == "rgba-lzw.tif") && info.isGrayscale == (name == "gray.tif"), "\(name)")
            let bitmap = try ImageDecoder.decode(data, info: info)
            let upright = name == "rotated.tif" ? (45, 67) : (67, 45)
            #expect(bitmap.width == upright.0 && bitmap.height == upright.1, "\(name)")
            let difference = Self.meanDifference(bitmap, try Data(contentsOf: directory.child(name + ".rgba")))
            #expect(difference <= (name == "rgba-lzw.tif" ? 1 : 0.01), "\(name): \(difference)")
        }
        #expect(throws: CodecError.noSuchPage(page: 4, pages: 4)) { try ImageDecoder.info(of: data, page: 4) }
        // Without auto-rotation (imgproxy's `ar:0`) the orientation tag is left, as EXIF's is.
        let stored = try ImageDecoder.info(of: data, page: 1, autoRotate: false)
        let storedImage = try ImageDecoder.decode(data, info: stored)
        #expect(stored.orientation == 1 && storedImage.width == 67)
        // Pages are counted as far as the page asked for, past the frame limit; one past both
        // the page and the frame limits is refused before any directory is read.
        #expect(try ImageDecoder.info(of: data, limits: DecodingLimits(maxFrames: 2), page: 3).hasAlpha)
        #expect(throws: CodecError.invalidParameters("page 3: pages are numbered from 0 to 2 at most")) {
            try ImageDecoder.info(of: data, limits: configured(DecodingLimits(maxFrames: 3)) { $0.maxPages = 3 }, page: 3)
        }
    }

    /// A pyramidal TIFF (levels marked reduced-resolution, each side halved and rounded up) is
    /// shrunk on load from the level that divides the scale: the full page painted red, its
    /// levels blue, so the pixels say which page was read. A reduced page of another size is no
    /// level; the size is the one a decode of the full page would have.
    @Test func aPyramidalTIFFIsShrunkFromItsLevels() throws {
        let directory = try TemporaryDirectory()
        let program = """
            import sys
            from PIL import Image
            out, sides = sys.argv[1], [(803, 601), (402, 301), (201, 151), (101, 76)]
            pages = [Image.new("RGB", side, (255, 0, 0) if i == 0 else (0, 0, 255)) for i, side in enumerate(sides)]
            pages[0].save(out + "/pyramid.tif", save_all=True, append_images=pages[1:], compression="tiff_adobe_deflate")
            # Only the half level, and a "level" a pixel off.
            pages[0].save(out + "/half.tif", save_all=True, append_images=[pages[1], Image.new("RGB", (200, 151), (0, 0, 255))])
            # A "level" of another kind (with alpha): no level of an opaque page.
            pages[0].save(out + "/other.tif", save_all=True, append_images=[Image.new("RGBA", (402, 301), (0, 0, 255, 128))])
            """
        #expect(try runTool(Self.python, ["-c", program, directory.path]))
        for (name, levels) in [("pyramid.tif", [1, 2, 3]), ("half.tif", [1, 2]), ("other.tif", [1])] {
            for level in levels {
                #expect(try runTool("/usr/bin/tiffset", ["-d", "\(level)", "-s", "254", "1", directory.child(name).path]), "\(name) \(level)")
            }
        }
        let pyramid = try Data(contentsOf: directory.child("pyramid.tif"))
        let info = try ImageDecoder.info(of: pyramid)
        #expect(info.reducedPages == [2: 1, 4: 2, 8: 3] && info.width == 803)
        for (covering, size, colour) in [((100, 75), (101, 76), [UInt8(0), 0, 255, 255]), ((150, 150), (201, 151), [0, 0, 255, 255]),
                                         ((300, 300), (402, 301), [0, 0, 255, 255]), ((800, 600), (803, 601), [255, 0, 0, 255])] {
            let decoded = try ImageDecoder.decode(pyramid, info: info, covering: covering)
            #expect((decoded.width, decoded.height) == size && ImageDecoder.decodedSize(of: info, covering: covering) == size, "\(covering)")
            #expect(decoded.pixel(x: 5, y: 5) == colour, "\(covering): \(decoded.pixel(x: 5, y: 5))")
        }
        // Only a half level: an eighth is that level shrunk by 4; the page a pixel off is no level.
        let half = try Data(contentsOf: directory.child("half.tif"))
        let halfInfo = try ImageDecoder.info(of: half)
        #expect(halfInfo.reducedPages == [2: 1])
        let eighth = try ImageDecoder.decode(half, info: halfInfo, covering: (100, 75))
        #expect(eighth.width == 101 && eighth.height == 76 && eighth.pixel(x: 5, y: 5) == [0, 0, 255, 255])
        #expect(try ImageDecoder.info(of: Data(contentsOf: directory.child("other.tif"))).reducedPages.isEmpty)
        // A page other than the first has no levels.
        #expect(try ImageDecoder.info(of: pyramid, page: 1).reducedPages.isEmpty)
    }

    @Test func cmykGoesThroughItsProfile() throws {
        // Pillow writes the CMYK samples with a CMYK profile of ours; the decode equals those
        // samples converted by that profile (not libtiff's naive formula).
        let directory = try TemporaryDirectory()
        let profile = try #require(ICCProfile.testCMYK(gamma: 1.6))
        try profile.data.write(to: directory.child("cmyk.icc"))
        let program = """
            import sys, os
            from PIL import Image
            out = sys.argv[1]
            im = Image.new("CMYK", (19, 11))
            im.putdata([((x * 13) % 256, (y * 23) % 256, (x * y * 3) % 256, (x + y) * 4) for y in range(11) for x in range(19)])
            icc = open(os.path.join(out, "cmyk.icc"), "rb").read()
            im.save(os.path.join(out, "cmyk.tif"), icc_profile=icc)
            im.save(os.path.join(out, "plain-cmyk.tif"))
            open(os.path.join(out, "cmyk.raw"), "wb").write(im.tobytes())
            """
        try #require(FileManager.default.isExecutableFile(atPath: Self.python), "no \(Self.python): run `make deps`")
        #expect(try runTool(Self.python, ["-c", program, directory.path]), "Pillow wrote its files")
        let raw = [UInt8](try Data(contentsOf: directory.child("cmyk.raw")))
        var samples = painted(width: 19, height: 11) { x, y in Array(raw[((y * 19 + x) * 4)..<((y * 19 + x) * 4 + 4)]) }
        #expect(ColorConverter.convertToSRGB(&samples, from: profile, cmyk: .cmyk))
        let tiff = try Data(contentsOf: directory.child("cmyk.tif"))
        #expect(try ImageDecoder.info(of: tiff).colorProfile.profile?.colorSpace == .cmyk)
        let decoded = try ImageDecoder.decode(tiff)
        #expect(BMPAndICOTests.pixels(decoded) == BMPAndICOTests.pixels(samples))
        // Without a profile: the naive formula, as for JPEG (white where there is no ink).
        let plain = BMPAndICOTests.pixels(try ImageDecoder.decode(try Data(contentsOf: directory.child("plain-cmyk.tif"))))
        let (c, m, yellow, k) = (Int(raw[0]), Int(raw[1]), Int(raw[2]), Int(raw[3]))
        #expect(abs(Int(plain[0][0]) - (255 - c) * (255 - k) / 255) <= 1)
        #expect(abs(Int(plain[0][1]) - (255 - m) * (255 - k) / 255) <= 1 && abs(Int(plain[0][2]) - (255 - yellow) * (255 - k) / 255) <= 1)
    }

    // MARK: Hostile files

    static func tiff(pages: Int = 1, width: Int = 1, height: Int = 1, stripBytes: Int? = nil) -> Data {
        uncompressedTIFF(width: width, height: height, samples: 1, pages: pages, stripBytes: stripBytes)
    }
    static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }

    @Test func aFourthSampleIsAlphaOnlyWhenDeclared() throws {
        // Red with a fourth sample of 0: alpha when declared unassociated (clear), not when it
        // is "unspecified" or has no ExtraSamples tag at all (opaque red, as Pillow reads it).
        for (extra, expected) in [(2, [UInt8]([0, 0, 0, 0])), (0, [255, 0, 0, 255]), (nil, [255, 0, 0, 255])] as [(Int?, [UInt8])] {
            let tiff = uncompressedTIFF(width: 2, height: 1, samples: 4, extraSamples: extra) { _, _ in [255, 0, 0, 0] }
            let info = try ImageDecoder.info(of: tiff)
            #expect(info.hasAlpha == (extra == 2), "\(String(describing: extra))")
            let bitmap = try ImageDecoder.decode(tiff)
            #expect(BMPAndICOTests.pixels(bitmap)[0] == expected, "\(String(describing: extra))")
            #expect(bitmap.isKnownOpaque == (extra != 2))
        }
        // Gray with unassociated alpha (Pillow's LA): libtiff hands it over straight, kept so.
        let directory = try TemporaryDirectory()
        let program = """
            import sys
            from PIL import Image
            im = Image.new("LA", (2, 1)); im.putdata([(200, 128), (50, 255)]); im.save(sys.argv[1])
            """
        #expect(try runTool(Self.python, ["-c", program, directory.child("la.tif").path]), "Pillow wrote its file")
        let la = BMPAndICOTests.pixels(try ImageDecoder.decode(try Data(contentsOf: directory.child("la.tif"))))
        #expect(la == [[200, 200, 200, 128], [50, 50, 50, 255]], "\(la)")
        // Half-transparent declared alpha stays straight: (200, 100, 50) at alpha 128.
        let half = uncompressedTIFF(width: 1, height: 1, samples: 4, extraSamples: 2) { _, _ in [200, 100, 50, 128] }
        let pixel = BMPAndICOTests.pixels(try ImageDecoder.decode(half))[0]
        #expect(pixel[3] == 128 && abs(Int(pixel[0]) - 200) <= 1 && abs(Int(pixel[1]) - 100) <= 1 && abs(Int(pixel[2]) - 50) <= 1)
    }

    @Test func aHugeCanvasADamagedStripAndTenThousandPagesAreBounded() throws {
        // The hand-made writer is right: one page reads back, gray and RGB, turned by its tag.
        #expect(BMPAndICOTests.pixels(try ImageDecoder.decode(Self.tiff())) == [[128, 128, 128, 255]])
        let turned = uncompressedTIFF(width: 2, height: 1, orientation: 8) { x, _ in x == 0 ? [255, 0, 0] : [0, 0, 255] }
        #expect(BMPAndICOTests.pixels(try ImageDecoder.decode(turned)) == [[0, 0, 255, 255], [255, 0, 0, 255]])
        // A 100000×100000 directory: refused from the header.
        #expect(throws: CodecError.tooManyPixels(width: 100_000, height: 100_000, limit: DecodingLimits.default.maxPixels)) {
            try ImageDecoder.info(of: Self.tiff(width: 100_000, height: 100_000, stripBytes: 64))
        }
        // 2000×2000 with a strip of 64 bytes: a typed error, not a read past the end.
        let short = Self.tiff(width: 2000, height: 2000, stripBytes: 64)
        #expect(try ImageDecoder.info(of: short).width == 2000)
        #expect(throws: CodecError.self) { try ImageDecoder.decode(short) }
        do { _ = try ImageDecoder.decode(short) } catch let error as CodecError {
            guard case .corrupt(.tiff, _) = error else { Issue.record("\(error)"); return }
        }
        // Ten thousand pages: counted to one past the frame limit, and the first page decodes.
        let many = Self.tiff(pages: 10_000)
        let info = try ImageDecoder.info(of: many)
        #expect(info.frameCount == DecodingLimits.default.maxFrames + 1)
        #expect(try ImageDecoder.decode(many, info: info).width == 1)
        // A directory that points at itself (a loop) is one page.
        var loop = [UInt8](Self.tiff())
        let nextOffset = 8 + 2 + 10 * 12  // (a one-sample page's directory has 10 entries)
        loop.replaceSubrange(nextOffset..<(nextOffset + 4), with: Self.le32(8))
        #expect(try ImageDecoder.info(of: Data(loop)).frameCount == 1)
        // Truncated anywhere: a typed error.
        let whole = [UInt8](Self.tiff())
        for cut in [4, 9, 20, 60, 132] {
            #expect(throws: CodecError.self) { try ImageDecoder.decode(Data(whole.prefix(cut))) }
        }
    }
}
