import CPNG
@testable import EaselCodecs
import Foundation
import Testing

/// The PNG fast path (ISA-L inflate a row at a time, SSE2 Paeth, Sources/CPNG) gives exactly libspng's
/// pixels, and steps aside for everything it does not handle or finds wrong.
@Suite("PNG fast path")
struct PNGFastPathTests {
    /// Rows filtered with `filters[y % filters.count]` (0 none, 1 sub, 2 up, 3 average, 4 Paeth),
    /// the stream stored (no compression) and split into `chunks` IDAT chunks.
    static func filtered(width: Int, height: Int, colorType: Int, filters: [Int], chunks: Int = 1,
                         sample: (Int, Int, Int) -> UInt8) -> Data {
        let bpp = [0: 1, 2: 3, 6: 4][colorType]!
        let rowLength = width * bpp
        var previous = [UInt8](repeating: 0, count: rowLength)
        var raw = Data()
        for y in 0..<height {
            let row = (0..<rowLength).map { sample($0 / bpp, y, $0 % bpp) }
            let filter = filters[y % filters.count]
            raw.append(UInt8(filter))
            for i in 0..<rowLength {
                let a = i >= bpp ? Int(row[i - bpp]) : 0, b = Int(previous[i]), c = i >= bpp ? Int(previous[i - bpp]) : 0
                let predicted: Int
                switch filter {
                case 1: predicted = a
                case 2: predicted = b
                case 3: predicted = (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predicted = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: predicted = 0
                }
                raw.append(UInt8(truncatingIfNeeded: Int(row[i]) - predicted))
            }
            previous = row
        }
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.append(TestPNG.chunk("IHDR", TestPNG.be32(width) + TestPNG.be32(height) + Data([8, UInt8(colorType), 0, 0, 0])))
        let stream = TestPNG.zlibStored(raw)
        let piece = (stream.count + chunks - 1) / chunks
        for start in stride(from: 0, to: stream.count, by: piece) {
            png.append(TestPNG.chunk("IDAT", stream.subdata(in: start..<min(stream.count, start + piece))))
        }
        png.append(TestPNG.chunk("IEND", Data()))
        return png
    }

    /// `png` (one stored IDAT, as `filtered` makes it) with row `row`'s filter byte replaced,
    /// the stream's Adler-32 and the chunk's CRC rewritten.
    static func withFilter(_ filter: UInt8, atRow row: Int, width: Int, bpp: Int, height: Int, in png: Data) -> Data {
        let idat = 8 + 25, body = idat + 8
        let length = Int(png[idat]) << 24 | Int(png[idat + 1]) << 16 | Int(png[idat + 2]) << 8 | Int(png[idat + 3])
        var stream = png.subdata(in: body..<(body + length))
        var raw = Data()
        var offset = 2
        while offset < stream.count - 4 { // stored blocks: 1 header byte, LEN, NLEN, data
            let count = Int(stream[offset + 1]) | Int(stream[offset + 2]) << 8
            raw.append(stream.subdata(in: (offset + 5)..<(offset + 5 + count)))
            offset += 5 + count
        }
        raw[row * (width * bpp + 1)] = filter
        stream = TestPNG.zlibStored(raw)
        var out = png.prefix(idat)
        out.append(TestPNG.chunk("IDAT", stream))
        out.append(TestPNG.chunk("IEND", Data()))
        return out
    }

    /// Whether the fast path alone decodes `png` (rather than stepping aside).
    static func fastPathTakes(_ png: Data, _ format: Bitmap.PixelFormat) throws -> Bool {
        let info = try PNGCodec.info(png)
        var bitmap = Bitmap(width: info.width, height: info.height, pixelFormat: format)
        let rowBytes = bitmap.rowBytes
        return bitmap.withUnsafeMutableBytes { pixels in
            png.withUnsafeBytes { bytes in
                easel_png_decode_fast(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, format == .gray8 ? 1 : 0,
                                      pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                      Int32(info.width), Int32(info.height)) == 1
            }
        }
    }

    /// Whether the shrink on load's fast path alone decodes `png` at 1/`factor`.
    static func shrunkFastPathTakes(_ png: Data, factor: Int = 2) throws -> Bool {
        let info = try PNGCodec.info(png)
        var bitmap = Bitmap(width: (info.width + factor - 1) / factor, height: (info.height + factor - 1) / factor, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        return bitmap.withUnsafeMutableBytes { pixels in
            png.withUnsafeBytes { bytes in
                easel_png_decode_shrunk_fast(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count,
                                             pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                             Int32(info.width), Int32(info.height), Int32(factor)) == 1
            }
        }
    }

    /// `png` shrunk on load at 1/`factor`, with the fast path and with libspng alone: the pixels,
    /// or the error's message.
    static func shrunkBothWays(_ png: Data, factor: Int = 2) throws -> (fast: Result<[UInt8], PNGTestError>, reference: Result<[UInt8], PNGTestError>) {
        let info = try PNGCodec.info(png)
        func decode(fastPath: Bool) -> Result<[UInt8], PNGTestError> {
            let width = (info.width + factor - 1) / factor, height = (info.height + factor - 1) / factor
            var pixels = [UInt8](repeating: 0xA5, count: width * height * 4)
            var message = [CChar](repeating: 0, count: Int(EASEL_PNG_MESSAGE_SIZE))
            let ok = png.withUnsafeBytes { bytes in
                easel_png_decode_shrunk(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count, &pixels, width * 4,
                                        Int32(info.width), Int32(info.height), Int32(factor), fastPath ? 1 : 0, &message)
            }
            return ok == 1 ? .success(pixels) : .failure(PNGTestError(message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return (decode(fastPath: true), decode(fastPath: false))
    }

    /// Both whole decodes of `png` (RGBA) agree: the same pixels, or the same error.
    static func expectDecodesAgree(_ png: Data, info: ImageInfo, _ name: String) {
        let fast = Result { try PNGCodec.decode(png, info: info, pixelFormat: .rgba8, fastPath: true) }
        let reference = Result { try PNGCodec.decode(png, info: info, pixelFormat: .rgba8, fastPath: false) }
        switch (fast, reference) {
        case (.success(let a), .success(let b)): #expect(a.hasSamePixels(as: b), "\(name)")
        case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)", "\(name)")
        default: Issue.record("\(name): the fast path and libspng disagree (\(fast), \(reference))")
        }
    }

    /// Both shrinks of `png` agree: the same pixels, or the same error.
    static func expectShrinksAgree(_ png: Data, _ name: String, factor: Int = 2) throws {
        let (fast, reference) = try shrunkBothWays(png, factor: factor)
        switch (fast, reference) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(name): shrunk by \(factor)")
        case (.failure(let a), .failure(let b)): #expect(a == b, "\(name): shrunk by \(factor)")
        default: Issue.record("\(name): shrunk by \(factor), the fast path and libspng disagree (\(fast), \(reference))")
        }
    }

    static func bothWays(_ png: Data, _ format: Bitmap.PixelFormat) throws -> (fast: Bitmap, reference: Bitmap) {
        let info = try PNGCodec.info(png)
        return (try PNGCodec.decode(png, info: info, pixelFormat: format, fastPath: true),
                try PNGCodec.decode(png, info: info, pixelFormat: format, fastPath: false))
    }

    /// Every filter, alone and mixed, for gray, RGB and RGBA, at widths that leave partial
    /// vectors, in one IDAT chunk or several: the same pixels as libspng, to the byte.
    @Test(arguments: [0, 2, 6])
    func everyFilterGivesLibspngsPixels(colorType: Int) throws {
        // Values that make every Paeth choice (a, b and c) and every wrap-around happen.
        let noisy: (Int, Int, Int) -> UInt8 = { x, y, c in UInt8(truncatingIfNeeded: (x * 73 + y * 151 + c * 29) ^ (x * y)) }
        let smooth: (Int, Int, Int) -> UInt8 = { x, y, c in UInt8(truncatingIfNeeded: x * 2 + y + c * 40) }
        for filters in [[0], [1], [2], [3], [4], [0, 1, 2, 3, 4], [4, 3, 2, 1]] {
            for (width, height) in [(1, 1), (3, 5), (17, 9), (64, 33)] {
                for (sample, chunks) in [(noisy, 1), (smooth, 3)] {
                    let png = Self.filtered(width: width, height: height, colorType: colorType, filters: filters, chunks: chunks, sample: sample)
                    for format in colorType == 0 ? [Bitmap.PixelFormat.gray8, .rgba8] : [.rgba8] {
                        let (fast, reference) = try Self.bothWays(png, format)
                        #expect(fast.hasSamePixels(as: reference), "type \(colorType) filters \(filters) \(width)x\(height) \(format)")
                        #expect(try Self.fastPathTakes(png, format))
                    }
                    for factor in [2, 4, 8] {
                        try Self.expectShrinksAgree(png, "type \(colorType) filters \(filters) \(width)x\(height)", factor: factor)
                        #expect(try Self.shrunkFastPathTakes(png, factor: factor))
                    }
                }
            }
        }
    }

    /// Files from libpng's own encoder (adaptive filters, real deflate) and the sample photo.
    @Test func encodedPhotosGiveLibspngsPixels() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let photo = try ImageDecoder.decode(try Data(contentsOf: root.appendingPathComponent("Samples/chelsea-cat.jpg")), covering: (300, 200))
        for image in [photo, photo.converted(to: .gray8)] {
            for level in [1, 6, 9] {
                let png = try ImageEncoder.encode(image, as: .png(compressionLevel: level))
                let (fast, reference) = try Self.bothWays(png, image.pixelFormat)
                #expect(fast.hasSamePixels(as: reference))
                #expect(fast.hasSamePixels(as: image))
                #expect(try Self.fastPathTakes(png, image.pixelFormat))
                try Self.expectShrinksAgree(png, "level \(level) \(image.pixelFormat)")
                #expect(try Self.shrunkFastPathTakes(png))
            }
        }
        let cutout = try Data(contentsOf: root.appendingPathComponent("Samples/coffee-cup-cutout.png"))
        let (fast, reference) = try Self.bothWays(cutout, .rgba8)
        #expect(fast.hasSamePixels(as: reference))
    }

    /// A bad CRC, a damaged or short stream, an unknown filter, extra data: the fast path steps
    /// aside and libspng's answer (its pixels or its error) is the answer.
    @Test func anythingWrongIsLibspngsToDecide() throws {
        let good = Self.filtered(width: 20, height: 10, colorType: 2, filters: [4]) { x, y, c in UInt8(truncatingIfNeeded: x * 9 + y * 5 + c) }
        var badCRC = good
        badCRC[good.count - 13] ^= 0x55 // the IDAT chunk's CRC (IEND's 12 bytes follow it)
        var badStream = good
        badStream[60] ^= 0xFF // inside the stored block's data
        // An unknown filter type (9) in the third row, with a correct stream and CRC.
        var rows = Self.filtered(width: 20, height: 10, colorType: 2, filters: [1]) { x, y, c in UInt8(truncatingIfNeeded: x + y + c) }
        rows = Self.withFilter(9, atRow: 2, width: 20, bpp: 3, height: 10, in: rows)
        let cases: [(String, Data)] = [
            ("bad CRC", badCRC), ("damaged stream", badStream), ("unknown filter", rows),
            // A stream one row short, in a chunk with a correct CRC.
            ("short stream", Self.filtered(width: 20, height: 9, colorType: 2, filters: [0]) { _, _, _ in 7 }
                .replacingHeight(10)),
            // A critical chunk neither path knows, before the image data.
            ("unknown critical chunk", good.prefix(33) + TestPNG.chunk("ABCD", Data([1, 2, 3])) + good.dropFirst(33)),
            ("truncated", good.prefix(good.count / 2)),
        ]
        for (name, png) in cases {
            let info = try #require(try? PNGCodec.info(png), "\(name)")
            #expect(try !Self.fastPathTakes(png, .rgba8), "\(name)")
            #expect(try !Self.shrunkFastPathTakes(png), "\(name)")
            try Self.expectShrinksAgree(png, name)
            Self.expectDecodesAgree(png, info: info, name)
        }
    }

    /// The stream is read as it comes, chunk by chunk: libpng's real deflate re-split into IDAT
    /// chunks of 1, 7 and 4093 bytes (codes and block headers cut anywhere) decodes to the same
    /// pixels; a wrong CRC in a middle chunk or in a chunk after the image, rows that run on past
    /// the header's height, and a stream that ends in the last row are libspng's to decide.
    @Test func aStreamCutIntoChunksAnywhereIsReadAsItComes() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let photo = try ImageDecoder.decode(try Data(contentsOf: root.appendingPathComponent("Samples/chelsea-cat.jpg")), covering: (160, 120))
        let png = try ImageEncoder.encode(photo, as: .png(compressionLevel: 6))
        let whole = try PNGCodec.decode(png, info: try PNGCodec.info(png), pixelFormat: .rgba8, fastPath: false)
        for piece in [1, 7, 4093] {
            let cut = Self.rechunked(png, piece: piece)
            #expect(try Self.fastPathTakes(cut, .rgba8), "\(piece)-byte chunks")
            #expect(try Self.shrunkFastPathTakes(cut), "\(piece)-byte chunks")
            let (fast, _) = try Self.bothWays(cut, .rgba8)
            #expect(fast.hasSamePixels(as: whole), "\(piece)-byte chunks")
            try Self.expectShrinksAgree(cut, "\(piece)-byte chunks")
        }
        var middleCRC = Self.rechunked(png, piece: 4093)
        let firstIDAT = try #require(middleCRC.range(of: Data("IDAT".utf8))).lowerBound - 4
        middleCRC[firstIDAT + 8 + 4093] ^= 0x01 // the first IDAT chunk's CRC: a chunk with more after it
        let trailing = TestPNG.chunk("tEXt", Data("Comment\u{0}after the image".utf8))
        var afterCRC = png.prefix(png.count - 12) + trailing + png.suffix(12)
        afterCRC[png.count - 12 + trailing.count - 1] ^= 0x01
        let runsOn = Self.filtered(width: 20, height: 11, colorType: 2, filters: [2]) { x, y, c in UInt8(truncatingIfNeeded: x * 3 + y + c) }
            .replacingHeight(10)
        for (name, bad) in [("a wrong CRC in a middle chunk", middleCRC), ("a wrong CRC after the image", afterCRC), ("rows after the last", runsOn)] {
            #expect(try !Self.fastPathTakes(bad, .rgba8), "\(name)")
            #expect(try !Self.shrunkFastPathTakes(bad), "\(name)")
            try Self.expectShrinksAgree(bad, name)
            Self.expectDecodesAgree(bad, info: try PNGCodec.info(bad), name)
        }
        // A damaged IDAT chunk is an error, not an image, whichever path reads it (libspng drops
        // an ancillary chunk after the image whose CRC is wrong: that file decodes, alike).
        #expect(throws: (any Error).self) { try PNGCodec.decode(middleCRC, info: try PNGCodec.info(middleCRC), pixelFormat: .rgba8) }
        #expect(try PNGCodec.decode(afterCRC, info: try PNGCodec.info(afterCRC), pixelFormat: .rgba8).hasSamePixels(as: whole))
    }

    /// Empty IDAT chunks between the stream's pieces are skipped (as libspng skips them); the
    /// chunks before the image are libspng's to judge first, so a damaged palette or a second
    /// header is its error whichever path is asked; and the one known difference, a deflate
    /// block with an incomplete Huffman code (zlib refuses it, ISA-L reads it as it stands), is
    /// asserted so that a change in it is seen.
    @Test func emptyChunksBadChunksBeforeTheImageAndTheOneKnownDifference() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let photo = try ImageDecoder.decode(try Data(contentsOf: root.appendingPathComponent("Samples/chelsea-cat.jpg")), covering: (120, 80))
        let png = try ImageEncoder.encode(photo, as: .png(compressionLevel: 6))
        let whole = try PNGCodec.decode(png, info: try PNGCodec.info(png), pixelFormat: .rgba8, fastPath: false)
        // Every 7-byte piece followed by an empty IDAT chunk.
        let cut = Self.rechunked(png, piece: 7)
        let empty = TestPNG.chunk("IDAT", Data())
        var spaced = cut.prefix(8)
        for (type, chunk) in Self.chunks(of: cut) {
            spaced.append(chunk)
            if type == "IDAT" { spaced.append(empty) }
        }
        #expect(try Self.fastPathTakes(spaced, .rgba8))
        #expect(try Self.shrunkFastPathTakes(spaced))
        #expect(try PNGCodec.decode(spaced, info: try PNGCodec.info(spaced), pixelFormat: .rgba8, fastPath: true).hasSamePixels(as: whole))
        try Self.expectShrinksAgree(spaced, "empty chunks")

        // Before the image: a palette of 4 bytes (not whole entries) and a second IHDR.
        let header = png.subdata(in: 8..<33)
        for (name, extra) in [("a damaged palette", TestPNG.chunk("PLTE", Data([1, 2, 3, 4]))), ("a second header", header)] {
            let bad = png.prefix(33) + extra + png.dropFirst(33)
            let info = try PNGCodec.info(bad)
            let fast = Result { try PNGCodec.decode(bad, info: info, pixelFormat: .rgba8, fastPath: true) }
            let reference = Result { try PNGCodec.decode(bad, info: info, pixelFormat: .rgba8, fastPath: false) }
            guard case .failure(let a) = fast, case .failure(let b) = reference else {
                Issue.record("\(name): decoded (\(fast), \(reference))")
                continue
            }
            #expect("\(a)" == "\(b)", "\(name)")
            let (shrunkFast, shrunkReference) = try Self.shrunkBothWays(bad)
            guard case .failure(let c) = shrunkFast, case .failure(let d) = shrunkReference else {
                Issue.record("\(name): decoded shrunk (\(shrunkFast), \(shrunkReference))")
                continue
            }
            #expect(c == d, "\(name)")
        }

        // A 2x1 gray image (the row 0 65 65: filter none, two pixels of 65) in one dynamic deflate
        // block whose literal/length code leaves codes unused; every CRC is right.
        let hex = "89504e470d0a1a0a0000000d4948445200000002000000010800000000d14920560000001549444154780105c02109000000c0b0577bff521f1a00c600838e00c0590000000049454e44ae426082"
        let incomplete = Data(stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! })
        let info = try PNGCodec.info(incomplete)
        #expect(throws: (any Error).self) { try PNGCodec.decode(incomplete, info: info, pixelFormat: .rgba8, fastPath: false) }
        let read = try PNGCodec.decode(incomplete, info: info, pixelFormat: .gray8, fastPath: true)
        #expect(read.withUnsafeBytes { Array($0.prefix(2)) } == [65, 65])
    }

    /// The chunks of `png` after its signature, in order: each one's type and its whole bytes
    /// (length, type, data and CRC).
    static func chunks(of png: Data) -> [(type: String, chunk: Data)] {
        var found: [(type: String, chunk: Data)] = [], offset = 8
        while offset + 12 <= png.count {
            let at = png.startIndex + offset
            let length = Int(png[at]) << 24 | Int(png[at + 1]) << 16 | Int(png[at + 2]) << 8 | Int(png[at + 3])
            let chunk = png.subdata(in: at..<(at + 12 + length))
            found.append((String(decoding: chunk.subdata(in: 4..<8), as: UTF8.self), chunk))
            offset += 12 + length
        }
        return found
    }

    /// `png` with its IDAT chunks' data gathered and split again into chunks of `piece` bytes.
    static func rechunked(_ png: Data, piece: Int) -> Data {
        var before = Data(), stream = Data(), after = Data()
        for (type, chunk) in chunks(of: png) {
            if type == "IDAT" {
                stream.append(chunk.subdata(in: 8..<(chunk.count - 4)))
            } else if stream.isEmpty {
                before.append(chunk)
            } else {
                after.append(chunk)
            }
        }
        var out = png.prefix(8) + before
        for start in stride(from: 0, to: stream.count, by: piece) {
            out.append(TestPNG.chunk("IDAT", stream.subdata(in: start..<min(stream.count, start + piece))))
        }
        return out + after
    }

    /// Interlaced, 16-bit, palette, gray+alpha and tRNS files never take the fast path, and
    /// decode as before.
    @Test func otherKindsGoToLibspng() throws {
        let kinds: [Data] = [
            TestPNG.make(width: 9, height: 7, bitDepth: 8, colorType: 2, interlaced: true) { x, y in [x * 20, y * 30, 99] },
            TestPNG.make(width: 9, height: 7, bitDepth: 16, colorType: 2) { x, y in [x * 2000, y * 3000, 9999] },
            TestPNG.make(width: 9, height: 7, bitDepth: 8, colorType: 3, palette: [[1, 2, 3], [200, 100, 0]]) { x, _ in [x % 2] },
            TestPNG.make(width: 9, height: 7, bitDepth: 8, colorType: 4) { x, y in [x * 20, y * 30] },
            TestPNG.make(width: 9, height: 7, bitDepth: 8, colorType: 2, transparency: [0, 1, 0, 2, 0, 3]) { x, y in [x, y, 3] },
        ]
        for png in kinds {
            #expect(try !Self.fastPathTakes(png, .rgba8))
            #expect(try !Self.shrunkFastPathTakes(png))
            let (fast, reference) = try Self.bothWays(png, .rgba8)
            #expect(fast.hasSamePixels(as: reference))
        }
    }
    /// Every form of the Paeth unfilter (plain C, SSE2, SSSE3/SSE4.1) gives the same bytes on
    /// random rows and rows full of ties (the decoder uses only the best one this CPU has).
    @Test(arguments: [3, 4])
    func everyPaethFormAgrees(bpp: Int) {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<200 {
            let length = bpp * Int.random(in: 1...97, using: &generator)
            // Odd rounds: rows within 100...103 (filtered bytes of 0, 1 and 255 keep a row near
            // the one above), where a, b and c tie often and the tie order decides.
            let ties = round % 2 == 1
            let previous = (0..<length).map { _ in ties ? UInt8.random(in: 100...103, using: &generator) : UInt8.random(in: 0...255, using: &generator) }
            let filtered = (0..<length).map { _ in ties ? [0, 1, 255].randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator) }
            var plain = filtered
            #expect(easel_png_unfilter_paeth_variant(&plain, previous, length, Int32(bpp), 0) == 1)
            for variant: Int32 in [1, 2] {
                var row = filtered
                guard easel_png_unfilter_paeth_variant(&row, previous, length, Int32(bpp), variant) == 1 else {
                    #if arch(x86_64)
                    if round == 0 { Issue.record("variant \(variant) is not available on this CPU: not checked") }
                    #endif
                    continue
                }
                #expect(row == plain, "bpp \(bpp) variant \(variant) round \(round)")
            }
        }
        #if arch(x86_64)
        var row = [UInt8](repeating: 1, count: 12)
        #expect(easel_png_unfilter_paeth_variant(&row, [UInt8](repeating: 2, count: 12), 12, Int32(bpp), 1) == 1, "SSE2 is part of x86-64")
        #endif
    }
}

struct PNGTestError: Error, Equatable {
    let message: String
}

private extension Data {
    /// A PNG with IHDR's height replaced (and its CRC rewritten).
    func replacingHeight(_ height: Int) -> Data {
        var ihdr = subdata(in: 16..<29)
        ihdr.replaceSubrange(4..<8, with: TestPNG.be32(height))
        return prefix(8) + TestPNG.chunk("IHDR", ihdr) + dropFirst(33)
    }
}
