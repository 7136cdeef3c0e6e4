@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// The processors behind thumbor's filters with thumbor's meaning: the wavelet sharpen's
/// amount, radius and luminance_only; trim's Euclidean tolerance and bottom-right reference;
/// elliptical and coloured corners; blur's radius; watermark ratios on both sides.
@Suite struct ThumborFilterTests {
    static func image(_ width: Int, _ height: Int, _ pixel: (Int, Int) -> [UInt8]) -> Bitmap {
        paintedOpaque(width: width, height: height, pixel)
    }

    /// Gray 100 | 150 at x = 20 of 40×20.
    static let edge = image(40, 20) { x, _ in x < 20 ? [100, 100, 100] : [150, 150, 150] }

    @Test func waveletSharpenGrowsWithItsAmountAndLeavesFlatAreasAlone() throws {
        func jump(_ amount: Double) throws -> Int {
            let out = try WaveletSharpen(amount: amount, radius: 0).process(Self.edge)
            #expect(out.pixel(x: 0, y: 10) == [100, 100, 100, 255] && out.pixel(x: 39, y: 10) == [150, 150, 150, 255])
            return Int(out.pixel(x: 20, y: 10)[0]) - Int(out.pixel(x: 19, y: 10)[0])
        }
        #expect(try jump(0) == 50)
        let small = try jump(0.5), large = try jump(3)
        #expect(small > 50 && large > small + 20, "edge jumps \(small), \(large)")
        // A flat image stays exactly as it is, whatever the amount.
        let flat = Self.image(16, 16) { _, _ in [90, 120, 200] }
        #expect(try WaveletSharpen(amount: 10, radius: 1).process(flat).hasSamePixels(as: flat))
        // Gray bitmaps have one channel.
        let gray = Self.edge.converted(to: .gray8)
        let sharpenedGray = try WaveletSharpen(amount: 3, radius: 0).process(gray)
        #expect(sharpenedGray.pixelFormat == .gray8 && sharpenedGray.pixel(x: 19, y: 10)[0] < 100)
    }

    @Test func theRadiusPicksTheBoostedScale() throws {
        // radius 0 boosts one-pixel detail most; radius 2, four-pixel detail: at the edge itself
        // the fine boost is the steeper.
        let fine = try WaveletSharpen(amount: 3, radius: 0).process(Self.edge)
        let coarse = try WaveletSharpen(amount: 3, radius: 3).process(Self.edge)
        #expect(!fine.hasSamePixels(as: coarse))
        // The coarse boost reaches further from the edge.
        #expect(abs(Int(coarse.pixel(x: 14, y: 10)[0]) - 100) > abs(Int(fine.pixel(x: 14, y: 10)[0]) - 100))
    }

    @Test func luminanceOnlyKeepsTheChroma() throws {
        let colours = Self.image(40, 20) { x, _ in x < 20 ? [180, 60, 60] : [60, 60, 180] }
        let luma = try WaveletSharpen(amount: 3, radius: 0, luminanceOnly: true).process(colours)
        let all = try WaveletSharpen(amount: 3, radius: 0).process(colours)
        func chroma(_ p: [UInt8]) -> (Double, Double) {
            let r = Double(p[0]), g = Double(p[1]), b = Double(p[2])
            return (-0.168736 * r - 0.331264 * g + 0.5 * b, 0.5 * r - 0.418688 * g - 0.081312 * b)
        }
        for x in 16..<24 {
            let kept = chroma(luma.pixel(x: x, y: 10)), source = chroma(colours.pixel(x: x, y: 10))
            #expect(abs(kept.0 - source.0) <= 1.5 && abs(kept.1 - source.1) <= 1.5, "x = \(x)")
        }
        #expect(!luma.hasSamePixels(as: colours) && !luma.hasSamePixels(as: all))
    }

    @Test func theColourUnderTransparentPixelsNeverReachesVisibleOnes() throws {
        // Opaque red on the left, transparent on the right: hidden black or hidden white there
        // must give the same visible pixels (alpha weighs every smoothing).
        func image(hidden: [UInt8]) -> Bitmap {
            Self.image(40, 20) { x, _ in x < 20 ? [255, 0, 0, 255] : hidden + [0] }
        }
        let sharpen = try WaveletSharpen(amount: 3, radius: 0)
        let overBlack = try sharpen.process(image(hidden: [0, 0, 0])), overWhite = try sharpen.process(image(hidden: [255, 255, 255]))
        for x in 0..<20 {
            #expect(overBlack.pixel(x: x, y: 10) == overWhite.pixel(x: x, y: 10), "x = \(x)")
            #expect(overBlack.pixel(x: x, y: 10) == [255, 0, 0, 255], "a flat opaque area stays flat: x = \(x)")
        }
        #expect(overBlack.pixel(x: 30, y: 10)[3] == 0)
    }

    @Test func waveletSharpenRefusesParametersOutOfRange() {
        #expect(throws: CodecError.self) { try WaveletSharpen(amount: -1, radius: 0) }
        #expect(throws: CodecError.self) { try WaveletSharpen(amount: 1, radius: 9) }
        #expect(throws: CodecError.self) { try WaveletSharpen(amount: .nan, radius: 0) }
    }

    @Test func trimMeasuresEuclideanDistanceOrPerChannel() throws {
        // A white border with pixels 5 levels off on every channel (8.7 apart in RGB).
        let noisy = Self.image(30, 30) { x, y in
            (10..<20).contains(x) && (10..<20).contains(y) ? [255, 0, 0] : ((x + y) % 3 == 0 ? [250, 250, 250] : [255, 255, 255])
        }
        #expect(try Trim(tolerance: 5, metric: .perChannel).process(noisy).width == 10)
        #expect(try Trim(tolerance: 5, metric: .euclidean).process(noisy).width == 30)
        #expect(try Trim(tolerance: 9, metric: .euclidean).process(noisy).width == 10)
        #expect(throws: CodecError.self) { try Trim.validated(tolerance: 300) }
        #expect(try Trim.validated(tolerance: 442, metric: .euclidean).tolerance == 442)
        // The native identifier is unchanged; the others say what differs.
        #expect(try Trim(tolerance: 10).identifier == "trim(10)")
        #expect(try Trim(tolerance: 10, metric: .euclidean, reference: .bottomRight).identifier == "trim(10,rgb,br)")
    }

    @Test func trimFromTheBottomRightPixel() throws {
        let marked = Self.image(30, 30) { x, y in
            x == 0 && y == 0 ? [0, 0, 0] : ((10..<20).contains(x) && (10..<20).contains(y) ? [255, 0, 0] : [255, 255, 255])
        }
        #expect(try Trim(tolerance: 0).process(marked).width == 30)
        let trimmed = try Trim(tolerance: 0, reference: .bottomRight).process(marked)
        #expect(trimmed.width == 20 && trimmed.height == 20 && trimmed.pixel(x: 0, y: 0) == [0, 0, 0, 255])
    }

    @Test func ellipticalAndColouredCorners() throws {
        let red = Self.image(60, 60) { _, _ in [255, 0, 0] }
        let ellipse = try RoundedCorners(radiusX: 20, radiusY: 5).process(red)
        #expect(ellipse.pixel(x: 0, y: 4)[3] > 200) // inside the 20×5 ellipse's corner
        #expect(ellipse.pixel(x: 5, y: 0)[3] < 60)
        let circle = try RoundedCorners(radius: 20).process(red)
        #expect(circle.pixel(x: 0, y: 4)[3] == 0)
        // Painted corners keep alpha and take the colour.
        let painted = try RoundedCorners(radiusX: 10, radiusY: 10, fill: (0, 0, 255)).process(red)
        #expect(painted.pixel(x: 0, y: 0) == [0, 0, 255, 255] && painted.pixel(x: 30, y: 30) == [255, 0, 0, 255])
        // The circular spelling and identity are those of before.
        #expect(try RoundedCorners(radius: 16).identifier == "rounded(16.0)")
        #expect(try RoundedCorners(radiusX: 16, radiusY: 16) == RoundedCorners(radius: 16))
        #expect(try RoundedCorners(radiusX: 16, radiusY: 4).identifier == "rounded(16.0,4.0)")
    }

    @Test func blurCutAtItsRadius() throws {
        let checker = Self.image(32, 32) { x, y in (x / 2 + y / 2) % 2 == 0 ? [0, 0, 0] : [255, 255, 255] }
        let whole = try GaussianBlur(sigma: 3).process(checker)
        let cut = try GaussianBlur(sigma: 3, radius: 1).process(checker)
        #expect(!whole.hasSamePixels(as: cut))
        #expect(try GaussianBlur(sigma: 3, radius: 9).identifier == GaussianBlur(sigma: 3).identifier)
        #expect(try GaussianBlur(sigma: 3, radius: 1).identifier == "blur(3.0,r1)")
        // Past the box-blur threshold a cut kernel is still exact.
        let large = try GaussianBlur(sigma: 40, radius: 2).process(checker)
        #expect(!large.hasSamePixels(as: try GaussianBlur(sigma: 40).process(checker)))
    }

    @Test func watermarkFitsInsideBothRatios() throws {
        let mark = Self.image(20, 10) { _, _ in [0, 0, 255] }
        let red = Self.image(60, 60) { _, _ in [255, 0, 0] }
        // Width limited to 30: 30×15. Height limited to 6: 12×6. Both: the smaller.
        let wide = try Watermark(mark: mark, markIdentifier: "m", position: .northWest, scale: 0.5)
        #expect(try wide.scaledMark(imageWidth: 60, imageHeight: 60).width == 30)
        let short = try Watermark(mark: mark, markIdentifier: "m", position: .northWest, heightScale: 0.1)
        let shortMark = try short.scaledMark(imageWidth: 60, imageHeight: 60)
        #expect(shortMark.width == 12 && shortMark.height == 6)
        let both = try Watermark(mark: mark, markIdentifier: "m", position: .northWest, scale: 0.5, heightScale: 0.1)
        #expect(try both.scaledMark(imageWidth: 60, imageHeight: 60).width == 12)
        let out = try short.process(red)
        #expect(out.pixel(x: 11, y: 0) == [0, 0, 255, 255] && out.pixel(x: 12, y: 0) == [255, 0, 0, 255])
        // The identifier of a width-only scale is as before.
        #expect(wide.identifier == "watermark(m,1.0,northWest,0,0,0.5)")
    }

    @Test func padPlacesTheImageAtAFocalPoint() throws {
        let red = Self.image(20, 20) { _, _ in [255, 0, 0] }
        let corner = try Pad(width: 40, height: 40, red: 0, green: 0, blue: 255, gravity: .focalPoint(x: 0, y: 0)).process(red)
        #expect(corner.pixel(x: 0, y: 0) == [255, 0, 0, 255] && corner.pixel(x: 20, y: 20) == [0, 0, 255, 255])
        let quarter = try Pad(width: 40, height: 40, red: 0, green: 0, blue: 255, gravity: .focalPoint(x: 0.75, y: 0.5)).process(red)
        // Centred at x = 30 as far as the canvas allows: x 20…39.
        #expect(quarter.pixel(x: 20, y: 20) == [255, 0, 0, 255] && quarter.pixel(x: 19, y: 20) == [0, 0, 255, 255])
        // One side only: the other is never cut below the image's.
        let wider = try Pad(width: 40, height: 1, red: 0, green: 0, blue: 255).process(red)
        #expect(wider.width == 40 && wider.height == 20)
    }
}
