@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// thumbor's colour and geometry filters against their definitions, pixel by pixel.
@Suite struct ColorFilterTests {
    /// One row of RGBA pixels.
    static func row(_ pixels: [[UInt8]]) -> Bitmap {
        painted(width: pixels.count, height: 1) { x, _ in pixels[x] }
    }

    @Test func brightnessContrastRgbAndColorizeFollowThumborsArithmetic() throws {
        let source = Self.row([[100, 240, 0, 128], [200, 50, 128, 255]])
        // brightness(10): + 255 × 10 / 100 = 25, clamped; alpha kept.
        #expect(BMPAndICOTests.pixels(try ChannelCurves.brightness(10).process(source)) == [[125, 255, 25, 128], [225, 75, 153, 255]])
        #expect(BMPAndICOTests.pixels(try ChannelCurves.brightness(-100).process(source)) == [[0, 0, 0, 128], [0, 0, 0, 255]])
        // contrast(10): factor 110² / 100 = 121; 121 × (v − 128) / 100 + 128, truncated towards 0.
        #expect(BMPAndICOTests.pixels(try ChannelCurves.contrast(10).process(source))
                == [[95, 255, 0, 128], [215, 34, 128, 255]])
        #expect(try ChannelCurves.contrast(-100).process(source).pixel(x: 1, y: 0) == [128, 128, 128, 255])
        // rgb(10, -10, 20): + 25, − 25, + 51.
        #expect(BMPAndICOTests.pixels(try ChannelCurves.rgb(red: 10, green: -10, blue: 20).process(source))
                == [[125, 215, 51, 128], [225, 25, 179, 255]])
        // colorize(50, 0, 100, ff0000): red halfway to 255, green kept, blue all the way to 0.
        let colorized = try ChannelCurves.colorize(red: 50, green: 0, blue: 100, fill: (255, 0, 0)).process(source)
        #expect(BMPAndICOTests.pixels(colorized) == [[177, 240, 0, 128], [227, 50, 0, 255]])
    }

    @Test func saturationMovesAwayFromPerceivedBrightness() throws {
        let source = Self.row([[200, 100, 50, 255], [10, 20, 30, 40]])
        #expect(BMPAndICOTests.pixels(try Saturation(change: 1).process(source)) == BMPAndICOTests.pixels(source))
        // p = √(0.299 × 200² + 0.587 × 100² + 0.114 × 50²) = 134.59…: ×2 → 265 (255), 65, −34 (0).
        #expect(try Saturation(change: 2).process(source).pixel(x: 0, y: 0) == [255, 65, 0, 255])
        // 0: every channel is p.
        let gray = try Saturation(change: 0).process(source).pixel(x: 0, y: 0)
        #expect(gray[0] == 134 && gray[1] == 134 && gray[2] == 134)
        #expect(throws: CodecError.self) { try Saturation(change: .infinity) }
    }

    @Test func equalizeSpreadsEachChannelOverTheRange() throws {
        // Four values, one pixel each: their CDF spreads them to 0, 85, 170, 255; a channel of
        // one value is kept.
        let source = Self.row([[10, 7, 40, 255], [20, 7, 30, 255], [30, 7, 20, 255], [40, 7, 10, 255]])
        #expect(BMPAndICOTests.pixels(try Equalize().process(source))
                == [[0, 7, 255, 255], [85, 7, 170, 255], [170, 7, 85, 255], [255, 7, 0, 255]])
    }

    @Test func curvesAreNaturalSplinesThroughTheirPoints() throws {
        let table = try ChannelCurves.spline([(0, 0), (128, 64), (255, 255)])
        #expect(table[0] == 0 && table[128] == 64 && table[255] == 255)
        // Natural spline: M₁ = (191/127 − 64/128) / (255/3); S(64) = 32 − 0.375 M₁ × 128² / 6 = 19.9.
        #expect(table[64] == 20)
        #expect(zip(table, table.dropFirst()).allSatisfy { $0 <= $1 }, "monotone points, monotone curve")
        // Before the first point the first output, after the last the last.
        #expect(try ChannelCurves.spline([(50, 10), (200, 250)]).prefix(51).allSatisfy { $0 == 10 })
        #expect(try ChannelCurves.spline([(50, 10), (200, 250)]).suffix(56).allSatisfy { $0 == 250 })
        // A channel through its own curve, then through `all`'s: here red halved, then inverted.
        let curve = try ChannelCurves.curve(all: [(0, 255), (255, 0)], red: [(0, 0), (255, 128)], green: [(0, 0), (255, 255)],
                                            blue: [(0, 0), (255, 255)])
        #expect(try curve.process(Self.row([[200, 200, 0, 9]])).pixel(x: 0, y: 0) == [155, 55, 255, 9])
        #expect(throws: CodecError.self) { try ChannelCurves.spline([(10, 0), (10, 5)]) }
        #expect(throws: CodecError.self) { try ChannelCurves.spline([(0, 300), (255, 0)]) }
    }

    @Test func noiseIsBoundedSeededAndTheSameOnTheThreeChannels() throws {
        let source = painted(width: 64, height: 64) { _, _ in [128, 100, 50, 200] }
        let noisy = try Noise(amount: 10, seed: 5).process(source)
        var offsets = Set<Int>()
        for y in 0..<64 { for x in 0..<64 {
            let p = noisy.pixel(x: x, y: y)
            let offset = Int(p[0]) - 128
            #expect(Int(p[1]) - 100 == offset && Int(p[2]) - 50 == offset && p[3] == 200)
            offsets.insert(offset)
        } }
        // −⌊10/2⌋ … 10 − 1 − ⌊10/2⌋, every value drawn over 4096 pixels.
        #expect(offsets == Set(-5...4))
        #expect(BMPAndICOTests.pixels(try Noise(amount: 10, seed: 5).process(source)) == BMPAndICOTests.pixels(noisy))
        #expect(BMPAndICOTests.pixels(try Noise(amount: 10, seed: 6).process(source)) != BMPAndICOTests.pixels(noisy))
        #expect(BMPAndICOTests.pixels(try Noise(amount: 0).process(source)) == BMPAndICOTests.pixels(source))
    }

    @Test func convolutionWeighsTheNeighbourhoodWithEdgesRepeated() throws {
        let source = painted(width: 3, height: 3) { x, y in x == 1 && y == 1 ? [90, 180, 9, 255] : [0, 0, 0, 255] }
        let identity = try Convolution(weights: [0, 0, 0, 0, 1, 0, 0, 0, 0], columns: 3, normalize: false)
        #expect(BMPAndICOTests.pixels(try identity.process(source)) == BMPAndICOTests.pixels(source))
        // A 3×3 box, normalised: every neighbourhood holds the centre once, a ninth of its value.
        let weights = [Double](repeating: 1, count: 9)
        let box = try Convolution(weights: weights, columns: 3, normalize: true).process(source)
        #expect(box.pixel(x: 1, y: 1) == [10, 20, 1, 255] && box.pixel(x: 0, y: 0) == [10, 20, 1, 255])
        // Edges repeated: a pixel on the left edge counts twice in its own neighbourhood (2/9).
        let edge = painted(width: 3, height: 3) { x, y in x == 0 && y == 1 ? [90, 180, 9, 255] : [0, 0, 0, 255] }
        #expect(try Convolution(weights: weights, columns: 3, normalize: true).process(edge).pixel(x: 0, y: 1) == [20, 40, 2, 255])
        // Unnormalised: weights as given (a sharpen kernel), alpha convolved too.
        let sharpen = try Convolution(weights: [0, -1, 0, -1, 5, -1, 0, -1, 0], columns: 3, normalize: false).process(source)
        #expect(sharpen.pixel(x: 1, y: 1) == [255, 255, 45, 255] && sharpen.pixel(x: 0, y: 1) == [0, 0, 0, 255])
        #expect(throws: CodecError.self) { try Convolution(weights: [1, 1, 1, 1], columns: 2, normalize: true) }
        #expect(throws: CodecError.self) { try Convolution(weights: [Double](repeating: 1, count: 13 * 13), columns: 13, normalize: true) }
    }

    @Test func rotateTurnsCounterClockwiseByQuarterTurns() throws {
        // A 3×2 image with a red top-left pixel: a quarter turn to the left puts it bottom-left.
        let source = painted(width: 3, height: 2) { x, y in x == 0 && y == 0 ? [255, 0, 0, 255] : [0, 0, 255, 255] }
        let left = try QuarterTurn(degrees: 90).process(source)
        #expect(left.width == 2 && left.height == 3 && left.pixel(x: 0, y: 2) == [255, 0, 0, 255])
        let half = try QuarterTurn(degrees: 180).process(source)
        #expect(half.width == 3 && half.pixel(x: 2, y: 1) == [255, 0, 0, 255])
        let right = try QuarterTurn(degrees: -90).process(source)
        #expect(right.width == 2 && right.pixel(x: 1, y: 0) == [255, 0, 0, 255])
        #expect(try QuarterTurn(degrees: 270).identifier == QuarterTurn(degrees: -90).identifier)
        #expect(throws: CodecError.self) { try QuarterTurn(degrees: 45) }
    }

    @Test func proportionAndTheFitInVariantsSizeAsThumbor() throws {
        #expect(try Scale(factor: 0.5).process(Bitmap(width: 100, height: 60, pixelFormat: .rgba8)).width == 50)
        #expect(throws: CodecError.self) { try Scale(factor: 9) }
        #expect(try Scale(x: 2, y: 0.5).process(Bitmap(width: 100, height: 60, pixelFormat: .rgba8)).width == 200)
        func size(_ fit: FitIn, _ w: Int, _ h: Int) -> [Int] { let s = fit.size(sourceWidth: w, sourceHeight: h); return [s.width, s.height] }
        // fit-in: inside the box, never enlarged without upscale.
        #expect(size(FitIn(width: 100, height: 100, adaptive: false, full: false), 400, 200) == [100, 50])
        #expect(size(FitIn(width: 100, height: 100, adaptive: false, full: false), 50, 20) == [50, 20])
        #expect(size(FitIn(width: 100, height: 100, adaptive: false, full: false, upscale: true), 50, 20) == [100, 40])
        // full-fit-in: covers the box, nothing cropped, enlarged when needed.
        #expect(size(FitIn(width: 100, height: 100, adaptive: false, full: true), 400, 200) == [200, 100])
        #expect(size(FitIn(width: 100, height: 100, adaptive: false, full: true), 50, 20) == [250, 100])
        // adaptive: a landscape image in a portrait box gets the box turned.
        #expect(size(FitIn(width: 100, height: 200, adaptive: true, full: false), 400, 200) == [200, 100])
        #expect(size(FitIn(width: 100, height: 200, adaptive: false, full: false), 400, 200) == [100, 50])
        #expect(size(FitIn(width: 100, height: 200, adaptive: true, full: true), 400, 300) == [200, 150])
        // thumbor rounds half up: 333 × 100 / 200 = 166.5 → 167.
        #expect(size(FitIn(width: 100, height: 100, adaptive: false, full: false), 200, 333) == [60, 100])
        #expect(size(FitIn(width: 100, height: 100, adaptive: false, full: true), 200, 333) == [100, 167])
    }
}

extension ColorFilterTests {
    /// A 7×7 nine-patch: the middle column and row stretch, the content area is the inner 3×3
    /// (margins of 1), and the frame is a blue ring one pixel wide around a transparent middle.
    @Test func aNinePatchFrameGoesAroundTheImage() throws {
        let frame = painted(width: 7, height: 7) { x, y -> [UInt8] in
            let guideTop = y == 0 && x == 3, guideLeft = x == 0 && y == 3
            let contentBottom = y == 6 && (2...4).contains(x), contentRight = x == 6 && (2...4).contains(y)
            if guideTop || guideLeft || contentBottom || contentRight { return [0, 0, 0, 255] }
            if x == 0 || y == 0 || x == 6 || y == 6 { return [0, 0, 0, 0] }
            return x == 1 || y == 1 || x == 5 || y == 5 ? [0, 0, 255, 255] : [0, 0, 0, 0]
        }
        let step = try NinePatchFrame(frame: frame, frameIdentifier: "ring")
        #expect(step.margins == (1, 1, 1, 1))
        let framed = try step.process(painted(width: 10, height: 6) { _, _ in [255, 0, 0, 255] })
        #expect(framed.width == 12 && framed.height == 8 && framed.isKnownOpaque)
        for (x, y) in [(0, 0), (0, 4), (11, 7), (6, 0), (11, 3)] { #expect(framed.pixel(x: x, y: y) == [0, 0, 255, 255], "(\(x), \(y))") }
        for (x, y) in [(1, 1), (6, 4), (10, 6)] { #expect(framed.pixel(x: x, y: y) == [255, 0, 0, 255], "(\(x), \(y))") }
        #expect(throws: CodecError.self) { try NinePatchFrame(frame: Bitmap(width: 2, height: 9, pixelFormat: .rgba8), frameIdentifier: "x") }
    }
}

extension ColorFilterTests {
    /// What a URL could make of these steps stays bounded: huge or near-cancelling convolution
    /// weights, results past the output limit, odd borders, a frame on a gray bitmap.
    @Test func hostileParametersAreRefusedOrBounded() throws {
        #expect(throws: CodecError.self) { try Convolution(weights: [1e20, 0, 0], columns: 3, normalize: false) }
        // Weights summing to almost 0 are not divided by that sum; the result is clamped, not trapped.
        let near = try Convolution(weights: [1, -1, 1e-9], columns: 3, normalize: true)
        _ = try near.process(painted(width: 4, height: 4) { x, _ in [UInt8(x * 60), 9, 9, 255] })
        let big = try Convolution(weights: [1_000_000, 1_000_000, -1_000_000], columns: 3, normalize: false)
        #expect(try big.process(painted(width: 4, height: 1) { x, _ in [UInt8(x * 80), 0, 0, 255] }).width == 4)
        let limit = OutputLimit(side: 100, pixels: 5000)
        #expect(throws: CodecError.self) { try MinimumSize(width: 0, height: 90, limit: limit).process(Bitmap(width: 40, height: 10, pixelFormat: .rgba8)) }
        #expect(throws: CodecError.self) { try FitIn(width: 1, height: 100, adaptive: false, full: true, limit: limit).process(Bitmap(width: 50, height: 1, pixelFormat: .rgba8)) }
        #expect(throws: CodecError.self) { try Scale(x: 8, y: 8, limit: limit).process(Bitmap(width: 20, height: 20, pixelFormat: .rgba8)) }
        var border = try Border(top: 60, right: 0, bottom: 0, left: 0)
        border.limit = limit
        #expect(throws: CodecError.self) { try border.process(Bitmap(width: 20, height: 50, pixelFormat: .rgba8)) }
        // An odd image in a one-pixel border sits exactly one pixel in on every side.
        let framed = try Border(top: 1, right: 1, bottom: 1, left: 1, red: 0, green: 0, blue: 255).process(painted(width: 5, height: 5) { _, _ in [255, 0, 0, 255] })
        #expect(framed.width == 7 && framed.pixel(x: 0, y: 0) == [0, 0, 255, 255] && framed.pixel(x: 1, y: 1) == [255, 0, 0, 255])
        #expect(framed.pixel(x: 5, y: 5) == [255, 0, 0, 255] && framed.pixel(x: 6, y: 6) == [0, 0, 255, 255] && framed.pixel(x: 6, y: 3) == [0, 0, 255, 255])
        // A frame without content guides, on a gray bitmap: the stretching area is the content.
        let plain = painted(width: 5, height: 5) { x, y in (y == 0 && x == 2) || (x == 0 && y == 2) ? [0, 0, 0, 255] : [0, 0, 255, 128] }
        let framedGray = try NinePatchFrame(frame: plain, frameIdentifier: "plain").process(Bitmap(width: 6, height: 4, pixelFormat: .gray8))
        #expect(framedGray.pixelFormat == .rgba8 && framedGray.width == 8 && framedGray.height == 6)
    }
}
