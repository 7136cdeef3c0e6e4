@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// Progressive JPEGs decoded at 1/8 without the AC scans libjpeg-turbo does not use there give
/// exactly the pixels of the full decode — over files from several encoders and scan scripts.
@Suite("DC-only progressive decoding", .timeLimit(.minutes(3)))
struct DCOnlyDecodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()


    /// A binary PPM of `bitmap` (cjpeg's input).
    static func ppm(_ bitmap: Bitmap) -> Data {
        var data = Data("P6\n\(bitmap.width) \(bitmap.height)\n255\n".utf8)
        let rgba = bitmap.converted(to: .rgba8)
        rgba.withUnsafeBytes { bytes in
            for y in 0..<rgba.height {
                for x in 0..<rgba.width {
                    let o = y * rgba.rowBytes + x * 4
                    data.append(contentsOf: [bytes[o], bytes[o + 1], bytes[o + 2]])
                }
            }
        }
        return data
    }

    /// Progressive files from libjpeg-turbo (ours, cjpeg with custom scan scripts, jpegtran) and
    /// Pillow, in every chroma layout, from the sample photos.
    static func corpus(in directory: URL) throws -> [URL] {
        var files: [URL] = []
        let samples = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Samples").path)
            .filter { $0.hasSuffix(".jpg") }.sorted()
        let cjpeg = "/usr/bin/cjpeg", jpegtran = "/usr/bin/jpegtran"
        try #require(FileManager.default.isExecutableFile(atPath: cjpeg) && FileManager.default.isExecutableFile(atPath: jpegtran),
                     "cjpeg and jpegtran (libjpeg-turbo-progs) are missing: run `make deps`")
        let scans = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Tests/Fixtures/jpeg-scans").path).sorted()
        // 3x1: a factor where libjpeg-turbo's `%` rule is all that decides.
        let samplings = ["1x1", "2x1", "2x2", "1x2", "4x1", "2x2,1x1,1x1", "3x1", "1x1,2x2,1x1"]
        for (index, name) in samples.enumerated() {
            let sample = root.appendingPathComponent("Samples/\(name)")
            let original = try Data(contentsOf: sample)
            // Odd sizes: partial blocks and MCUs at the edges.
            let decoded = try ImageDecoder.decode(original, covering: (333 + index * 17, 201 + index * 11))
            let source = directory.appendingPathComponent("\(index).ppm")
            try ppm(decoded).write(to: source)
            // Ours: libjpeg-turbo's standard progression, 4:2:0 and 4:4:4.
            for (variant, full) in [("420", false), ("444", true)] {
                let file = directory.appendingPathComponent("easel-\(index)-\(variant).jpg")
                try JPEGCodec.encode(decoded, quality: 70 + index * 2, progressive: true, fullChroma: full).write(to: file)
                files.append(file)
            }
            let sampling = samplings[index % samplings.count]
            for (tag, extra) in [("cj", ["-sample", sampling, "-progressive"]), ("gray", ["-grayscale", "-progressive"])] {
                let file = directory.appendingPathComponent("\(tag)-\(index).jpg")
                if try runTool(cjpeg, ["-quality", String(60 + index * 3)] + extra + ["-outfile", file.path, source.path]) { files.append(file) }
            }
            for scan in scans {
                let gray = scan.hasPrefix("g")
                let file = directory.appendingPathComponent("scan-\(index)-\(scan).jpg")
                let arguments = ["-quality", "85"] + (gray ? ["-grayscale"] : ["-sample", samplings[(index + scan.count) % 5]])
                    + ["-scans", root.appendingPathComponent("Tests/Fixtures/jpeg-scans/\(scan)").path, "-outfile", file.path, source.path]
                if try runTool(cjpeg, arguments) { files.append(file) }
            }
            let transcoded = directory.appendingPathComponent("jpegtran-\(index).jpg")
            if try runTool(jpegtran, ["-progressive", "-outfile", transcoded.path, sample.path]) { files.append(transcoded) }
        }
        // Four components: CMYK (Adobe, inverted) made progressive by jpegtran.
        for (index, size) in [(0, (203, 151)), (1, (640, 480))].map({ ($0.0, $0.1) }) {
            let cmyk = directory.appendingPathComponent("cmyk-base-\(index).jpg")
            try JPEGCodec.encodeCMYK(width: size.0, height: size.1, quality: 80) { x, y in
                (UInt8((x * 7) & 255), UInt8((y * 5) & 255), UInt8(((x + y) * 3) & 255), UInt8((x ^ y) & 255))
            }.write(to: cmyk)
            let file = directory.appendingPathComponent("cmyk-\(index).jpg")
            if try runTool(jpegtran, ["-progressive", "-outfile", file.path, cmyk.path]) { files.append(file) }
        }
        // Pillow's progressive writer, when the test virtualenv has it.
        let python = root.appendingPathComponent(".venv-compat/bin/python3").path
        try #require(FileManager.default.isExecutableFile(atPath: python), "no \(python): run `make deps`")
        let program = """
            import sys, glob, os
            from PIL import Image
            out = sys.argv[1]
            for i, path in enumerate(sorted(glob.glob(os.path.join(out, "*.ppm")))):
                image = Image.open(path)
                for j, sub in enumerate([0, 1, 2]):
                    image.save(os.path.join(out, f"pillow-{i}-{sub}.jpg"), quality=55 + 7 * j + i, progressive=True, subsampling=sub)
                image.convert("L").save(os.path.join(out, f"pillow-{i}-L.jpg"), quality=80, progressive=True)
            """
        #expect(try runTool(python, ["-c", program, directory.path]), "Pillow wrote its files")
        files += try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasPrefix("pillow-") }
        return files
    }

    @Test func everyPixelEqualsTheFullDecodeAtOneEighth() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("easel-dconly-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try #require(ProcessInfo.processInfo.environment["EASEL_JPEG_DC_ONLY"] == nil, "EASEL_JPEG_DC_ONLY would turn off what is tested")
        let files = try Self.corpus(in: directory)
        #expect(files.count >= 100, "\(files.count) files")
        var stripped = 0
        for file in files {
            let data = try Data(contentsOf: file)
            let info = try ImageDecoder.info(of: data)
            #expect(info.isProgressive, "\(file.lastPathComponent)")
            if let smaller = JPEGCodec.dcOnlyStream(data) {
                stripped += 1
                #expect(smaller.count < data.count)
            }
            // At 1/8 (covering 1×1), gray output too, and raw CMYK for CMYK files.
            for (format, raw) in [(Bitmap.PixelFormat.rgba8, false), (.gray8, false), (.rgba8, true)] {
                let fast = try JPEGCodec.decode(data, info: info, covering: (1, 1), pixelFormat: format, rawCMYK: raw, limits: .default).0
                let full = try JPEGCodec.decode(data, info: info, covering: (1, 1), pixelFormat: format, rawCMYK: raw, limits: .default,
                                                dcOnlyScans: false).0
                #expect(fast.width == (info.width + 7) / 8 && fast.hasSamePixels(as: full), "\(file.lastPathComponent) \(format) raw \(raw)")
            }
        }
        // Nearly all apply (the rest: layouts or scripts it leaves alone).
        #expect(stripped * 10 >= files.count * 9, "\(stripped) of \(files.count) stripped")
    }

    @Test func unusualFilesAreLeftAlone() throws {
        let photo = try ImageDecoder.decode(try Data(contentsOf: Self.root.appendingPathComponent("Samples/chelsea-cat.jpg")))
        let baseline = try JPEGCodec.encode(photo, quality: 80, progressive: false)
        #expect(JPEGCodec.dcOnlyStream(baseline) == nil, "baseline")
        let progressive = try JPEGCodec.encode(photo, quality: 80, progressive: true)
        let stripped = try #require(JPEGCodec.dcOnlyStream(progressive))
        // Truncated anywhere: never a stream (the caller decodes the original, which reports it).
        for cut in stride(from: 2, to: progressive.count - 1, by: max(1, progressive.count / 40)) {
            #expect(JPEGCodec.dcOnlyStream(progressive.prefix(cut)) == nil, "cut at \(cut)")
        }
        #expect(JPEGCodec.dcOnlyStream(Data()) == nil && JPEGCodec.dcOnlyStream(Data([0xFF, 0xD8])) == nil)
        // A stream with its last AC scans removed (an incomplete progression) is left alone:
        // libjpeg would smooth that original.
        #expect(JPEGCodec.dcOnlyStream(stripped) == nil)
        // The scan limit holds at 1/8 too: a file over it is refused as a whole, not decoded
        // from the scans that would be left.
        #expect(JPEGCodec.dcOnlyStream(progressive, maxScans: 5) == nil)
        let info = try ImageDecoder.info(of: progressive)
        for denominator in [(1, 1), (info.width, info.height)] {
            #expect(throws: CodecError.self) {
                try JPEGCodec.decode(progressive, info: info, covering: denominator, pixelFormat: .rgba8,
                                     limits: configured(DecodingLimits()) { $0.maxProgressiveScans = 5 })
            }
        }
    }
}
