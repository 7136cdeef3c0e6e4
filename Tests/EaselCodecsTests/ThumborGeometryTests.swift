@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// thumbor's geometry as its transformer computes it, with the values real thumbor 7.8.0 answers
/// (its `meta/` JSON for the same URLs): the fill's crop (`auto_crop`: the focus a floor, half to
/// even, no cut when the ratios agree to two decimals), then the resize; trim with a manual crop;
/// `proportion`'s truncation; alpha in a zero-sum convolution of an opaque image; JPEG answers
/// dropping alpha; a translucent background.
@Suite struct ThumborGeometryTests {
    @Test func theFillCropsWhereThumborCrops() {
        // meta/300x200/astronaut.jpg (512×512): crop 0,86,512,427.
        #expect(ThumborFill(width: 300, height: 200).crop(sourceWidth: 512, sourceHeight: 512) == (0, 86, 512, 341))
        // 200x300 of chelsea-cat.jpg (451×300): thumbor's crop starts at x = 125 (floor(225.5) − 100).
        #expect(ThumborFill(width: 200, height: 300).crop(sourceWidth: 451, sourceHeight: 300) == (125, 0, 200, 300))
        // meta/100x100/smart/… of a 451×300 photo centred: 300 wide, round(225 − 150) = 75.
        #expect(ThumborFill(width: 100, height: 100).crop(sourceWidth: 451, sourceHeight: 300) == (75, 0, 300, 300))
        // meta/-300x200/left/top/astronaut.jpg: crop 0,0,512,341.
        #expect(ThumborFill(width: 300, height: 200, gravity: .northWest).crop(sourceWidth: 512, sourceHeight: 512) == (0, 0, 512, 341))
        // The bottom-right alignment: the focus at the far edges, clamped.
        #expect(ThumborFill(width: 300, height: 200, gravity: .southEast).crop(sourceWidth: 512, sourceHeight: 512) == (0, 171, 512, 341))
        // Ratios equal to two decimals: no cut at all (600×400 → 300×200; 301×200 is 1.505 → 1.5 … 1.51).
        #expect(ThumborFill(width: 300, height: 200).crop(sourceWidth: 600, sourceHeight: 400) == (0, 0, 600, 400))
        // A detected focus (smart) replaces the gravity's: meta/300x200/smart/astronaut.jpg, the
        // face's centre at y = 101, puts the crop at the top.
        #expect(ThumborFill(width: 300, height: 200, gravity: .smart(.face)).crop(sourceWidth: 512, sourceHeight: 512, detected: (225, 101))
                == (0, 0, 512, 341))
    }

    @Test func theFillCutsBeforeItResizes() throws {
        // Columns of their own colour: the answer's first column comes from the crop's first.
        let source = paintedOpaque(width: 451, height: 300) { x, _ in [UInt8(x % 256), UInt8(x / 256 * 100), 0] }
        let out = try ThumborFill(width: 200, height: 300).process(source)
        #expect(out.width == 200 && out.height == 300)
        #expect(out.pixel(x: 0, y: 150)[0] == 125 && out.pixel(x: 199, y: 150)[0] == 68, "\(out.pixel(x: 0, y: 150)) \(out.pixel(x: 199, y: 150))")
        // A reduced decode (half size, standing for 451×300) cuts the same region, scaled.
        var reduced = try Resize(width: 226, height: 150, mode: .exact).process(source)
        reduced.imageExtent = Resampler.Extent(width: 225.5, height: 150)
        let planned = try ThumborFill(width: 100, height: 150).process(reduced, planned: (451, 300))
        #expect(planned.width == 100 && planned.height == 150)
    }

    @Test func aTrimWithAManualCropKeepsTheOriginalsPixels() throws {
        // A white border of 10 (top, left) around 80×80 of colour, x in the red channel.
        let source = paintedOpaque(width: 100, height: 100) { x, y in x < 10 || y < 10 ? [255, 255, 255] : [UInt8(x), 0, 90] }
        var trim = try Trim(tolerance: 0, metric: .euclidean)
        trim.thenCrop = [20, 20, 60, 70]
        let out = try trim.process(source)
        // The crop names pixels of the original: x = 20 of the original is red 20.
        #expect(out.width == 40 && out.height == 50 && out.pixel(x: 0, y: 0)[0] == 20)
        // Partly outside the content: only the part inside it.
        trim.thenCrop = [0, 0, 50, 50]
        let inside = try trim.process(source)
        #expect(inside.width == 40 && inside.height == 40 && inside.pixel(x: 0, y: 0)[0] == 10)
        // Nothing inside it: the trim alone (thumbor drops such a crop).
        trim.thenCrop = [0, 0, 5, 5]
        #expect(try trim.process(source).width == 90)
        #expect(trim.identifier.hasSuffix(",crop(0,0,5,5))"))
    }

    @Test func proportionTruncatesAsThumbor() throws {
        let nearest = try Scale(factor: 0.25)
        #expect(nearest.size(width: 451, height: 300) == (113, 75))
        var scale = nearest
        scale.roundsDown = true
        #expect(scale.size(width: 451, height: 300) == (112, 75) && scale.identifier != nearest.identifier)
    }

    @Test func aZeroSumConvolutionOfAnOpaqueImageIsAnEdgeMap() throws {
        let edge = paintedOpaque(width: 20, height: 10) { x, _ in x < 10 ? [40, 40, 40] : [200, 200, 200] }
        let out = try Convolution(weights: [-1, -1, -1, -1, 8, -1, -1, -1, -1], columns: 3, normalize: false).process(edge)
        // Alpha stays 255; flat areas go black, the edge bright.
        #expect(out.pixel(x: 2, y: 5) == [0, 0, 0, 255] && out.pixel(x: 10, y: 5)[0] == 255 && out.pixel(x: 10, y: 5)[3] == 255)
        #expect(!out.hasTransparentPixels)
        // With transparency, alpha is convolved too (thumbor's RGBA).
        let clear = painted(width: 20, height: 10) { x, _ in x < 10 ? [40, 40, 40, 255] : [200, 200, 200, 0] }
        let convolved = try Convolution(weights: [-1, -1, -1, -1, 8, -1, -1, -1, -1], columns: 3, normalize: false).process(clear)
        #expect(convolved.pixel(x: 2, y: 5)[3] == 0)
    }

    @Test func dropAlphaShowsTheStoredColourAndATranslucentBackgroundKeepsAlpha() throws {
        let half = painted(width: 4, height: 1) { x, _ in x < 2 ? [10, 20, 30, 0] : [200, 100, 50, 255] }
        let dropped = try DropAlpha().process(half)
        #expect(dropped.pixel(x: 0, y: 0) == [10, 20, 30, 255] && dropped.pixel(x: 3, y: 0) == [200, 100, 50, 255])
        var flatten = Flatten(red: 0, green: 255, blue: 0)
        flatten.alpha = 128
        let over = try flatten.process(half)
        // A transparent pixel becomes the translucent green; an opaque one stays.
        #expect(over.pixel(x: 0, y: 0) == [0, 255, 0, 128] && over.pixel(x: 3, y: 0) == [200, 100, 50, 255])
        #expect(flatten.identifier == "flatten(0,255,0,128)" && Flatten(red: 0, green: 255, blue: 0).identifier == "flatten(0,255,0)")
    }
}
