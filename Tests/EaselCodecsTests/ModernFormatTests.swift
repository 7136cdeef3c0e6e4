@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// AVIF and HEIC, made by Debian's own encoders (`avifenc` from libavif-bin, `heif-enc` from
/// libheif-examples) and read by Easel; AVIF written by Easel.
@Suite struct ModernFormatTests {
    /// Runs a command-line encoder; its output file's bytes.
    static func tool(_ name: String, _ arguments: [String], output: URL) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + name)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = ChildProcesses.pipe()
        process.standardError = errors
        try ChildProcesses.run(process)
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CodecError.invalidParameters("\(name) failed: \(String(decoding: message, as: UTF8.self))")
        }
        return try Data(contentsOf: output)
    }

    static func png(_ bitmap: Bitmap, in directory: TemporaryDirectory, name: String = "in.png") throws -> URL {
        let url = directory.child(name)
        try ImageEncoder.encode(bitmap, as: .png()).write(to: url)
        return url
    }

    static func avif(_ bitmap: Bitmap, _ options: [String] = [], inputs: [Bitmap] = []) throws -> Data {
        let directory = try TemporaryDirectory()
        var files = [try png(bitmap, in: directory).path]
        for (index, frame) in inputs.enumerated() { files.append(try png(frame, in: directory, name: "f\(index).png").path) }
        let output = directory.child("out.avif")
        return try tool("avifenc", ["--jobs", "1", "-s", "10"] + options + files + [output.path], output: output)
    }

    static func mean(_ a: Bitmap, _ b: Bitmap, channels: Int = 3) -> Double {
        var total = 0, count = 0
        for y in 0..<a.height { for x in 0..<a.width {
            let p = a.pixel(x: x, y: y), q = b.pixel(x: x, y: y)
            for c in 0..<channels { total += abs(Int(p[c]) - Int(q[c])); count += 1 }
        } }
        return Double(total) / Double(count)
    }

    @Test func anAVIFDecodesWithItsSizeDepthAndAlpha() throws {
        let original = gradient(width: 120, height: 80) { x, _ in UInt8(min(255, x * 2)) }
        let data = try Self.avif(original, ["--min", "0", "--max", "0", "-y", "444"])
        #expect(try ImageFileType.sniff(data) == .avif)
        let info = try ImageDecoder.info(of: data)
        #expect(info.fileType == .avif && info.width == 120 && info.height == 80 && info.hasAlpha && info.bitDepth == 8)
        let decoded = try ImageDecoder.decode(data)
        #expect(decoded.width == 120 && !decoded.isKnownOpaque)
        #expect(Self.mean(decoded, original, channels: 4) < 3)
        // 10 and 12 bits: scaled to 8.
        for depth in ["10", "12"] {
            let deep = try Self.avif(original, ["-d", depth, "--min", "0", "--max", "0", "-y", "444"])
            #expect(try ImageDecoder.info(of: deep).bitDepth == Int(depth))
            #expect(Self.mean(try ImageDecoder.decode(deep), original) < 3)
        }
    }

    /// irot (quarter turns counter-clockwise) and imir (mode 0: top and bottom exchanged, 1: left
    /// and right) in every combination, against the same steps applied one by one.
    @Test(arguments: [0, 1, 2, 3], [-1, 0, 1])
    func anAVIFIsTurnedAsItsContainerSays(rotation: Int, mirror: Int) throws {
        var options: [String] = ["--min", "0", "--max", "0", "-y", "444"]
        if rotation > 0 { options += ["--irot", String(rotation)] }
        if mirror >= 0 { options += ["--imir", String(mirror)] }
        let data = try Self.avif(ExifTests.quadrants, options)
        let info = try ImageDecoder.info(of: data)
        let decoded = try ImageDecoder.decode(data)
        var expected = ExifTests.quadrants
        for _ in 0..<rotation { expected = Orientation.apply(8, to: expected) }  // 8: a quarter turn counter-clockwise
        if mirror == 0 { expected = Orientation.apply(4, to: expected) }
        if mirror == 1 { expected = Orientation.apply(2, to: expected) }
        #expect(decoded.width == expected.width && decoded.height == expected.height)
        #expect(info.uprightWidth == expected.width && info.uprightHeight == expected.height)
        let w = decoded.width, h = decoded.height
        func corners(_ b: Bitmap) -> [String] {
            [b.pixel(x: 2, y: 2), b.pixel(x: w - 3, y: 2), b.pixel(x: 2, y: h - 3), b.pixel(x: w - 3, y: h - 3)].map(ExifTests.name)
        }
        #expect(corners(decoded) == corners(expected))
        // Shrink-on-load callers size from the upright dimensions.
        #expect(try ImageDecoder.decode(data, applyOrientation: false).width == 40)
    }

    /// An AVIF that says Display P3 with an nclx box (no ICC profile), as encoders of phone and
    /// camera pictures write it: converted to sRGB like an embedded profile.
    @Test func anAVIFTaggedDisplayP3ByNCLXIsConvertedToSRGB() throws {
        let original = ColorTests.original
        let p3 = try #require(ColorConversion.convert(original, from: nil, to: ICCProfile.displayP3))
        let data = try Self.avif(p3, ["--cicp", "12/13/6", "--min", "0", "--max", "0", "-y", "444"])
        let info = try ImageDecoder.info(of: data)
        #expect(info.colorProfile.profile?.colorSpace == .rgb)
        let converted = try ImageDecoder.decode(data)
        #expect(ColorTests.meanError(converted, original) <= 2)
        #expect(ColorTests.meanError(try ImageDecoder.decode(data, color: .keepSourceProfile), original) > 5)
    }

    @Test func aHEICDecodesWithItsSizeAndAlpha() throws {
        let directory = try TemporaryDirectory()
        let original = gradient(width: 128, height: 96) { x, y in UInt8((x + y) % 256) }
        let input = try Self.png(original, in: directory)
        let output = directory.child("out.heic")
        let data = try Self.tool("heif-enc", ["-q", "95", "-o", output.path, input.path], output: output)
        #expect(try ImageFileType.sniff(data) == .heic)
        let info = try ImageDecoder.info(of: data)
        #expect(info.fileType == .heic && info.width == 128 && info.height == 96 && info.hasAlpha && info.orientation == 1)
        let decoded = try ImageDecoder.decode(data)
        #expect(decoded.width == 128 && decoded.height == 96)
        #expect(Self.mean(decoded, original, channels: 4) < 6)
        // Opaque, with no alpha plane.
        let opaqueInput = directory.child("opaque.jpg")
        try ImageEncoder.encode(gradient(width: 64, height: 64), as: .jpeg(quality: 95)).write(to: opaqueInput)
        let opaqueOutput = directory.child("opaque.heic")
        let opaque = try Self.tool("heif-enc", ["-o", opaqueOutput.path, opaqueInput.path], output: opaqueOutput)
        #expect(try ImageDecoder.info(of: opaque).hasAlpha == false)
        #expect(try ImageDecoder.decode(opaque).isKnownOpaque)
    }

    /// imgproxy's `enforce_thumbnail`: a HEIC's or AVIF's embedded thumbnail (made by `heif-enc -t`)
    /// is read instead of the primary image when asked for and the file has one; otherwise, and
    /// for a file without one, the primary image.
    @Test func anEmbeddedThumbnailIsReadWhenAskedFor() throws {
        let directory = try TemporaryDirectory()
        let original = gradient(width: 200, height: 100) { x, _ in UInt8(x) }
        let input = try Self.png(original, in: directory)
        for (name, arguments) in [("t.heic", ["-t", "32"]), ("t.avif", ["-A", "-t", "32"]), ("plain.heic", [])] {
            let output = directory.child(name)
            let data = try Self.tool("heif-enc", ["-q", "90"] + arguments + ["-o", output.path, input.path], output: output)
            let primary = try ImageDecoder.info(of: data)
            #expect(primary.width == 200 && primary.height == 100 && !primary.isEmbeddedThumbnail, "\(name)")
            let asked = try ImageDecoder.info(of: data, embeddedThumbnail: true)
            if arguments.isEmpty {
                #expect(asked == primary, "no thumbnail: the primary image")
                continue
            }
            #expect(asked.isEmbeddedThumbnail && asked.width == 32 && asked.height == 16, "\(name): \(asked.width)x\(asked.height)")
            let thumbnail = try ImageDecoder.decode(data, info: asked)
            #expect(thumbnail.width == 32 && thumbnail.height == 16)
            // The thumbnail's pixels are the image's, scaled: dark on the left, light on the right.
            #expect(thumbnail.pixel(x: 1, y: 8)[0] < 40 && thumbnail.pixel(x: 30, y: 8)[0] > 160, "\(name)")
        }
    }

    /// HEIC out (libheif's HEVC encoder): odd sizes, alpha kept, read back by us and by libheif's
    /// own `heif-convert` to the same pixels within the codec's loss.
    @Test func heicIsWrittenWithItsSizeAndAlpha() throws {
        let directory = try TemporaryDirectory()
        let original = gradient(width: 67, height: 45) { x, y in UInt8((x * 3 + y) % 256) }
        let data = try ImageEncoder.encode(original, as: .heic(quality: 90))
        #expect(try ImageFileType.sniff(data) == .heic)
        let info = try ImageDecoder.info(of: data)
        #expect(info.width == 67 && info.height == 45 && info.hasAlpha)
        let decoded = try ImageDecoder.decode(data)
        #expect(Self.mean(decoded, original, channels: 4) < 6)
        try data.write(to: directory.child("ours.heic"))
        let converted = try Self.tool("heif-convert", [directory.child("ours.heic").path, directory.child("back.png").path],
                                      output: directory.child("back.png"))
        let back = try ImageDecoder.decode(converted)
        #expect(back.width == 67 && back.height == 45 && Self.mean(back, original, channels: 4) < 6)
        // Opaque: no alpha plane; smaller at a lower quality.
        let opaque = try ImageEncoder.encode(gradient(width: 64, height: 64), as: .heic(quality: 90))
        #expect(try ImageDecoder.info(of: opaque).hasAlpha == false)
        #expect(try ImageEncoder.encode(gradient(width: 64, height: 64), as: .heic(quality: 20)).count < opaque.count)
    }

    @Test func ftypBrandsTellAVIFFromHEIC() throws {
        func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
            let size = 16 + 4 * compatible.count
            return [0, 0, 0, UInt8(size)] + Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) } + [0, 0, 0, 8]
        }
        #expect(try ImageFileType.sniff(ftyp("avif", ["mif1", "miaf"])) == .avif)
        #expect(try ImageFileType.sniff(ftyp("heic", ["mif1", "heic"])) == .heic)
        #expect(try ImageFileType.sniff(ftyp("mif1", ["mif1", "heic"])) == .heic)
        #expect(try ImageFileType.sniff(ftyp("mif1", ["avif", "mif1"])) == .avif)
        // An ISO file of a video brand is an MP4 video (a frame of it is the image); one of no
        // brand Easel knows is no format.
        #expect(try ImageFileType.sniff(ftyp("isom", ["mp41"])) == .mp4)
        #expect(throws: CodecError.unknownFormat) { try ImageFileType.sniff(ftyp("crx ", ["isom"])) }
    }

    @Test func easelWritesAVIFThatRoundTrips() throws {
        let original = gradient(width: 256, height: 170)
        let data = try ImageEncoder.encode(original, as: .avif(quality: 80))
        #expect(try ImageFileType.sniff(data) == .avif)
        let decoded = try ImageDecoder.decode(data)
        #expect(decoded.width == 256 && decoded.height == 170 && decoded.isKnownOpaque)
        #expect(Self.mean(decoded, original) < 4)
        // With alpha.
        let translucent = gradient(width: 64, height: 64) { x, _ in UInt8(x * 4) }
        let withAlpha = try ImageDecoder.decode(try ImageEncoder.encode(translucent, as: .avif(quality: 90)))
        #expect(!withAlpha.isKnownOpaque && Self.mean(withAlpha, translucent, channels: 4) < 6)
        // Lower quality, fewer bytes.
        #expect(try ImageEncoder.encode(original, as: .avif(quality: 30)).count < data.count)
    }

    @Test func pixelAndFrameBombsAreRefusedFromTheContainer() throws {
        let frame = gradient(width: 64, height: 48)
        let data = try Self.avif(frame)
        #expect(throws: CodecError.tooManyPixels(width: 64, height: 48, limit: 1000)) {
            try ImageDecoder.decode(data, limits: DecodingLimits(maxPixels: 1000))
        }
        #expect(throws: CodecError.tooManyPixels(width: 64, height: 48, limit: 1000)) {
            try ImageDecoder.info(of: data, limits: DecodingLimits(maxPixels: 1000))
        }
        // A sequence of three frames (avifenc with three inputs).
        let sequence = try Self.avif(frame, [], inputs: [gradient(width: 64, height: 48), gradient(width: 64, height: 48)])
        let info = try ImageDecoder.info(of: sequence)
        #expect(info.frameCount == 3 && info.isAnimated)
        #expect(throws: CodecError.tooManyFrames(limit: 2)) {
            try ImageDecoder.info(of: sequence, limits: DecodingLimits(maxFrames: 2))
        }
        #expect(try ImageDecoder.decode(sequence).width == 64)
    }
}
