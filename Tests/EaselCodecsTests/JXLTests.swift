@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// JPEG XL through libjxl: files Debian's `cjxl` writes at test time decode to the source's
/// pixels (lossless) or to `djxl`'s (lossy); what Easel writes, `djxl` reads back; limits and
/// damage are typed errors.
@Suite("JPEG XL", .timeLimit(.minutes(2)))
struct JXLTests {
    static let cjxl = "/usr/bin/cjxl", djxl = "/usr/bin/djxl"

    static func requireTools() throws {
        try #require(FileManager.default.isExecutableFile(atPath: cjxl) && FileManager.default.isExecutableFile(atPath: djxl),
                     "no cjxl/djxl: run `make deps` (libjxl-tools)")
    }

    static func color(_ x: Int, _ y: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: x * 5), UInt8(truncatingIfNeeded: y * 7), UInt8(truncatingIfNeeded: x * y)]
    }

    static func meanDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        var total = 0
        a.withUnsafeBytes { p in
            b.withUnsafeBytes { q in
                for y in 0..<a.height { for x in 0..<(a.width * 4) { total += abs(Int(p[y * a.rowBytes + x]) - Int(q[y * b.rowBytes + x])) } }
            }
        }
        return Double(total) / Double(a.width * a.height * 4)
    }

    @Test func cjxlsFilesDecodeToTheirPixels() throws {
        try Self.requireTools()
        let directory = try TemporaryDirectory()
        let opaque = paintedOpaque(width: 61, height: 37, Self.color)
        let translucent = painted(width: 61, height: 37) { x, y in Self.color(x, y) + [UInt8(truncatingIfNeeded: 40 + x * 3)] }
        let gray = opaque.converted(to: .gray8)
        for (name, bitmap) in [("opaque", opaque), ("translucent", translucent), ("gray", gray)] {
            let png = directory.child("\(name).png")
            try ImageEncoder.encode(bitmap, as: .png()).write(to: png)
            // Lossless: exactly the source's pixels.
            let lossless = directory.child("\(name)-lossless.jxl")
            #expect(try runTool(Self.cjxl, [png.path, lossless.path, "-d", "0", "-e", "3"]), "cjxl \(name)")
            let data = try Data(contentsOf: lossless)
            let info = try ImageDecoder.info(of: data)
            #expect(info.fileType == .jxl && info.width == 61 && info.height == 37, "\(name)")
            // (Our PNG of an opaque bitmap has an alpha channel, all 255: so has cjxl's file.)
            let pngHasAlpha = try ImageDecoder.info(of: try Data(contentsOf: png)).hasAlpha
            #expect(info.hasAlpha == pngHasAlpha && info.isGrayscale == (name == "gray"), "\(name)")
            let decoded = try ImageDecoder.decode(data)
            #expect(Self.meanDifference(decoded, bitmap.converted(to: .rgba8)) == 0, "\(name)")
            #expect(decoded.isKnownOpaque == !pngHasAlpha)
            // Lossy: djxl's own pixels, within two levels.
            let lossy = directory.child("\(name)-lossy.jxl"), back = directory.child("\(name)-djxl.png")
            #expect(try runTool(Self.cjxl, [png.path, lossy.path, "-q", "85", "-e", "3"]))
            #expect(try runTool(Self.djxl, [lossy.path, back.path]))
            let reference = try ImageDecoder.decode(try Data(contentsOf: back))
            let ours = try ImageDecoder.decode(try Data(contentsOf: lossy))
            #expect(Self.meanDifference(ours, reference) <= 2, "\(name) lossy")
        }
    }

    @Test func aWideGamutFileIsConvertedToSRGBLikeItsPNG() throws {
        // A Display P3 PNG (its iCCP) made into JPEG XL by cjxl (lossless keeps the profile):
        // decoded to the same sRGB pixels as the PNG itself.
        try Self.requireTools()
        let directory = try TemporaryDirectory()
        let p3 = try #require(ICCProfile.displayP3)
        let bitmap = paintedOpaque(width: 32, height: 16) { x, y in [UInt8(x * 8), 255 - UInt8(y * 15), 200] }
        let png = directory.child("p3.png"), jxl = directory.child("p3.jxl")
        try ImageEncoder.encode(bitmap, as: .png(), iccProfile: p3.data).write(to: png)
        #expect(try runTool(Self.cjxl, [png.path, jxl.path, "-d", "0", "-e", "3"]))
        let data = try Data(contentsOf: jxl)
        #expect(try ImageDecoder.info(of: data).colorProfile.profile?.isSRGB == false)
        let fromPNG = try ImageDecoder.decode(try Data(contentsOf: png)), fromJXL = try ImageDecoder.decode(data)
        #expect(Self.meanDifference(fromJXL, fromPNG) <= 1)
        // (And the conversion did something: P3's pure colours are not sRGB's.)
        #expect(Self.meanDifference(fromJXL, bitmap) > 1)
    }

    @Test func whatEaselWritesDjxlReads() throws {
        try Self.requireTools()
        let directory = try TemporaryDirectory()
        let translucent = painted(width: 40, height: 30) { x, y in Self.color(x, y) + [UInt8(truncatingIfNeeded: 100 + x)] }
        // Lossless (quality 100): the same pixels back, by us and by djxl.
        let lossless = try ImageEncoder.encode(translucent, as: .jxl(quality: 100, effort: 3))
        #expect(try ImageDecoder.info(of: lossless).fileType == .jxl)
        #expect(Self.meanDifference(try ImageDecoder.decode(lossless), translucent) == 0)
        try lossless.write(to: directory.child("ours.jxl"))
        #expect(try runTool(Self.djxl, [directory.child("ours.jxl").path, directory.child("ours.png").path]))
        #expect(Self.meanDifference(try ImageDecoder.decode(try Data(contentsOf: directory.child("ours.png"))), translucent) == 0)
        // Lossy: close, and smaller at a lower quality.
        let opaque = paintedOpaque(width: 64, height: 64) { x, y in [UInt8(x * 3), UInt8(y * 2), 128] }
        let high = try ImageEncoder.encode(opaque, as: .jxl(quality: 90)), low = try ImageEncoder.encode(opaque, as: .jxl(quality: 40))
        #expect(low.count < high.count)
        #expect(Self.meanDifference(try ImageDecoder.decode(high), opaque) <= 3)
    }

    @Test func limitsAndDamageAreTypedErrors() throws {
        let image = try ImageEncoder.encode(paintedOpaque(width: 200, height: 100, Self.color), as: .jxl(quality: 80))
        // The size limits, from the header.
        #expect(throws: CodecError.tooManyPixels(width: 200, height: 100, limit: 10_000)) {
            try ImageDecoder.info(of: image, limits: DecodingLimits(maxPixels: 10_000))
        }
        // libjxl's memory cap: its own pixel limit, from the header (and again before decoding).
        #expect(throws: CodecError.tooManyPixels(width: 200, height: 100, limit: 15_000)) {
            try ImageDecoder.info(of: image, limits: configured(DecodingLimits()) { $0.maxJPEGXLPixels = 15_000 })
        }
        let info = try ImageDecoder.info(of: image)
        #expect(throws: CodecError.tooManyPixels(width: 200, height: 100, limit: 15_000)) {
            try ImageDecoder.decode(image, info: info, limits: configured(DecodingLimits()) { $0.maxJPEGXLPixels = 15_000 })
        }
        // Truncated anywhere: a typed error.
        for cut in [1, 2, 10, image.count / 2, image.count - 1] {
            #expect(throws: CodecError.self) { try ImageDecoder.decode(image.prefix(cut)) }
        }
    }
}
