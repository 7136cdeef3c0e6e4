import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// Every size is checked once, where the header is read; geometry never traps and never makes a
/// side of 0.
@Suite struct SizeValidationTests {
    @Test func headerSizesAreCheckedBeforeAnyArithmetic() throws {
        let limits = DecodingLimits.default
        #expect(throws: CodecError.noPixels(width: 0, height: 12)) { try limits.check(width: 0, height: 12) }
        #expect(throws: CodecError.noPixels(width: 16, height: 0)) { try limits.check(width: 16, height: 0) }
        // 2³²−1 a side: width × height overflows 64 bits' signed range; a refusal, not a trap.
        let huge = Int(UInt32.max)
        #expect(throws: CodecError.tooManyPixels(width: huge, height: huge, limit: limits.maxPixels)) {
            try limits.check(width: huge, height: huge)
        }
        #expect(throws: CodecError.tooManyPixels(width: .max, height: .max, limit: limits.maxPixels)) {
            try limits.check(width: .max, height: .max)
        }
        #expect(throws: CodecError.sideTooLong(width: 3000, height: 10, limit: 2048)) {
            try DecodingLimits(maxSide: 2048).check(width: 3000, height: 10)
        }
        try limits.check(width: 1, height: 20_000)
        #expect(CodecError.noPixels(width: 0, height: 0).description.contains("has no pixels"))
    }

    @Test func aPNGHeaderOfZeroPixelsIsRefusedByInfoAndDecode() throws {
        // (libspng refuses a side of 0 itself, as corrupt; HEIC's `ispe` is what reaches Easel's
        // own check: see the crash canary and the CLI test.)
        var png = try ImageEncoder.encode(Bitmap(width: 4, height: 3, pixelFormat: .rgba8), as: .png())
        for index in 16..<20 { png[index] = 0 }  // width 0, with its CRC recomputed
        let crc = crc32(png[12..<29])
        for i in 0..<4 { png[29 + i] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * i)) }
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: png) }
        #expect(throws: CodecError.self) { try ImageDecoder.decode(png) }
    }

    @Test func infoFromAnotherCallerIsCheckedAgainstTheDecodesLimits() throws {
        let jpeg = try ImageEncoder.encode(Bitmap(width: 64, height: 48, pixelFormat: .rgba8), as: .jpeg())
        let info = try ImageDecoder.info(of: jpeg)
        #expect(throws: CodecError.sideTooLong(width: 64, height: 48, limit: 32)) {
            try ImageDecoder.decode(jpeg, info: info, limits: DecodingLimits(maxSide: 32))
        }
        var lying = info
        lying.width = 0
        #expect(throws: CodecError.noPixels(width: 0, height: 48)) { try ImageDecoder.decode(jpeg, info: lying) }
    }

    @Test func floatingPointConversionsNeverTrap() {
        #expect(Int(checked: Double.nan) == 0)
        #expect(Int(checked: Double.infinity) == .max && Int(checked: -Double.infinity) == .min)
        #expect(Int(checked: 1e300) == .max)
        #expect(UInt8(checked: Float(300)) == 255 && UInt8(checked: Float(-3)) == 0)
        #expect(Int(checked: 2.5, rounding: .toNearestOrAwayFromZero) == 3 && Int(checked: 2.9) == 2)
        #expect(Int.checkedProduct(Int(UInt32.max), Int(UInt32.max)) == nil)
    }

    @Test func extremeAspectRatiosKeepEverySideAtLeastOnePixel() throws {
        for mode in ResizeMode.allCases {
            for (w, h) in [(1, 20_000), (20_000, 1), (1, 1)] {
                let size = Resize(width: 256, height: 256, mode: mode).scaledSize(sourceWidth: w, sourceHeight: h)
                #expect(size.width >= 1 && size.height >= 1, "\(mode) \(w)×\(h) → \(size)")
                let minimum = Resize(width: 256, height: 256, mode: mode).minimumSourceSize(sourceWidth: w, sourceHeight: h)
                #expect(minimum.width >= 1 && minimum.height >= 1)
            }
        }
        #expect(Resize(width: 256, height: 256).scaledSize(sourceWidth: 1, sourceHeight: 20_000) == (1, 256))
        let tall = Bitmap(width: 1, height: 2_000, pixelFormat: .rgba8)
        for mode in ResizeMode.allCases {
            let out = try Resize(width: 64, height: 64, mode: mode).process(tall)
            #expect(out.width >= 1 && out.height >= 1, "\(mode)")
        }
    }

    @Test func largeSigmaBlurIsABoxApproximationOfTheGaussian() throws {
        // A flat colour stays flat; a bright square spreads symmetrically, brightest at its centre.
        var flat = Bitmap(width: 64, height: 64, pixelFormat: .rgba8)
        flat.withUnsafeMutableBytes { bytes in for i in stride(from: 0, to: bytes.count, by: 4) { bytes[i] = 90; bytes[i + 1] = 90; bytes[i + 2] = 90; bytes[i + 3] = 255 } }
        flat.markOpaque()
        let blurred = try GaussianBlur(sigma: 40).process(flat)
        #expect(blurred.pixel(x: 0, y: 0) == [90, 90, 90, 255] && blurred.pixel(x: 33, y: 17) == [90, 90, 90, 255])
        var dot = Bitmap(width: 101, height: 101, pixelFormat: .rgba8)
        dot.withUnsafeMutableBytes { bytes in for i in stride(from: 3, to: bytes.count, by: 4) { bytes[i] = 255 } }
        dot.markOpaque()
        let rowBytes = dot.rowBytes
        dot.withUnsafeMutableBytes { bytes in for y in 46...54 { for x in 46...54 { bytes[y * rowBytes + x * 4] = 255 } } }
        let spread = try GaussianBlur(sigma: 6).process(dot)
        #expect(spread.pixel(x: 44, y: 50) == spread.pixel(x: 56, y: 50) && spread.pixel(x: 50, y: 44) == spread.pixel(x: 50, y: 56))
        #expect(spread.pixel(x: 50, y: 50)[0] > spread.pixel(x: 56, y: 50)[0])
        // Either side of the switch to boxes: the same energy (a blur moves light, it does not
        // add any), and a peak within 12 % (three boxes are a piecewise-quadratic Gaussian).
        let exact = try GaussianBlur(sigma: 4).process(dot), boxes = try GaussianBlur(sigma: 4.0001).process(dot)
        func energy(_ image: Bitmap) -> Int { (0..<image.height).reduce(0) { sum, y in (0..<image.width).reduce(sum) { $0 + Int(image.pixel(x: $1, y: y)[0]) } } }
        #expect(abs(energy(exact) - energy(boxes)) * 100 <= energy(exact), "\(energy(exact)) vs \(energy(boxes))")
        let peaks = (Int(exact.pixel(x: 50, y: 50)[0]), Int(boxes.pixel(x: 50, y: 50)[0]))
        #expect(abs(peaks.0 - peaks.1) * 100 <= 12 * peaks.0, "\(peaks)")
    }
}
