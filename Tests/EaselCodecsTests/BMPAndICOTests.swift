@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// BMP and ICO/CUR by our own decoders: files Pillow writes at test time (every bit depth it
/// writes, icons with PNG and BMP entries) decode to exactly the pixels Pillow meant; the layouts
/// Pillow does not write (RLE8, RLE4, 5-6-5 bit fields, 2-bit, top-down rows, OS/2 headers, an
/// embedded profile) are made byte by byte here; lying headers and bombs are refused.
@Suite("BMP and ICO", .timeLimit(.minutes(2)))
struct BMPAndICOTests {
    static let python = DCOnlyDecodeTests.root.appendingPathComponent(".venv-compat/bin/python3").path

    /// Pillow's files and the RGBA it put in each (`<name>.rgba`, with `<name>.size`).
    static func pillowFiles(in directory: URL) throws -> [String] {
        try #require(FileManager.default.isExecutableFile(atPath: python), "no \(python): run `make deps`")
        let program = """
            import sys, os
            from PIL import Image
            out = sys.argv[1]
            w, h = 61, 37
            im = Image.new("RGBA", (w, h))
            im.putdata([((x * 4) % 256, (y * 7) % 256, (x * y) % 256, 255 if x < 40 else (x * 13) % 256) for y in range(h) for x in range(w)])
            def save(name, image, **kw):
                image.save(os.path.join(out, name), **kw)
                rgba = image.convert("RGBA")
                open(os.path.join(out, name + ".rgba"), "wb").write(rgba.tobytes())
                open(os.path.join(out, name + ".size"), "w").write(f"{rgba.width} {rgba.height}")
            save("rgba32.bmp", im)
            save("rgb24.bmp", im.convert("RGB"))
            save("p8.bmp", im.convert("RGB").convert("P", palette=Image.ADAPTIVE, colors=200))
            save("p4.bmp", im.convert("RGB").convert("P", palette=Image.ADAPTIVE, colors=16))
            save("l8.bmp", im.convert("L"))
            save("bw1.bmp", im.convert("1"))
            square = im.resize((64, 64))
            for fmt in ["png", "bmp"]:
                name = f"icon-{fmt}.ico"
                square.save(os.path.join(out, name), sizes=[(16, 16), (32, 32), (48, 48), (64, 64)], bitmap_format=fmt)
                ico = Image.open(os.path.join(out, name))
                for s in [16, 32, 48, 64]:
                    entry = ico.ico.getimage((s, s)).convert("RGBA")
                    open(os.path.join(out, f"{name}.{s}.rgba"), "wb").write(entry.tobytes())
            """
        #expect(try runTool(python, ["-c", program, directory.path]), "Pillow wrote its files")
        return ["rgba32.bmp", "rgb24.bmp", "p8.bmp", "p4.bmp", "l8.bmp", "bw1.bmp"]
    }

    /// The largest difference between a bitmap and RGBA rows, over the colour of visible pixels and
    /// every alpha.
    static func difference(_ bitmap: Bitmap, _ expected: Data) -> Int {
        var worst = 0
        let bytes = [UInt8](expected)
        bitmap.withUnsafeBytes { pixels in
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width {
                    let at = y * bitmap.rowBytes + x * 4, e = (y * bitmap.width + x) * 4
                    worst = max(worst, abs(Int(pixels[at + 3]) - Int(bytes[e + 3])))
                    guard bytes[e + 3] > 0 else { continue }
                    for c in 0..<3 { worst = max(worst, abs(Int(pixels[at + c]) - Int(bytes[e + c]))) }
                }
            }
        }
        return worst
    }

    @Test func pillowsBitmapsDecodeToItsPixels() throws {
        let directory = try TemporaryDirectory()
        for name in try Self.pillowFiles(in: directory.url) {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            #expect(info.fileType == .bmp && info.width == 61 && info.height == 37, "\(name)")
            let bitmap = try ImageDecoder.decode(data)
            #expect(bitmap.width == 61 && bitmap.height == 37)
            #expect(Self.difference(bitmap, try Data(contentsOf: directory.child(name + ".rgba"))) == 0, "\(name)")
            // Alpha where the file has it, and only there.
            #expect(bitmap.isKnownOpaque == (name != "rgba32.bmp"), "\(name)")
        }
        // Icons: each size is its own entry (not the largest shrunk), PNG and BMP entries alike.
        for name in ["icon-png.ico", "icon-bmp.ico"] {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            #expect(info.fileType == .ico && info.width == 64 && info.height == 64, "\(name)")
            #expect(info.entrySizes.map(\.width) == [48, 32, 16], "\(name)")
            for (covering, entry) in [(nil, 64), ((16, 16), 16), ((20, 10), 32), ((33, 33), 48), ((48, 48), 48), ((100, 100), 64)] as [((Int, Int)?, Int)] {
                let bitmap = try ImageDecoder.decode(data, covering: covering)
                #expect(bitmap.width == entry && bitmap.height == entry, "\(name) covering \(String(describing: covering))")
                #expect(ImageDecoder.decodedSize(of: info, covering: covering) == (entry, entry))
                #expect(Self.difference(bitmap, try Data(contentsOf: directory.child("\(name).\(entry).rgba"))) == 0,
                        "\(name) entry \(entry)")
            }
        }
    }

    // MARK: Files made here, byte by byte

    /// A BMP file: the 14-byte file header, `dib` (header, masks, palette), then `pixels`.
    static func bmp(_ dib: [UInt8], pixels: [UInt8]) -> Data {
        let offset = 14 + dib.count, size = offset + pixels.count
        return Data(Array("BM".utf8) + le32(size) + [0, 0, 0, 0] + le32(offset) + dib + pixels)
    }
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
    static func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
    /// A 40-byte info header.
    static func info(width: Int, height: Int, bits: Int, compression: Int = 0, colors: Int = 0, size: Int = 40) -> [UInt8] {
        le32(size) + le32(width) + le32(height) + le16(1) + le16(bits) + le32(compression) + le32(0) + le32(2835) + le32(2835)
            + le32(colors) + le32(0)
    }
    /// Palette entries (blue, green, red, 0) of the given RGB colours.
    static func palette(_ colors: [(UInt8, UInt8, UInt8)]) -> [UInt8] { colors.flatMap { [$0.2, $0.1, $0.0, 0] } }

    /// The RGBA of each pixel, row by row from the top.
    static func pixels(_ bitmap: Bitmap) -> [[UInt8]] {
        var rows: [[UInt8]] = []
        bitmap.withUnsafeBytes { p in
            for y in 0..<bitmap.height {
                for x in 0..<bitmap.width { rows.append(Array(p[(y * bitmap.rowBytes + x * 4)..<(y * bitmap.rowBytes + x * 4 + 4)])) }
            }
        }
        return rows
    }

    static let red: (UInt8, UInt8, UInt8) = (255, 0, 0), green: (UInt8, UInt8, UInt8) = (0, 255, 0)
    static let blue: (UInt8, UInt8, UInt8) = (0, 0, 255), white: (UInt8, UInt8, UInt8) = (255, 255, 255)

    /// Opaque uncompressed BMPs (24-bit, indexed, gray, 1-bit; bottom-up as Pillow writes them,
    /// and one made top-down) shrink on load by 2, 4 and 8: the size a decode at that scale has,
    /// each pixel the rounded mean of its block of the whole decode (the blocks at the right and
    /// bottom edges partial).
    @Test func opaqueBitmapsShrinkOnLoadToTheirBlocksMeans() throws {
        let directory = try TemporaryDirectory()
        _ = try Self.pillowFiles(in: directory.url)
        var files: [(String, Data)] = try ["rgb24.bmp", "p8.bmp", "p4.bmp", "l8.bmp", "bw1.bmp"].map { ($0, try Data(contentsOf: directory.child($0))) }
        // rgb24.bmp top-down: its rows in the other order and its height negative.
        var topDown = files[0].1
        let offset = Int(topDown[10]) | Int(topDown[11]) << 8, stride = ((61 * 24 + 31) / 32) * 4
        let rows = (0..<37).map { topDown[(offset + $0 * stride)..<(offset + ($0 + 1) * stride)] }
        topDown.replaceSubrange(offset..<(offset + 37 * stride), with: rows.reversed().flatMap { $0 })
        withUnsafeBytes(of: Int32(-37).littleEndian) { topDown.replaceSubrange(22..<26, with: $0) }
        files.append(("top-down rgb24.bmp", topDown))
        for (name, data) in files {
            let info = try ImageDecoder.info(of: data)
            #expect(!info.hasAlpha, "\(name)")
            let whole = try ImageDecoder.decode(data, info: info)
            #expect(Self.difference(whole, try Data(contentsOf: directory.child(name.replacingOccurrences(of: "top-down ", with: "") + ".rgba"))) == 0, "\(name)")
            for factor in [2, 4, 8] {
                let size = ((61 + factor - 1) / factor, (37 + factor - 1) / factor)
                let shrunk = try ImageDecoder.decode(data, info: info, covering: size)
                #expect((shrunk.width, shrunk.height) == size && ImageDecoder.decodedSize(of: info, covering: size) == size, "\(name) by \(factor)")
                var worst = 0
                for oy in 0..<size.1 {
                    for ox in 0..<size.0 {
                        var sums = [0, 0, 0], count = 0
                        for y in (oy * factor)..<min(37, oy * factor + factor) {
                            for x in (ox * factor)..<min(61, ox * factor + factor) {
                                let p = whole.pixel(x: x, y: y)
                                for c in 0..<3 { sums[c] += Int(p[c]) }
                                count += 1
                            }
                        }
                        let p = shrunk.pixel(x: ox, y: oy)
                        for c in 0..<3 { worst = max(worst, abs(Int(p[c]) - (sums[c] + count / 2) / count)) }
                        worst = max(worst, 255 - Int(p[3]))
                    }
                }
                #expect(worst == 0, "\(name) by \(factor): off by \(worst)")
            }
        }
    }

    @Test func rleRunsAbsoluteRunsDeltasAndSkippedPixels() throws {
        // RLE8, 4×3, bottom-up: row 0 (bottom) = a run of 2 red, then an absolute run of 3
        // (green, blue, white: the white falls past the width), padded to 16 bits; row 1: a delta
        // of (2, 1) from its start — skipping two pixels of it and the whole of it, to x=2 of
        // row 2; there, 2 white; end of bitmap. Skipped pixels are transparent.
        let rle8: [UInt8] = [2, 0, 0, 3, 1, 2, 3, 0, 0, 0, 0, 2, 2, 1, 2, 3, 0, 1]
        let file8 = Self.bmp(Self.info(width: 4, height: 3, bits: 8, compression: 1, colors: 4)
                             + Self.palette([Self.red, Self.green, Self.blue, Self.white]), pixels: rle8)
        let bitmap8 = try ImageDecoder.decode(file8)
        let clear: [UInt8] = [0, 0, 0, 0], r: [UInt8] = [255, 0, 0, 255], g: [UInt8] = [0, 255, 0, 255]
        let b: [UInt8] = [0, 0, 255, 255], w: [UInt8] = [255, 255, 255, 255]
        #expect(Self.pixels(bitmap8) == [clear, clear, w, w,   // top row (row 2)
                                         clear, clear, clear, clear,
                                         r, r, g, b])          // bottom row
        #expect(!bitmap8.isKnownOpaque)
        // RLE4, 6×1: a run of 3 alternating nibbles (red, green), an absolute run of 3 nibbles
        // (blue, white, green) in 2 bytes (already 16-bit aligned).
        let rle4: [UInt8] = [3, 0x01, 0, 3, 0x23, 0x10, 0, 1]
        let file4 = Self.bmp(Self.info(width: 6, height: 1, bits: 4, compression: 2, colors: 4)
                             + Self.palette([Self.red, Self.green, Self.blue, Self.white]), pixels: rle4)
        #expect(Self.pixels(try ImageDecoder.decode(file4)) == [r, g, r, b, w, g])
    }

    @Test func bitFieldsPalettesOfEveryDepthTopDownRowsAndOS2Headers() throws {
        let r: [UInt8] = [255, 0, 0, 255], g: [UInt8] = [0, 255, 0, 255], b: [UInt8] = [0, 0, 255, 255], w: [UInt8] = [255, 255, 255, 255]
        // 16 bits, 5-6-5 bit fields, 3×1 (rows padded to 8 bytes): red, green, blue.
        let masks = Self.le32(0xF800) + Self.le32(0x07E0) + Self.le32(0x001F)
        let file565 = Self.bmp(Self.info(width: 3, height: 1, bits: 16, compression: 3) + masks,
                               pixels: Self.le16(0xF800) + Self.le16(0x07E0) + Self.le16(0x001F) + [0, 0])
        #expect(Self.pixels(try ImageDecoder.decode(file565)) == [r, g, b])
        // 16 bits, default 5-5-5: white.
        let file555 = Self.bmp(Self.info(width: 1, height: 1, bits: 16), pixels: Self.le16(0x7FFF) + [0, 0])
        #expect(Self.pixels(try ImageDecoder.decode(file555)) == [w])
        // 2 bits: four pixels in one byte, high bits first.
        let file2 = Self.bmp(Self.info(width: 4, height: 1, bits: 2) + Self.palette([Self.red, Self.green, Self.blue, Self.white]),
                             pixels: [0b00_01_10_11, 0, 0, 0])
        #expect(Self.pixels(try ImageDecoder.decode(file2)) == [r, g, b, w])
        // Top-down rows (a negative height), 24 bits, 1×2: red above blue.
        let topDown = Self.bmp(Self.info(width: 1, height: -2, bits: 24), pixels: [0, 0, 255, 0, 255, 0, 0, 0])
        #expect(Self.pixels(try ImageDecoder.decode(topDown)) == [r, b])
        // Bottom-up: the same bytes put blue on top.
        let bottomUp = Self.bmp(Self.info(width: 1, height: 2, bits: 24), pixels: [0, 0, 255, 0, 255, 0, 0, 0])
        #expect(Self.pixels(try ImageDecoder.decode(bottomUp)) == [b, r])
        // OS/2 1.x: a 12-byte header with 16-bit sides and 3-byte palette entries.
        let os2 = Self.bmp(Self.le32(12) + Self.le16(2) + Self.le16(1) + Self.le16(1) + Self.le16(1) + [0, 255, 0, 255, 0, 0],
                           pixels: [0b0100_0000, 0, 0, 0])
        #expect(Self.pixels(try ImageDecoder.decode(os2)) == [g, b])
        // 32 bits with an alpha mask (V4 header): the alpha is kept.
        let v4 = Self.info(width: 1, height: 1, bits: 32, compression: 3, size: 108)
            + Self.le32(0x00FF_0000) + Self.le32(0x0000_FF00) + Self.le32(0x0000_00FF) + Self.le32(Int(0xFF00_0000))
            + [UInt8](repeating: 0, count: 108 - 56)
        let translucent = try ImageDecoder.decode(Self.bmp(v4, pixels: [10, 20, 30, 128]))
        #expect(Self.pixels(translucent) == [[30, 20, 10, 128]] && !translucent.isKnownOpaque)
        #expect(try ImageDecoder.info(of: Self.bmp(v4, pixels: [10, 20, 30, 128])).hasAlpha)
        // An alpha mask in a header of 24-bit pixels (no bit fields read): no alpha.
        let v4rgb = Self.info(width: 1, height: 1, bits: 24, size: 108) + [UInt8](repeating: 0, count: 12) + Self.le32(Int(0xFF00_0000))
            + [UInt8](repeating: 0, count: 108 - 56)
        #expect(try !ImageDecoder.info(of: Self.bmp(v4rgb, pixels: [10, 20, 30, 0])).hasAlpha)
    }

    @Test func anEmbeddedProfileIsAppliedAndALinkedOneNeverOpened() throws {
        // A V5 header whose profile is Display P3, embedded after the pixels: pure P3 red is
        // outside sRGB, so it comes out as sRGB's red, and a P3 mid-grey stays grey.
        let profile = try #require(ICCProfile.displayP3).data
        let pixels: [UInt8] = [0, 0, 255, 0, 128, 128, 128, 0]  // 2×1, 24 bits: red, grey
        func v5(_ csType: Int, profileAt: Int, size: Int) -> [UInt8] {
            Self.info(width: 2, height: 1, bits: 24, size: 124) + [UInt8](repeating: 0, count: 16)
                + Self.le32(csType) + [UInt8](repeating: 0, count: 48) + Self.le32(0) + Self.le32(profileAt) + Self.le32(size) + Self.le32(0)
        }
        let embedded = Self.bmp(v5(0x4D42_4544, profileAt: 124 + pixels.count, size: profile.count), pixels: pixels + [UInt8](profile))
        let info = try ImageDecoder.info(of: embedded)
        #expect(info.colorProfile.profile?.data == profile)
        let converted = Self.pixels(try ImageDecoder.decode(embedded))
        #expect(converted[0][0] == 255 && converted[0][1] < 30 && converted[0][2] < 30)
        #expect(abs(Int(converted[1][0]) - 128) <= 1 && abs(Int(converted[1][0]) - Int(converted[1][1])) <= 1)
        // 'LINK': the profile is a file name. It is never opened; the pixels are taken as sRGB.
        let name = Array("/etc/passwd".utf8) + [0]
        let linked = Self.bmp(v5(0x4C49_4E4B, profileAt: 124 + pixels.count, size: name.count), pixels: pixels + name)
        #expect(try ImageDecoder.info(of: linked).colorProfile == .none)
        #expect(Self.pixels(try ImageDecoder.decode(linked))[0] == [255, 0, 0, 255])
    }

    @Test func lyingHeadersAndBombsAreRefusedBeforeAnyAllocation() throws {
        // A 60000×60000 header in a 100-byte file: refused from the header.
        let huge = Self.bmp(Self.info(width: 60000, height: 60000, bits: 24), pixels: [UInt8](repeating: 0, count: 46))
        #expect(throws: CodecError.tooManyPixels(width: 60000, height: 60000, limit: DecodingLimits.default.maxPixels)) {
            try ImageDecoder.info(of: huge)
        }
        // Within the limits but with far fewer bytes than the header says: corrupt, not a read
        // past the end.
        let short = Self.bmp(Self.info(width: 1000, height: 1000, bits: 24), pixels: [UInt8](repeating: 7, count: 100))
        #expect(throws: CodecError.corrupt(format: .bmp, reason: "pixel data shorter than the header says")) {
            try ImageDecoder.decode(short)
        }
        // No sides, bad depths, more palette entries than the depth allows, truncated headers.
        #expect(throws: CodecError.noPixels(width: 0, height: 5)) {
            try ImageDecoder.info(of: Self.bmp(Self.info(width: 0, height: 5, bits: 24), pixels: []))
        }
        for bad in [Self.info(width: 1, height: 1, bits: 7), Self.info(width: 1, height: 1, bits: 24, compression: 1),
                    Self.info(width: 1, height: 1, bits: 4, colors: 17), Array(Self.info(width: 1, height: 1, bits: 8).prefix(30))] {
            #expect(throws: CodecError.self) { try ImageDecoder.decode(Self.bmp(bad, pixels: [0, 0, 0, 0])) }
        }
        // A megabyte of 255-pixel runs on one 3-pixel row: counted, not drawn pixel by pixel
        // (about a million steps, not 128 million).
        let runs = Self.bmp(Self.info(width: 3, height: 1, bits: 8, compression: 1, colors: 1) + Self.palette([Self.red]),
                            pixels: [UInt8](repeating: 255, count: 1 << 20).enumerated().map { $0.offset % 2 == 0 ? 255 : 0 })
        #expect(Self.pixels(try ImageDecoder.decode(runs)) == [[255, 0, 0, 255], [255, 0, 0, 255], [255, 0, 0, 255]])
        // RLE that claims huge runs and deltas stays inside the bitmap and ends with the input.
        let wild = Self.bmp(Self.info(width: 3, height: 2, bits: 8, compression: 1, colors: 1) + Self.palette([Self.red]),
                            pixels: [255, 0, 0, 2, 255, 255, 255, 0, 0, 255])
        #expect(try ImageDecoder.decode(wild).width == 3)
        // An icon directory that claims 65535 entries, or whose entries all point outside it.
        var many = Data([0, 0, 1, 0, 0xFF, 0xFF])
        many.append(Data(repeating: 0, count: 64))
        #expect(throws: CodecError.corrupt(format: .ico, reason: "65535 images in one icon (at most 256 are read)")) {
            try ImageDecoder.info(of: many)
        }
        let outside = Data([0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0] + Self.le32(1000) + Self.le32(22))
        #expect(throws: CodecError.corrupt(format: .ico, reason: "no readable image in the icon")) { try ImageDecoder.info(of: outside) }
        // An icon entry whose DIB says 30000×30000: refused by the limits, not allocated.
        let dib = Self.info(width: 30000, height: 60000, bits: 32)
        let bigIcon = Data([0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 32, 0] + Self.le32(dib.count) + Self.le32(22) + dib)
        #expect(throws: CodecError.tooManyPixels(width: 30000, height: 30000, limit: DecodingLimits.default.maxPixels)) {
            try ImageDecoder.info(of: bigIcon)
        }
    }

    @Test func aCursorIsAnIconWithHotSpots() throws {
        // CUR (type 2): the directory's planes and bit count are the hot spot; the entry is read the same way.
        // Rows bottom-up: (red, blue), (red, green); then the AND mask's rows: none, the second pixel.
        let dib = Self.info(width: 2, height: 4, bits: 24) + [0, 0, 255, 255, 0, 0, 0, 0] + [0, 0, 255, 0, 255, 0, 0, 0]
            + [0, 0, 0, 0] + [0x40, 0, 0, 0]
        let cursor = Data([0, 0, 2, 0, 1, 0, 2, 2, 0, 0, 1, 0, 1, 0] + Self.le32(dib.count) + Self.le32(22) + dib)
        let info = try ImageDecoder.info(of: cursor)
        #expect(info.fileType == .ico && info.width == 2 && info.height == 2)
        // The AND mask hides the top row's green.
        #expect(Self.pixels(try ImageDecoder.decode(cursor)) == [[255, 0, 0, 255], [0, 0, 0, 0], [255, 0, 0, 255], [0, 0, 255, 255]])
    }

    // MARK: Out

    @Test func bmpAndICOOutputReadBackAndPillowReadsThem() throws {
        let directory = try TemporaryDirectory()
        let color = { (x: Int, y: Int) -> [UInt8] in [UInt8(truncatingIfNeeded: x * 6), UInt8(truncatingIfNeeded: y * 11), UInt8(truncatingIfNeeded: x * y)] }
        // Alpha 0 (with colour 0, as decoders leave it), 90, and opaque elsewhere.
        let translucent = painted(width: 37, height: 23) { x, y in
            x == 0 && y == 0 ? [0, 0, 0, 0] : color(x, y) + [x == 1 && y == 0 ? 90 : 255]
        }
        let opaque = paintedOpaque(width: 37, height: 23, color)
        var files: [(String, Bitmap)] = []
        for (name, bitmap) in [("translucent", translucent), ("opaque", opaque)] {
            for options in [ImageEncoder.Options.bmp, .ico] {
                let data = try ImageEncoder.encode(bitmap, as: options)
                let back = try ImageDecoder.decode(data)
                let file = "\(name).\(options.fileType.rawValue.lowercased())"
                #expect(try ImageDecoder.info(of: data).fileType == options.fileType)
                #expect(Self.pixels(back) == Self.pixels(bitmap.converted(to: .rgba8)), "\(file)")
                // A BMP says whether it has alpha (24 or 32 bits); an icon's PNG always has it.
                if options == .bmp { #expect(back.isKnownOpaque == (name == "opaque"), "\(file)") }
                try data.write(to: directory.child(file))
                files.append((file, bitmap))
            }
        }
        // 24 bits when opaque: 3 bytes a pixel, rows padded to 4.
        #expect(try ImageEncoder.encode(opaque, as: .bmp).count == 54 + 112 * 23)
        // Pillow (the reference reader) sees the same pixels.
        let program = """
            import sys, os
            from PIL import Image
            for name in sys.argv[2:]:
                image = Image.open(os.path.join(sys.argv[1], name)).convert("RGBA")
                open(os.path.join(sys.argv[1], name + ".rgba"), "wb").write(image.tobytes())
            """
        #expect(try runTool(Self.python, ["-c", program, directory.path] + files.map(\.0)), "Pillow read the files")
        for (file, bitmap) in files {
            #expect(Self.difference(bitmap.converted(to: .rgba8), try Data(contentsOf: directory.child(file + ".rgba"))) == 0, "\(file)")
        }
        // An icon is at most 256 pixels a side.
        #expect(throws: CodecError.encodingFailed(format: .ico, reason: "an icon is at most 256 pixels a side (this one is 257×10)")) {
            try ImageEncoder.encode(paintedOpaque(width: 257, height: 10, color), as: .ico)
        }
    }
}
