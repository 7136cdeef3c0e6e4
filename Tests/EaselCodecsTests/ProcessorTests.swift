import EaselCodecs
import EaselTestSupport
import Testing

@Suite("Processors")
struct ProcessorTests {
    @Test(arguments: [(100, 80, 31, 17), (31, 17, 100, 80), (640, 480, 256, 256), (7, 7, 1, 1)])
    func aFlatColourStaysFlat(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) throws {
        let flat = painted(width: sourceWidth, height: sourceHeight) { _, _ in [200, 100, 50, 255] }
        let resized = try Resize(width: width, height: height, mode: .exact).process(flat)
        #expect(resized.width == width && resized.height == height)
        for y in 0..<height { for x in 0..<width { #expect(resized.pixel(x: x, y: y) == [200, 100, 50, 255]) } }
    }

    @Test func aHalfBlackHalfWhiteEdgeLandsInTheMiddle() throws {
        let edge = painted(width: 200, height: 10) { x, _ in x < 100 ? [0, 0, 0, 255] : [255, 255, 255, 255] }
        let half = try Resize(width: 50, height: 10, mode: .exact).process(edge)
        // Left quarter black, right quarter white, the change between columns 24 and 25.
        for x in 0..<22 { #expect(half.pixel(x: x, y: 5)[0] <= 2, "column \(x)") }
        for x in 28..<50 { #expect(half.pixel(x: x, y: 5)[0] >= 253, "column \(x)") }
        #expect(half.pixel(x: 24, y: 5)[0] < 128 && half.pixel(x: 25, y: 5)[0] > 128)
        // Lanczos overshoots a little beside an edge; values are clamped, never wrapped.
        #expect(half.pixel(x: 23, y: 5)[0] < 60 && half.pixel(x: 26, y: 5)[0] > 195)
    }

    @Test func fitKeepsTheAspectRatioToThePixel() throws {
        let wide = painted(width: 1000, height: 500) { _, _ in [1, 2, 3, 255] }
        let fit = try Resize(width: 256, height: 256, mode: .fit).process(wide)
        #expect(fit.width == 256 && fit.height == 128)
        let tall = painted(width: 300, height: 1000) { _, _ in [1, 2, 3, 255] }
        let fitTall = try Resize(width: 256, height: 256).process(tall)
        #expect(fitTall.width == 77 && fitTall.height == 256) // 300 × 0.256 = 76.8
        let small = painted(width: 40, height: 30) { _, _ in [1, 2, 3, 255] }
        #expect(try Resize(width: 256, height: 256).process(small).width == 40) // no upscaling
        #expect(try Resize(width: 256, height: 256, upscale: true).process(small).width == 256)
    }

    @Test func fillCoversTheBoxAndCropsTheCentre() throws {
        // Left third red, middle third green, right third blue: fill to a square keeps green.
        let wide = painted(width: 900, height: 300) { x, _ in x < 300 ? [255, 0, 0, 255] : x < 600 ? [0, 255, 0, 255] : [0, 0, 255, 255] }
        let square = try Resize(width: 100, height: 100, mode: .fill).process(wide)
        #expect(square.width == 100 && square.height == 100)
        #expect(square.pixel(x: 50, y: 50) == [0, 255, 0, 255])
        #expect(square.pixel(x: 2, y: 50)[1] >= 250 && square.pixel(x: 97, y: 50)[1] >= 250)
    }

    @Test func transparentPixelsDoNotBleedTheirColour() throws {
        // Opaque white beside fully transparent red: after shrinking, no pinkish fringe.
        let image = painted(width: 100, height: 4) { x, _ in x < 50 ? [255, 255, 255, 255] : [255, 0, 0, 0] }
        let shrunk = try Resize(width: 10, height: 4, mode: .exact).process(image)
        for x in 0..<10 {
            let p = shrunk.pixel(x: x, y: 2)
            if p[3] > 0 { #expect(p[1] >= 250 && p[2] >= 250, "column \(x): \(p)") }
        }
    }

    @Test func cropCutsTheRectangleAndRefusesOneOutside() throws {
        let image = painted(width: 10, height: 10) { x, y in [UInt8(x), UInt8(y), 0, 255] }
        let cropped = try Crop(x: 3, y: 4, width: 5, height: 2).process(image)
        #expect(cropped.width == 5 && cropped.height == 2)
        #expect(cropped.pixel(x: 0, y: 0) == [3, 4, 0, 255] && cropped.pixel(x: 4, y: 1) == [7, 5, 0, 255])
        #expect(throws: CodecError.self) { try Crop(x: 8, y: 0, width: 5, height: 2).process(image) }
    }

    @Test func grayscaleAndFlatten() throws {
        let image = painted(width: 2, height: 1) { x, _ in x == 0 ? [255, 0, 0, 255] : [0, 0, 255, 0] }
        let gray = try Grayscale().process(image)
        #expect(gray.pixel(x: 0, y: 0) == [76, 76, 76, 255])
        let flat = try Flatten(red: 10, green: 20, blue: 30).process(image)
        #expect(flat.pixel(x: 0, y: 0) == [255, 0, 0, 255])
        #expect(flat.pixel(x: 1, y: 0) == [10, 20, 30, 255])
    }

    @Test func identifiersAreStableCacheKeys() {
        let chain: [any ImageProcessor] = [Resize(width: 256, height: 256, mode: .fill), Grayscale(), Flatten()]
        #expect(chain.identifier == "resize(256x256,fill)|grayscale|flatten(255,255,255)")
        #expect(Crop(x: 1, y: 2, width: 3, height: 4).identifier == "crop(1,2,3x4)")
    }
}

@Suite("Effects")
struct EffectTests {
    @Test func blurKeepsAFlatColourAndSpreadsAnImpulseSymmetrically() throws {
        let flat = painted(width: 20, height: 20) { _, _ in [90, 90, 90, 255] }
        let blurredFlat = try GaussianBlur(sigma: 2).process(flat)
        #expect(blurredFlat.pixel(x: 0, y: 0) == [90, 90, 90, 255] && blurredFlat.pixel(x: 10, y: 10) == [90, 90, 90, 255])
        let dot = painted(width: 21, height: 21) { x, y in x == 10 && y == 10 ? [255, 255, 255, 255] : [0, 0, 0, 255] }
        let blurred = try GaussianBlur(sigma: 1.5).process(dot)
        let centre = Int(blurred.pixel(x: 10, y: 10)[0])
        #expect(centre > 0 && centre < 255)
        #expect(blurred.pixel(x: 7, y: 10) == blurred.pixel(x: 13, y: 10))
        #expect(blurred.pixel(x: 10, y: 7) == blurred.pixel(x: 10, y: 13))
        #expect(Int(blurred.pixel(x: 11, y: 10)[0]) < centre && blurred.pixel(x: 0, y: 0)[0] == 0)
    }

    @Test func roundedCornersClearOnlyTheCorners() throws {
        let image = painted(width: 40, height: 30) { _, _ in [10, 20, 30, 255] }
        let rounded = try RoundedCorners(radius: 8).process(image)
        #expect(rounded.pixel(x: 0, y: 0)[3] == 0 && rounded.pixel(x: 39, y: 29)[3] == 0)
        #expect(rounded.pixel(x: 20, y: 0)[3] == 255 && rounded.pixel(x: 0, y: 15)[3] == 255)
        #expect(rounded.pixel(x: 20, y: 15) == [10, 20, 30, 255])
        let edge = rounded.pixel(x: 2, y: 2)[3] // on the arc: partly covered
        #expect(edge < 255)
    }

    @Test func circleKeepsTheInscribedDisc() throws {
        let gray = Bitmap(width: 50, height: 50, pixelFormat: .gray8)
        let circle = try RoundedCorners.circle.process(gray)
        #expect(circle.pixelFormat == .rgba8)
        #expect(circle.pixel(x: 25, y: 25)[3] == 255 && circle.pixel(x: 25, y: 1)[3] > 128)
        #expect(circle.pixel(x: 2, y: 2)[3] == 0 && circle.pixel(x: 47, y: 47)[3] == 0)
        #expect(try RoundedCorners.circle.identifier == "circle" && RoundedCorners(radius: 4).identifier == "rounded(4.0)")
    }
}

@Suite("Opaque fast path")
struct OpaqueFastPathTests {
    @Test func opaqueAndGeneralPathsGiveTheSamePixels() throws {
        let general = gradient(width: 97, height: 61) // alpha 255, but not known to be
        #expect(!general.isKnownOpaque)
        let opaque = try ImageDecoder.decode(try ImageEncoder.encode(general, as: .png())) // RGBA PNG: has alpha
        #expect(!opaque.isKnownOpaque)
        let jpeg = try ImageDecoder.decode(try ImageEncoder.encode(general, as: .jpeg(quality: 100)))
        #expect(jpeg.isKnownOpaque)
        var unmarked = jpeg
        unmarked.withUnsafeMutableBytes { _ in } // a write clears the flag
        #expect(!unmarked.isKnownOpaque)
        for resize in [Resize(width: 40, height: 40, mode: .fill), Resize(width: 31, height: 20, mode: .exact)] {
            let fast = try resize.process(jpeg), slow = try resize.process(unmarked)
            #expect(fast.isKnownOpaque && !slow.isKnownOpaque)
            #expect(maxDifference(fast, slow) <= 1)
        }
        #expect(maxDifference(try GaussianBlur(sigma: 1.2).process(jpeg), try GaussianBlur(sigma: 1.2).process(unmarked)) <= 1)
    }
}

@Suite("Extreme sizes")
struct ExtremeSizeTests {
    @Test func anExtremeAspectRatioNeverBuildsAGiantImage() throws {
        let strip = painted(width: 50_000, height: 1) { x, _ in [UInt8(x % 256), 0, 0, 255] }
        let cover = try Resize(width: 256, height: 256, mode: .fill).process(strip)
        #expect(cover.width == 256 && cover.height == 256)
        let fit = try Resize(width: 256, height: 256, mode: .fit).process(strip)
        #expect(fit.width == 256 && fit.height == 1)
    }

    @Test func largeReductionsStayFaithful() throws {
        // A 2000-pixel-wide half-black, half-white image shrunk 40×: the edge stays in the middle.
        let edge = painted(width: 2_000, height: 40) { x, _ in x < 1_000 ? [0, 0, 0, 255] : [255, 255, 255, 255] }
        let small = try Resize(width: 50, height: 1, mode: .exact).process(edge)
        #expect(small.pixel(x: 10, y: 0)[0] <= 2 && small.pixel(x: 40, y: 0)[0] >= 253)
        #expect(small.pixel(x: 24, y: 0)[0] < 128 && small.pixel(x: 25, y: 0)[0] > 128)
        let flat = painted(width: 3_000, height: 2_000) { _, _ in [12, 34, 56, 255] }
        let shrunk = try Resize(width: 30, height: 20, mode: .exact).process(flat)
        #expect(shrunk.pixel(x: 15, y: 10) == [12, 34, 56, 255])
    }
}
