import EaselCodecs
import EaselTestSupport
import Testing

/// imgproxy Pro's monochrome, duotone and colorize as steps.
@Suite struct ToneStepTests {
    /// Four pixels: pure red, white, black, and a transparent blue.
    static let swatch = painted(width: 4, height: 1) { x, _ in [[255, 0, 0, 255], [255, 255, 255, 255], [0, 0, 0, 255], [0, 0, 255, 0]][x] }

    @Test func duotoneMapsLumaFromTheDarkColourToTheLightOne() throws {
        let gray = try Duotone(intensity: 1).process(Self.swatch)
        #expect(gray.pixel(x: 0, y: 0) == [76, 76, 76, 255], "red's BT.601 luma")
        let tinted = try Duotone(intensity: 1, dark: RGBColour(red: 0, green: 0, blue: 128), light: RGBColour(red: 255, green: 200, blue: 0))
            .process(Self.swatch)
        #expect(tinted.pixel(x: 1, y: 0) == [255, 200, 0, 255] && tinted.pixel(x: 2, y: 0) == [0, 0, 128, 255])
        #expect(tinted.pixel(x: 3, y: 0)[3] == 0, "alpha kept")
        let half = try Duotone(intensity: 0.5).process(Self.swatch)
        #expect(half.pixel(x: 0, y: 0) == [166, 38, 38, 255], "half the red, half its gray")
        #expect(try Duotone(intensity: 0).process(Self.swatch).pixel(x: 0, y: 0) == [255, 0, 0, 255])
    }

    @Test func monochromeShadesOneColourAndItsDefaultIsGrayscale() throws {
        let gray = try Monochrome(intensity: 1).process(Self.swatch)
        #expect(gray.pixel(x: 0, y: 0) == [76, 76, 76, 255] && gray.pixel(x: 1, y: 0) == [255, 255, 255, 255])
        let sepia = RGBColour(red: 112, green: 66, blue: 20)
        let toned = try Monochrome(intensity: 1, colour: sepia).process(Self.swatch)
        #expect(toned.pixel(x: 2, y: 0) == [0, 0, 0, 255])
        // Red's luma (76) is near sepia's (74): about sepia itself.
        let red = toned.pixel(x: 0, y: 0)
        #expect(abs(Int(red[0]) - 112) <= 4 && abs(Int(red[1]) - 66) <= 3 && abs(Int(red[2]) - 20) <= 2, "\(red)")
        #expect(toned.pixel(x: 1, y: 0)[0] == 255, "brighter than the colour: clamped at 255")
    }

    @Test func colorizeLaysAColourOverTheImageWithOrWithoutItsAlpha() throws {
        let green = RGBColour(red: 0, green: 255, blue: 0)
        let covered = try Colorize(opacity: 0.5, colour: green).process(Self.swatch)
        #expect(covered.pixel(x: 1, y: 0) == [128, 255, 128, 255])
        #expect(covered.pixel(x: 3, y: 0) == [0, 255, 0, 128], "the layer over a transparent pixel")
        let kept = try Colorize(opacity: 0.5, colour: green, keepAlpha: true).process(Self.swatch)
        #expect(kept.pixel(x: 3, y: 0)[3] == 0 && kept.pixel(x: 1, y: 0) == [128, 255, 128, 255])
        #expect(try Colorize(opacity: 1).process(Self.swatch).pixel(x: 1, y: 0) == [0, 0, 0, 255])
    }

    @Test func intensitiesOutsideZeroToOneAreRefused() {
        #expect(throws: CodecError.self) { try Monochrome(intensity: 1.5) }
        #expect(throws: CodecError.self) { try Duotone(intensity: -0.1) }
        #expect(throws: CodecError.self) { try Colorize(opacity: .nan) }
    }
}
