import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

@Suite("Bad input")
struct BadInputTests {
    static let goodJPEG = try! ImageEncoder.encode(gradient(width: 64, height: 64), as: .jpeg(quality: 80))
    static let goodPNG = try! ImageEncoder.encode(gradient(width: 64, height: 64), as: .png())

    /// Cut anywhere before the end of the image data. (A PNG cut only inside its final IEND
    /// chunk still holds every pixel, and decodes.)
    @Test(arguments: [goodJPEG, goodPNG])
    func truncatedFilesAreCorruptNotCrashes(file: Data) {
        for length in [3, 20, 60, file.count / 3, file.count / 2, file.count - 17] {
            let truncated = file.prefix(length)
            #expect(throws: CodecError.self, "length \(length)") { try ImageDecoder.decode(Data(truncated)) }
        }
    }

    @Test func zeroBytesAndRandomBytesAreRefused() {
        #expect(throws: CodecError.unknownFormat) { try ImageDecoder.decode(Data()) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let noise = Data((0..<Int.random(in: 1...4_096, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            #expect(throws: CodecError.self) { try ImageDecoder.decode(noise) }
        }
    }

    @Test func rightMagicWrongContentIsCorrupt() {
        var jpegNoise = Data([0xFF, 0xD8, 0xFF])
        jpegNoise.append(Data(repeating: 0x41, count: 500))
        #expect { try ImageDecoder.decode(jpegNoise) } throws: { error in
            if case .corrupt(.jpeg, _) = error as? CodecError { return true }
            return false
        }
        var pngNoise = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        pngNoise.append(Data(repeating: 0x41, count: 500))
        #expect { try ImageDecoder.decode(pngNoise) } throws: { error in
            if case .corrupt(.png, _) = error as? CodecError { return true }
            return false
        }
    }

    /// Four bytes flipped past the signature, 100 seeded ways per file (a failure names its seed,
    /// so it can be made again): never a crash; an error is a `CodecError`; an image is the size
    /// its header says, and the same damaged bytes decode to the same pixels every time. Most
    /// damaged PNGs are refused; some of these seeds decode to other pixels (measured: 17 of
    /// 100, where the first decoder's checks send the file on to libspng, which reads it), an
    /// open question noted for the decoder, not asserted either way.
    @Test func flippedBytesInsideImageDataAreRefusedOrDecodeConsistently() throws {
        for (file, isPNG) in [(Self.goodJPEG, false), (Self.goodPNG, true)] {
            var refused = 0
            for seed in UInt64(0)..<100 {
                do {
                    _ = try decodedConsistently(flippingBytes(of: file, seed: seed, from: 20), "seed \(seed)")
                } catch {
                    #expect(error is CodecError, "seed \(seed): \(error)")
                    refused += 1
                }
            }
            // (83 of these 100 seeds with Debian's libspng.)
            if isPNG { #expect(refused >= 75, "\(refused) of 100 damaged PNGs refused") }
        }
    }

    @Test func aHugeDeclaredPNGIsRefusedBeforeAllocating() throws {
        // 100000 × 100000 declared in IHDR; the data that follows is tiny.
        var png = TestPNG.make(width: 1, height: 1, bitDepth: 8, colorType: 6) { _, _ in [0, 0, 0, 0] }
        png.replaceSubrange(16..<24, with: TestPNG.be32(100_000) + TestPNG.be32(100_000))
        // Refused where the header is read (info), so no caller computes anything from it.
        #expect(throws: CodecError.tooManyPixels(width: 100_000, height: 100_000, limit: 50_000_000)) {
            try ImageDecoder.info(of: png)
        }
        #expect(throws: CodecError.tooManyPixels(width: 100_000, height: 100_000, limit: 50_000_000)) {
            try ImageDecoder.decode(png)
        }
        // With no pixel limit, info describes it (as `easel info` does).
        let info = try ImageDecoder.info(of: png, limits: DecodingLimits(maxPixels: .max))
        #expect(info.width == 100_000 && info.height == 100_000)
    }

    @Test func aHugeDeclaredJPEGIsRefusedBeforeAllocating() throws {
        // Patch the SOF0 frame size of a small JPEG to 65500 × 65500.
        var jpeg = Self.goodJPEG
        let bytes = [UInt8](jpeg)
        let sof = try #require((0..<(bytes.count - 9)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0xFF, 0xDC, 0xFF, 0xDC])
        #expect(throws: CodecError.tooManyPixels(width: 65_500, height: 65_500, limit: 50_000_000)) {
            try ImageDecoder.decode(jpeg)
        }
    }

    @Test func limitsAreSettings() throws {
        let strict = DecodingLimits(maxPixels: 100, maxInputBytes: 1_000_000)
        #expect(throws: CodecError.tooManyPixels(width: 64, height: 64, limit: 100)) {
            try ImageDecoder.decode(Self.goodPNG, limits: strict)
        }
        let tiny = DecodingLimits(maxInputBytes: 10)
        #expect(throws: CodecError.inputTooLarge(bytes: Self.goodPNG.count, limit: 10)) {
            try ImageDecoder.decode(Self.goodPNG, limits: tiny)
        }
    }

    @Test func progressiveScansAreLimited() throws {
        let progressive = try ImageEncoder.encode(gradient(width: 64, height: 64), as: .jpeg(quality: 80, progressive: true))
        #expect(throws: CodecError.tooManyScans(limit: 2)) {
            try ImageDecoder.decode(progressive, limits: configured(DecodingLimits()) { $0.maxProgressiveScans = 2 })
        }
        #expect(try ImageDecoder.decode(progressive).width == 64)
    }
}
