import EaselCodecs
import EaselTestSupport
import Testing

/// Gravity, focal points, `fill-down`, `auto`, enlargement and the geometry processors land to
/// the pixel (the windows here are cut at scale 1, so every output pixel is a source pixel).
@Suite("Gravity and geometry")
struct GravityTests {
    /// Each pixel names its coordinates: red = x mod 256, green = x / 256, blue = y.
    static func coordinates(width: Int, height: Int) -> Bitmap {
        painted(width: width, height: height) { x, y in [UInt8(x & 255), UInt8(x >> 8), UInt8(y & 255), 255] }
    }

    static func origin(of bitmap: Bitmap) -> (x: Int, y: Int) {
        let p = bitmap.pixel(x: 0, y: 0)
        return (Int(p[0]) + Int(p[1]) << 8, Int(p[2]))
    }

    @Test(arguments: [
        (Gravity.west, 0), (.center, 150), (.east, 300), (.northWest, 0), (.southEast, 300),
        (.focalPoint(x: 0.25, y: 0.5), 50), (.focalPoint(x: 0.9, y: 0.5), 300), (.focalPoint(x: 0, y: 0), 0),
        (.focalPixel(x: 211, y: 50), 161),
    ])
    func aWideSourceIsCutWhereTheGravitySays(gravity: Gravity, x: Int) throws {
        let wide = Self.coordinates(width: 400, height: 100)
        let result = try Resize(width: 100, height: 100, mode: .fill, gravity: gravity).process(wide)
        #expect(result.width == 100 && result.height == 100)
        #expect(Self.origin(of: result) == (x, 0))
        #expect(result.pixel(x: 99, y: 99)[2] == 99)
    }

    @Test(arguments: [(Gravity.north, 0), (.center, 150), (.south, 300), (.southWest, 300), (.focalPoint(x: 0.5, y: 0.3), 70),
                      (.focalPixel(x: 0, y: 210), 160)])
    func aTallSourceIsCutWhereTheGravitySays(gravity: Gravity, y: Int) throws {
        let tall = painted(width: 100, height: 400) { x, y in [UInt8(x), UInt8(y & 255), UInt8(y >> 8), 255] }
        let result = try Resize(width: 100, height: 100, mode: .fill, gravity: gravity).process(tall)
        let p = result.pixel(x: 0, y: 0)
        #expect(Int(p[1]) + Int(p[2]) << 8 == y && p[0] == 0)
    }

    @Test func fillFillDownAutoAndEnlargement() throws {
        let small = Self.coordinates(width: 200, height: 100)
        // fill without enlarging: at most the box, at scale 1 (imgproxy's fill).
        let fill = try Resize(width: 300, height: 300, mode: .fill, upscale: false).process(small)
        #expect(fill.width == 200 && fill.height == 100)
        // fill-down: cropped to the box's aspect ratio, at scale 1, centred.
        let down = try Resize(width: 300, height: 300, mode: .fillDown).process(small)
        #expect(down.width == 100 && down.height == 100 && Self.origin(of: down) == (50, 0))
        // fill enlarges by default (as before), fill-down with upscale too.
        #expect(try Resize(width: 300, height: 300, mode: .fill).process(small).width == 300)
        #expect(try Resize(width: 300, height: 300, mode: .fillDown, upscale: true).process(small).height == 300)
        // auto: fill when both are landscape, fit otherwise.
        let landscape = try Resize(width: 100, height: 80, mode: .auto).process(small)
        #expect(landscape.width == 100 && landscape.height == 80)
        let portrait = try Resize(width: 80, height: 100, mode: .auto).process(small)
        #expect(portrait.width == 80 && portrait.height == 40)
        // Identifiers: old ones unchanged, new parameters shown.
        #expect(Resize(width: 9, height: 9, mode: .fill).identifier == "resize(9x9,fill)")
        #expect(Resize(width: 9, height: 9, mode: .fit).identifier == "resize(9x9,fit)")
        #expect(Resize(width: 9, height: 9, mode: .fit, upscale: true).identifier == "resize(9x9,fit,up)")
        #expect(Resize(width: 9, height: 9, mode: .fill, upscale: false, gravity: .smart(.attention)).identifier == "resize(9x9,fill,noup,g=sm)")
        #expect(Resize(width: 9, height: 9, mode: .fit, gravity: .north).identifier == "resize(9x9,fit)", "fit never crops")
    }

    @Test func regionCropPadAndFlip() throws {
        let image = Self.coordinates(width: 200, height: 100)
        let edges = try RegionCrop(.edges(left: 10, top: 20, right: 60, bottom: 90)).process(image)
        #expect(edges.width == 50 && edges.height == 70 && Self.origin(of: edges) == (10, 20))
        // Clamped, never an error.
        let clamped = try RegionCrop(.edges(left: 150, top: 50, right: 900, bottom: 900)).process(image)
        #expect(clamped.width == 50 && clamped.height == 50)
        let fraction = try RegionCrop(.size(width: 0.5, height: 40, gravity: .southEast)).process(image)
        #expect(fraction.width == 100 && fraction.height == 40 && Self.origin(of: fraction) == (100, 60))
        let padded = try Pad(width: 220, height: 140, red: 255, green: 0, blue: 0).process(image)
        #expect(padded.width == 220 && padded.height == 140)
        let inner = try Crop(x: 10, y: 20, width: 5, height: 5).process(padded)
        #expect(padded.pixel(x: 0, y: 0) == [255, 0, 0, 255] && Self.origin(of: inner) == (0, 0))
        let flipped = try Flip(horizontal: true, vertical: true).process(image)
        #expect(Self.origin(of: flipped) == (199, 99))
    }
}
