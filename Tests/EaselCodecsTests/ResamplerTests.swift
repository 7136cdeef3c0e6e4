@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// The fixed-point resampler (Sources/CResample) against the float one it replaces for opaque
/// images, and the extent of a shrink-on-load decode.
@Suite("Resampler")
struct ResamplerTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func sample(_ name: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent("Samples/\(name)"))
    }

    /// Mean squared error over the colour channels (gray: the one channel).
    static func meanSquaredError(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.pixelFormat == b.pixelFormat)
        let channels = a.pixelFormat == .gray8 ? 1 : 3, bpp = a.pixelFormat.bytesPerPixel
        var total = 0.0
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                for row in 0..<a.height {
                    for column in 0..<a.width {
                        for c in 0..<channels {
                            let d = Double(x[row * a.rowBytes + column * bpp + c]) - Double(y[row * b.rowBytes + column * bpp + c])
                            total += d * d
                        }
                    }
                }
            }
        }
        return total / Double(a.width * a.height * channels)
    }

    static func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
        let mse = meanSquaredError(a, b)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    static func maximumDifference(_ a: Bitmap, _ b: Bitmap) -> Int {
        let bpp = a.pixelFormat.bytesPerPixel
        var largest = 0
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                for row in 0..<a.height {
                    for i in 0..<(a.width * bpp) {
                        largest = max(largest, abs(Int(x[row * a.rowBytes + i]) - Int(y[row * b.rowBytes + i])))
                    }
                }
            }
        }
        return largest
    }

    /// Thumbnails as `easel thumbnail` makes them (shrink-on-load, then Lanczos), in fixed point
    /// and in floats, each scored against the float Lanczos of the full decode: the fixed-point
    /// path loses at most 0.1 dB (where shrink-on-load applied, so that the reference is not the
    /// float path itself), and stays within a level or two of the float path everywhere.
    @Test(arguments: ["chelsea-cat.jpg", "astronaut.jpg", "rocket-launchpad.jpg", "hubble-deep-field.jpg",
                      "brick-wall-gray.jpg", "rocket-launchpad-portrait.jpg"])
    func fixedPointThumbnailsAreWithinATenthOfADecibelOfTheFloatPath(name: String) throws {
        let data = try Self.sample(name)
        let full = try ImageDecoder.decode(data)
        for box in [(256, 256), (200, 130), (97, 61), (full.width * 2 / 3, full.height * 2 / 3)] {
            let resize = Resize(width: box.0, height: box.1, mode: .fit)
            let size = resize.scaledSize(sourceWidth: full.width, sourceHeight: full.height)
            let truth = full.resampled(width: size.width, height: size.height, arithmetic: .float)
            let decoded = try ImageDecoder.decode(data, covering: size)
            let fixed = decoded.resampled(width: size.width, height: size.height)
            let float = decoded.resampled(width: size.width, height: size.height, arithmetic: .float)
            if decoded.width < full.width {
                let fixedScore = Self.psnr(fixed, truth), floatScore = Self.psnr(float, truth)
                #expect(fixedScore >= floatScore - 0.1, "\(name) \(size): fixed \(fixedScore) dB, float \(floatScore) dB")
            }
            #expect(Self.psnr(fixed, float) >= 50, "\(name) \(size): fixed vs float \(Self.psnr(fixed, float)) dB")
            #expect(Self.maximumDifference(fixed, float) <= 2, "\(name) \(size)")
            if decoded.width != size.width || decoded.height != size.height {
                #expect(!fixed.hasSamePixels(as: float), "\(name) \(size): the fixed-point path did not run")
            }
            #expect(fixed.isKnownOpaque)
        }
    }

    /// Gray bitmaps take the one-channel row pass; enlargements and tiny sizes (fewer pixels
    /// than taps) too.
    @Test(arguments: [(64, 48, 31, 17), (31, 17, 64, 48), (5, 3, 2, 2), (3, 9, 7, 1), (1, 40, 1, 13), (40, 1, 13, 1)])
    func grayAndTinySizesAgreeWithTheFloatPath(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) {
        var gray = Bitmap(width: sourceWidth, height: sourceHeight, pixelFormat: .gray8)
        let rowBytes = gray.rowBytes
        gray.withUnsafeMutableBytes { bytes in
            for y in 0..<sourceHeight { for x in 0..<sourceWidth { bytes[y * rowBytes + x] = UInt8((x * 37 + y * 91) % 256) } }
        }
        let rgba = painted(width: sourceWidth, height: sourceHeight) { x, y in [UInt8((x * 37) % 256), UInt8((y * 53) % 256), UInt8((x * y) % 256), 255] }
        var opaque = rgba
        opaque.markOpaque()
        for source in [gray, opaque] {
            let fixed = source.resampled(width: width, height: height)
            let float = source.resampled(width: width, height: height, arithmetic: .float)
            #expect(fixed.width == width && fixed.height == height)
            #expect(Self.maximumDifference(fixed, float) <= 2, "\(source.pixelFormat) \(sourceWidth)x\(sourceHeight) -> \(width)x\(height)")
        }
    }

    /// Weights sum to exactly one in fixed point: a flat area keeps its value to the level, and
    /// opaque alpha stays 255; extremes clamp, never wrap.
    @Test func flatAreasAreExactAndExtremesClamp() {
        var flat = painted(width: 300, height: 200) { _, _ in [201, 3, 254, 255] }
        flat.markOpaque()
        for size in [(123, 77), (299, 201), (640, 480)] {
            let out = flat.resampled(width: size.0, height: size.1)
            for (x, y) in [(0, 0), (size.0 - 1, size.1 - 1), (size.0 / 2, size.1 / 3)] {
                #expect(out.pixel(x: x, y: y) == [201, 3, 254, 255])
            }
        }
        var checker = painted(width: 64, height: 64) { x, y in (x + y) % 2 == 0 ? [0, 0, 0, 255] : [255, 255, 255, 255] }
        checker.markOpaque()
        var edge = painted(width: 64, height: 64) { x, _ in x < 32 ? [0, 0, 0, 255] : [255, 255, 255, 255] }
        edge.markOpaque()
        for source in [checker, edge] {
            let up = source.resampled(width: 150, height: 150)
            let float = source.resampled(width: 150, height: 150, arithmetic: .float)
            #expect(Self.maximumDifference(up, float) <= 2) // the overshoot is kept between the passes
            for x in 0..<150 { #expect(up.pixel(x: x, y: 75)[3] == 255) }
        }
    }

    /// Images with alpha stay on the premultiplied float path: the result is the float result.
    @Test func translucentImagesUseTheFloatPath() {
        let translucent = painted(width: 90, height: 60) { x, y in [UInt8(x * 2), UInt8(y * 4), 100, UInt8((x + y) % 256)] }
        let automatic = translucent.resampled(width: 41, height: 23)
        let float = translucent.resampled(width: 41, height: 23, arithmetic: .float)
        #expect(automatic.hasSamePixels(as: float))
    }

    /// 1280x853 at 1/4 decodes to 320x214 rows, of which 213.25 are image: the resize maps that
    /// extent, so the thumbnail lines up with the full image (it was a quarter of a row off at
    /// the bottom, 2.7 dB worse on the mixed corpus' 1280x853 files).
    @Test func aShrinkOnLoadDecodeResizesItsExactExtent() throws {
        let photo = try ImageDecoder.decode(try Self.sample("astronaut.jpg"))
        let large = photo.resampled(width: 1280, height: 853)
        let jpeg = try ImageEncoder.encode(large, as: .jpeg(quality: 95))
        let full = try ImageDecoder.decode(jpeg)
        let decoded = try ImageDecoder.decode(jpeg, covering: (256, 171))
        #expect(decoded.width == 320 && decoded.height == 214)
        #expect(decoded.imageExtent == Resampler.Extent(width: 320, height: 213.25))
        let truth = full.resampled(width: 256, height: 171, arithmetic: .float)
        let thumbnail = try Resize(width: 256, height: 256, mode: .fit).process(decoded)
        #expect(thumbnail.width == 256 && thumbnail.height == 171)
        let ignoringExtent = Resampler.resize(decoded, width: 256, height: 171)
        let withExtent = Self.psnr(thumbnail, truth), without = Self.psnr(ignoringExtent, truth)
        #expect(withExtent > without + 1, "with the extent \(withExtent) dB, without \(without) dB")
        // Sizes come from the extent too: a fit into 300x200 is 300x200, as from the full decode
        // (the padded 320x214 would make it 299x200).
        let fitted = try Resize(width: 300, height: 200, mode: .fit).process(decoded)
        #expect(fitted.width == 300 && fitted.height == 200)
        #expect(Resize(width: 300, height: 200, mode: .fit).scaledSize(sourceWidth: 1280, sourceHeight: 853) == (300, 200))
        // A fill crops in whole pixels and maps whole pixels, as before the extent existed.
        let fill = try Resize(width: 200, height: 171, mode: .fill).process(decoded)
        var padded = decoded
        padded.imageExtent = nil
        #expect(fill.hasSamePixels(as: try Resize(width: 200, height: 171, mode: .fill).process(padded)))
    }
}
