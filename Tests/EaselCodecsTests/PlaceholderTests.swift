import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// BlurHash, ThumbHash and dominant colour. The hashes are compared, at test time, with the
/// reference implementations on PyPI run by a real Python: `blurhash` 1.1.5 and
/// `thumbhash-python` 1.0.1 (the faithful port of Evan Wallace's JS `rgbaToThumbHash`; PyPI
/// `thumbhash` 0.1.2 crashes on any image with alpha, and both packages install a `thumbhash`
/// module, so only `thumbhash-python` may be in that virtualenv).
@Suite("Placeholders")
struct PlaceholderTests {
    /// A fixed-seed xorshift generator: the same "noise" on every run and machine.
    struct Noise {
        var state: UInt64
        mutating func next() -> UInt8 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    static func noise(width: Int, height: Int, seed: UInt64, alpha: Bool = false) -> Bitmap {
        var random = Noise(state: seed)
        return painted(width: width, height: height) { _, _ in
            [random.next(), random.next(), random.next(), alpha ? random.next() : 255]
        }
    }

    /// The images compared with the references: noise, gradient, flat, alpha, non-square, 1×1,
    /// a ThumbHash rounding tie (100×50 with alpha) and Gray8.
    static func samples() -> [(name: String, bitmap: Bitmap)] {
        var gray = Bitmap(width: 33, height: 21, pixelFormat: .gray8)
        let grayRowBytes = gray.rowBytes
        gray.withUnsafeMutableBytes { bytes in
            for y in 0..<21 { for x in 0..<33 { bytes[y * grayRowBytes + x] = UInt8((x * 7 + y * 5) % 256) } }
        }
        return [
            ("noise 100×100", noise(width: 100, height: 100, seed: 0x5EED_1234_ABCD_0001)),
            ("gradient 100×100", painted(width: 100, height: 100) { x, y in
                [UInt8(x * 255 / 99), UInt8(y * 2), UInt8(255 - x * 255 / 99), 255]
            }),
            ("flat 10×10", painted(width: 10, height: 10) { _, _ in [200, 100, 50, 255] }),
            ("alpha disc 40×40", painted(width: 40, height: 40) { x, y in
                let inside = (x - 20) * (x - 20) + (y - 20) * (y - 20) < 225
                return [30, 200, UInt8(x * 6), inside ? 255 : UInt8(y * 3)]
            }),
            ("noise with alpha 64×48", noise(width: 64, height: 48, seed: 42, alpha: true)),
            ("non-square noise 100×37", noise(width: 100, height: 37, seed: 7)),
            ("single pixel", painted(width: 1, height: 1) { _, _ in [12, 200, 99, 255] }),
            ("tie 100×50 with alpha", painted(width: 100, height: 50) { x, y in
                [UInt8(x * 2), UInt8(y * 5), 100, 200]
            }),
            ("gray8 33×21", gray),
        ]
    }

    @Test func hashesMatchThePythonReferenceImplementations() throws {
        let samples = Self.samples()
        let expected = try Self.referenceHashes(samples.map(\.bitmap))
        try #require(expected.count == samples.count, "the reference printed \(expected.count) lines")
        for ((name, bitmap), reference) in zip(samples, expected) {
            #expect(try Placeholder.blurHash(bitmap) == reference.blurHash, "BlurHash of \(name)")
            #expect(try Placeholder.thumbHashBase64(bitmap) == reference.thumbHash, "ThumbHash of \(name)")
            #expect(Data(try Placeholder.thumbHash(bitmap)).base64EncodedString() == reference.thumbHash)
        }
    }

    /// No synthetic test vector is published by either project: woltapp/blurhash's and
    /// halcy/blurhash-python's tests (`tests/test_blurhash.py`, "UBMOZfK1GG%LBBNG,;Rj2skq=eE1s9n4S5Na"
    /// for `tests/cool_cat.jpg`) and thumbhash-python's (`tests/data.py`, e.g. "1QcSHQRnh493V4dIh4eXh1h4kJUI"
    /// for sunrise.jpg) hash photographs that are not in this repository. This test checks the
    /// layout published in woltapp/blurhash `Algorithm.md` instead: one digit for
    /// `(nx − 1) + (ny − 1) × 9`, one for the quantised maximum AC, four for the average colour
    /// stored exactly as 24-bit sRGB, then two per AC component, where zero is
    /// 9·19² + 9·19 + 9 = 3429 = "fQ". (Only black has all-zero ACs: the reference's basis
    /// cos(π·j·y/h) does not sum to zero over a row, so a flat colour has small ACs.)
    @Test func aFlatImageHasTheBlurHashLayoutOfAlgorithmMd() throws {
        let black = painted(width: 4, height: 4) { _, _ in [0, 0, 0, 255] }
        #expect(try Placeholder.blurHash(black) == "L00000" + String(repeating: "fQ", count: 11))
        let flat = painted(width: 7, height: 5) { _, _ in [200, 100, 50, 255] }
        let hash = try Placeholder.blurHash(flat, componentsX: 2, componentsY: 5)
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")
        let digits = hash.map { alphabet.firstIndex(of: $0)! }
        #expect(hash.count == 4 + 2 * 2 * 5)
        #expect(digits[0] == (2 - 1) + (5 - 1) * 9)
        let average: Int = digits[2...5].reduce(0) { $0 * 83 + $1 }
        let expectedAverage = 200 << 16 | 100 << 8 | 50
        #expect(average == expectedAverage)
    }

    /// The header bits of evanw/thumbhash's layout: has-alpha is bit 7 of byte 2, landscape bit 7
    /// of byte 4, and an alpha byte follows the 5-byte header when there is alpha.
    @Test func thumbHashHeaderFlags() throws {
        let opaqueWide = painted(width: 60, height: 20) { x, _ in [UInt8(x * 4), 0, 0, 255] }
        let clearTall = painted(width: 20, height: 60) { _, y in [0, 0, 255, UInt8(y * 4)] }
        let wide = try Placeholder.thumbHash(opaqueWide), tall = try Placeholder.thumbHash(clearTall)
        #expect(wide[2] & 0x80 == 0 && wide[4] & 0x80 != 0)
        #expect(tall[2] & 0x80 != 0 && tall[4] & 0x80 == 0)
    }

    @Test func refusals() {
        let small = painted(width: 8, height: 8) { _, _ in [1, 2, 3, 255] }
        #expect(throws: CodecError.self) { try Placeholder.blurHash(small, componentsX: 0) }
        #expect(throws: CodecError.self) { try Placeholder.blurHash(small, componentsY: 10) }
        #expect((try? Placeholder.blurHash(small, componentsX: 9, componentsY: 9))?.count == 4 + 2 * 81)
        let tooWide = painted(width: 101, height: 10) { _, _ in [1, 2, 3, 255] }
        #expect(throws: CodecError.self) { try Placeholder.thumbHash(tooWide) }
        #expect(throws: CodecError.self) { try Placeholder.thumbHashBase64(tooWide) }
        #expect((try? Placeholder.blurHash(tooWide)) != nil)
    }

    @Test func grayReadsAsEqualChannels() throws {
        var gray = Bitmap(width: 13, height: 9, pixelFormat: .gray8)
        let rowBytes = gray.rowBytes
        gray.withUnsafeMutableBytes { bytes in
            for y in 0..<9 { for x in 0..<13 { bytes[y * rowBytes + x] = UInt8(x * 19 + y) } }
        }
        let rgba = gray.converted(to: .rgba8)
        #expect(try Placeholder.blurHash(gray) == Placeholder.blurHash(rgba))
        #expect(try Placeholder.thumbHash(gray) == Placeholder.thumbHash(rgba))
        #expect(rgb(Placeholder.dominantColor(gray)) == rgb(Placeholder.dominantColor(rgba)))
    }

    private func rgb(_ colour: (red: UInt8, green: UInt8, blue: UInt8)) -> [UInt8] { [colour.red, colour.green, colour.blue] }

    @Test func dominantColourIsTheMeanOfTheFullestBucket() {
        // 60 % reddish pixels in one bucket (240...255, 0...15, 0...15), the rest spread out.
        let image = painted(width: 10, height: 10) { x, y in
            x < 6 ? [UInt8(240 + x), UInt8(y), 3, 255] : [UInt8(x * 20), 128, UInt8(y * 25), 255]
        }
        #expect(rgb(Placeholder.dominantColor(image)) == [243, 5, 3])   // means 242.5 → 243 (half up), 4.5 → 5, 3
        // Transparent pixels never count, however many.
        let mostlyClear = painted(width: 10, height: 10) { x, _ in x < 2 ? [10, 200, 30, 255] : [255, 255, 255, 0] }
        #expect(rgb(Placeholder.dominantColor(mostlyClear)) == [10, 200, 30])
        // Faint pixels count only when nothing is at least half opaque.
        let faint = painted(width: 4, height: 4) { x, _ in x == 0 ? [90, 90, 90, 20] : [0, 0, 0, 0] }
        #expect(rgb(Placeholder.dominantColor(faint)) == [90, 90, 90])
        // Nothing visible at all: the mean of every pixel.
        let clear = painted(width: 2, height: 1) { x, _ in x == 0 ? [100, 0, 50, 0] : [0, 0, 0, 0] }
        #expect(rgb(Placeholder.dominantColor(clear)) == [50, 0, 25])
        // Ties go to the lowest bucket.
        let tie = painted(width: 2, height: 1) { x, _ in x == 0 ? [255, 255, 255, 255] : [0, 0, 0, 255] }
        #expect(rgb(Placeholder.dominantColor(tie)) == [0, 0, 0])
    }

    // MARK: The Python references

    /// `$EASEL_COMPAT_PYTHON`, else the virtualenv `make deps` makes in `.venv-compat/`.
    private static func compatPython(file: String = #filePath) -> String {
        if let python = ProcessInfo.processInfo.environment["EASEL_COMPAT_PYTHON"], !python.isEmpty { return python }
        let root = URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".venv-compat/bin/python3").path
    }

    /// Loads each raw RGBA file (path, width, height triples in argv) and prints its BlurHash
    /// (4×3) and base64 ThumbHash, one image per line.
    private static let referenceProgram = """
        import sys, base64, importlib.metadata as metadata
        for name, version in (("blurhash", "1.1.5"), ("thumbhash-python", "1.0.1")):
            found = metadata.version(name)
            if found != version:
                sys.exit(f"{name} {found} is installed, the tests need {version}: run `make deps`")
        import blurhash
        from thumbhash.encode import rgba_to_thumbhash
        arguments = sys.argv[1:]
        for i in range(0, len(arguments), 3):
            path, w, h = arguments[i], int(arguments[i + 1]), int(arguments[i + 2])
            rgba = open(path, "rb").read()
            rows = [[list(rgba[(y * w + x) * 4:(y * w + x) * 4 + 3]) for x in range(w)] for y in range(h)]
            thumb = base64.b64encode(rgba_to_thumbhash(w, h, list(rgba))).decode()
            print(blurhash.encode(rows, components_x=4, components_y=3), thumb)
        """

    /// The references' hashes of `bitmaps`, from one run of the Python interpreter (killed after
    /// 60 s).
    private static func referenceHashes(_ bitmaps: [Bitmap]) throws -> [(blurHash: String, thumbHash: String)] {
        let python = compatPython()
        try #require(FileManager.default.isExecutableFile(atPath: python),
                     "no Python with the placeholder references at \(python): run `make deps` (or set EASEL_COMPAT_PYTHON)")
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("easel-placeholders-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var arguments = ["-c", referenceProgram]
        for (index, bitmap) in bitmaps.enumerated() {
            // Unpadded straight RGBA, rows top to bottom.
            let rgba = bitmap.converted(to: .rgba8)
            var bytes = Data(capacity: rgba.width * rgba.height * 4)
            rgba.withUnsafeBytes { raw in
                for y in 0..<rgba.height {
                    bytes.append(contentsOf: raw[(y * rgba.rowBytes)..<(y * rgba.rowBytes + rgba.width * 4)])
                }
            }
            let file = directory.appendingPathComponent("\(index).rgba")
            try bytes.write(to: file)
            arguments += [file.path, String(rgba.width), String(rgba.height)]
        }

        let outputURL = directory.appendingPathComponent("stdout"), errorURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL), errors = try FileHandle(forWritingTo: errorURL)
        defer { try? output.close(); try? errors.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try ChildProcesses.run(process)
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let timedOut = process.isRunning
        if timedOut {
            process.terminate()
            let grace = Date().addingTimeInterval(5)
            while process.isRunning && Date() < grace { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        let stdout = String(decoding: try Data(contentsOf: outputURL), as: UTF8.self)
        let stderr = String(decoding: try Data(contentsOf: errorURL), as: UTF8.self)
        try #require(!timedOut, "the Python reference ran for more than 60 s and was stopped")
        try #require(process.terminationStatus == 0,
                     "the Python reference failed (\(process.terminationStatus)); run `make deps`: \(stderr)")
        return stdout.split(separator: "\n").map { line in
            let fields = line.split(separator: " ")
            return (String(fields.first ?? ""), String(fields.count > 1 ? fields[1] : ""))
        }
    }
}
