import EaselCodecs
import EaselTestSupport
import Testing

/// Smart crop (attention, entropy), unsharp mask, watermark and trim.
@Suite("Smart crop, sharpen, watermark, trim")
struct SmartCropTests {
    /// 0…255 from a position and channel: the same "noise" on every run and machine.
    static func noise(_ x: Int, _ y: Int, _ channel: Int) -> Int {
        var h = UInt64(truncatingIfNeeded: (x &* 73_856_093) ^ (y &* 19_349_663) ^ (channel &* 83_492_791)) &+ 0x9E37_79B9_7F4A_7C15
        h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 31
        return Int(h % 256)
    }

    /// A gently noisy grey background (125…131).
    static func background(width: Int, height: Int) -> Bitmap {
        painted(width: width, height: height) { x, y in
            let level = UInt8(125 + noise(x, y, 3) % 7)
            return [level, level, level, 255]
        }
    }

    /// `image` with a `size × size` patch of random colours at (x, y): full of edges and of
    /// every luma.
    static func withPatch(_ image: Bitmap, x: Int, y: Int, size: Int) -> Bitmap {
        var result = image
        let rowBytes = result.rowBytes
        result.withUnsafeMutableBytes { bytes in
            for py in y..<(y + size) {
                for px in x..<(x + size) {
                    for c in 0..<3 { bytes[py * rowBytes + px * 4 + c] = UInt8(noise(px, py, c)) }
                }
            }
        }
        return result
    }

    static func scene(width: Int, height: Int, patchX: Int, patchY: Int, size: Int) -> Bitmap {
        withPatch(background(width: width, height: height), x: patchX, y: patchY, size: size)
    }

    static func contains(_ r: (x: Int, y: Int, width: Int, height: Int), x: Int, y: Int, width: Int, height: Int) -> Bool {
        r.x <= x && r.x + r.width >= x + width && r.y <= y && r.y + r.height >= y + height
    }

    /// (image width, height, window width, height): wide to square (slides across), tall to
    /// square (slides down), a small window (slides both ways), a small image (no block grid).
    static let layouts = [(300, 200, 200, 200), (200, 300, 200, 200), (400, 300, 150, 100), (120, 90, 90, 90)]
    /// Where the patch goes, as fractions of the free space: left, centre, right, top, bottom
    /// and two corners.
    static let placements = [(0.0, 0.5), (0.5, 0.5), (1.0, 0.5), (0.5, 0.0), (0.5, 1.0), (0.0, 0.0), (1.0, 1.0)]

    @Test(arguments: [SmartCrop.Strategy.attention, .entropy])
    func theWindowKeepsTheDetailedPatchWhereverItIs(strategy: SmartCrop.Strategy) throws {
        for (width, height, windowWidth, windowHeight) in Self.layouts {
            let size = min(width, height) / 5
            let background = Self.background(width: width, height: height)
            for (fx, fy) in Self.placements {
                let x = Int(fx * Double(width - size)), y = Int(fy * Double(height - size))
                let image = Self.withPatch(background, x: x, y: y, size: size)
                let r = try SmartCrop.region(in: image, width: windowWidth, height: windowHeight, strategy: strategy)
                #expect(r.width == windowWidth && r.height == windowHeight)
                #expect(r.x >= 0 && r.y >= 0 && r.x + r.width <= width && r.y + r.height <= height)
                #expect(Self.contains(r, x: x, y: y, width: size, height: size),
                        "\(strategy) \(width)×\(height) → \(windowWidth)×\(windowHeight), patch at \(x),\(y): \(r)")
            }
        }
    }

    @Test func attentionFindsASkinTonedBlob() throws {
        for (width, height, centreX, centreY) in [(300, 200, 40, 100), (300, 200, 150, 100), (300, 200, 260, 100),
                                                  (200, 300, 100, 40), (200, 300, 100, 260)] {
            let radius = 25
            let image = painted(width: width, height: height) { x, y in
                if (x - centreX) * (x - centreX) + (y - centreY) * (y - centreY) <= radius * radius { return [224, 172, 140, 255] }
                let level = UInt8(125 + Self.noise(x, y, 3) % 7)
                return [level, level, level &+ 10, 255]
            }
            let r = try SmartCrop.region(in: image, width: 200, height: 200, strategy: .attention)
            #expect(Self.contains(r, x: centreX - radius, y: centreY - radius, width: 2 * radius + 1, height: 2 * radius + 1),
                    "blob at \(centreX),\(centreY) in \(width)×\(height): \(r)")
        }
    }

    @Test(arguments: [SmartCrop.Strategy.attention, .entropy])
    func aFlatImageIsCroppedInTheCentre(strategy: SmartCrop.Strategy) throws {
        let flat = painted(width: 300, height: 200) { _, _ in [10, 200, 30, 255] }
        #expect(try SmartCrop.region(in: flat, width: 200, height: 200, strategy: strategy) == (50, 0, 200, 200))
        #expect(try SmartCrop.region(in: flat, width: 101, height: 77, strategy: strategy) == (99, 61, 101, 77))
        #expect(try SmartCrop.region(in: flat, width: 300, height: 200, strategy: strategy) == (0, 0, 300, 200))
        // A window larger than the image is clamped to it.
        #expect(try SmartCrop.region(in: flat, width: 500, height: 100, strategy: strategy) == (0, 50, 300, 100))
        let gray = flat.converted(to: .gray8)
        #expect(try SmartCrop.region(in: gray, width: 200, height: 200, strategy: strategy) == (50, 0, 200, 200))
    }

    @Test(arguments: [SmartCrop.Strategy.attention, .entropy])
    func theSameImageGetsTheSameWindow(strategy: SmartCrop.Strategy) throws {
        let noisy = painted(width: 640, height: 480) { x, y in
            [UInt8(Self.noise(x, y, 0)), UInt8(Self.noise(x / 3, y, 1)), UInt8(Self.noise(x, y / 5, 2)), 255]
        }
        let first = try SmartCrop.region(in: noisy, width: 300, height: 300, strategy: strategy)
        for _ in 0..<3 {
            #expect(try SmartCrop.region(in: noisy, width: 300, height: 300, strategy: strategy) == first)
        }
        let copy = painted(width: 640, height: 480) { x, y in
            [UInt8(Self.noise(x, y, 0)), UInt8(Self.noise(x / 3, y, 1)), UInt8(Self.noise(x, y / 5, 2)), 255]
        }
        #expect(try SmartCrop.region(in: copy, width: 300, height: 300, strategy: strategy) == first)
    }

    @Test func grayImagesAndLargeImagesWork() throws {
        // 1000 × 750: analysed in blocks of 8 × 8 pixels.
        let image = Self.scene(width: 1000, height: 750, patchX: 800, patchY: 200, size: 100)
        let gray = image.converted(to: .gray8)
        for strategy in [SmartCrop.Strategy.attention, .entropy] {
            #expect(Self.contains(try SmartCrop.region(in: image, width: 750, height: 750, strategy: strategy),
                                  x: 800, y: 200, width: 100, height: 100))
            #expect(Self.contains(try SmartCrop.region(in: gray, width: 750, height: 750, strategy: strategy),
                                  x: 800, y: 200, width: 100, height: 100))
            #expect(Self.contains(try SmartCrop.region(in: image, width: 300, height: 200, strategy: strategy),
                                  x: 800, y: 200, width: 100, height: 100))
            // A window thinner than one analysis block still lands inside the image.
            let thin = try SmartCrop.region(in: image, width: 3, height: 750, strategy: strategy)
            #expect(thin.x >= 0 && thin.x + 3 <= 1000 && thin.y == 0 && thin.width == 3)
        }
    }

    // MARK: - Sharpen

    @Test func sharpenRaisesEdgeContrastAndLeavesFlatAreasAlone() throws {
        let edge = painted(width: 20, height: 6) { x, _ in x < 10 ? [100, 100, 100, 200] : [150, 150, 150, 200] }
        let sharpened = try Sharpen().process(edge)
        #expect(sharpened.pixel(x: 9, y: 3)[0] < 100 && sharpened.pixel(x: 10, y: 3)[0] > 150)
        #expect(sharpened.pixel(x: 2, y: 3) == [100, 100, 100, 200] && sharpened.pixel(x: 17, y: 3) == [150, 150, 150, 200])
        #expect(sharpened.pixel(x: 9, y: 3)[3] == 200) // alpha kept
        // More amount, more overshoot; a threshold above the step leaves it alone.
        #expect(try Sharpen(amount: 3).process(edge).pixel(x: 9, y: 3)[0] < sharpened.pixel(x: 9, y: 3)[0])
        #expect(try Sharpen(threshold: 60).process(edge).hasSamePixels(as: edge))

        for flat in [painted(width: 31, height: 17) { _, _ in [77, 140, 201, 255] },
                     painted(width: 31, height: 17) { _, _ in [77, 140, 201, 90] }] {
            #expect(try Sharpen(sigma: 2, amount: 3).process(flat).hasSamePixels(as: flat))
        }
        let gray = edge.converted(to: .gray8)
        let grayResult = try Sharpen().process(gray)
        #expect(grayResult.pixelFormat == .gray8 && grayResult.pixel(x: 9, y: 3)[0] < gray.pixel(x: 9, y: 3)[0])
        // Opaque in, known opaque out.
        #expect(try Sharpen().process(Flatten().process(edge)).isKnownOpaque)
    }

    @Test func sharpenIdentifierAndValidation() throws {
        #expect(try Sharpen().identifier == "sharpen(0.5,1.0,0)")
        #expect(try Sharpen(sigma: 1.5, amount: 0.8, threshold: 3).identifier == "sharpen(1.5,0.8,3)")
        #expect(throws: CodecError.self) { try Sharpen.validated(sigma: 0) }
        #expect(throws: CodecError.self) { try Sharpen.validated(sigma: .nan) }
        #expect(throws: CodecError.self) { try Sharpen.validated(amount: -1) }
        #expect(throws: CodecError.self) { try Sharpen.validated(threshold: 256) }
        #expect(try (try? Sharpen.validated(sigma: 1, amount: 2, threshold: 5)) == Sharpen(sigma: 1, amount: 2, threshold: 5))
    }

    // MARK: - Watermark

    static let red = painted(width: 10, height: 10) { _, _ in [255, 0, 0, 255] }
    static let white = painted(width: 100, height: 80) { _, _ in [255, 255, 255, 255] }

    /// The bounding box of pure-red pixels.
    static func redBox(_ bitmap: Bitmap) -> (x: Int, y: Int, width: Int, height: Int)? {
        var minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width where bitmap.pixel(x: x, y: y) == [255, 0, 0, 255] {
                minX = min(minX, x); minY = min(minY, y); maxX = max(maxX, x); maxY = max(maxY, y)
            }
        }
        return maxX < 0 ? nil : (minX, minY, maxX - minX + 1, maxY - minY + 1)
    }

    @Test func everyPositionLandsToThePixel() throws {
        let expected: [(Watermark.Position, Int, Int)] = [
            (.center, 50, 42), (.north, 50, 7), (.south, 50, 63), (.east, 85, 42), (.west, 5, 42),
            (.northEast, 85, 7), (.northWest, 5, 7), (.southEast, 85, 63), (.southWest, 5, 63),
            (.offset(x: 3, y: 4), 3, 4), (.offset(x: -3, y: -4), 87, 66), (.offset(x: 0, y: -1), 0, 69),
        ]
        for (position, x, y) in expected {
            let result = try Watermark(mark: Self.red, markIdentifier: "red", position: position, offsetX: 5, offsetY: 7)
                .process(Self.white)
            let box = Self.redBox(result)
            #expect(box.map { $0 == (x, y, 10, 10) } == true, "\(position): \(String(describing: box))")
            #expect(result.pixel(x: x - 1 < 0 ? x + 10 : x - 1, y: y) == [255, 255, 255, 255])
        }
    }

    /// imgproxy's `watermark_rotate`: the mark turned clockwise about its centre before it is
    /// placed; quarter turns exact, other angles on a canvas that just holds the turned mark.
    @Test func aTurnedMarkIsPlacedAsItsTurnedBox() throws {
        // A 30 × 10 bar, red, with a blue pixel at its top-left corner to see where it went.
        let bar = painted(width: 30, height: 10) { x, y in x == 0 && y == 0 ? [0, 0, 255, 255] : [255, 0, 0, 255] }
        var step = try Watermark(mark: bar, markIdentifier: "bar", position: .northWest)
        let upright = step.identifier
        step.rotation = 90
        let quarter = try step.process(Self.white)
        #expect(Self.redBox(quarter).map { ($0.width, $0.height) == (10, 30) } == true, "\(String(describing: Self.redBox(quarter)))")
        // Clockwise: the top-left corner goes to the top-right.
        #expect(quarter.pixel(x: 9, y: 0) == [0, 0, 255, 255] && quarter.pixel(x: 0, y: 0) == [255, 0, 0, 255])
        #expect(step.identifier != upright && step.identifier.contains("rot90"))
        step.rotation = -270
        #expect(step.identifier.contains("rot90"), "one turn, one identity")
        step.rotation = 180
        #expect(try step.process(Self.white).pixel(x: 29, y: 9) == [0, 0, 255, 255])
        step.rotation = 360
        let whole = try step.process(Self.white), flat = try Watermark(mark: bar, markIdentifier: "bar", position: .northWest).process(Self.white)
        #expect(step.identifier == upright && whole.hasSamePixels(as: flat))
        // 45°: a canvas of (30 + 10)·cos 45° ≈ 28.3 → 29 a side, its corners left clear, the bar's
        // middle solid; placed by that box.
        let turned = try Watermark.turned(bar, degrees: 45)
        #expect(turned.width == 29 && turned.height == 29, "\(turned.width)x\(turned.height)")
        #expect(turned.pixel(x: 0, y: 0)[3] == 0 && turned.pixel(x: 28, y: 0)[3] == 0 && turned.pixel(x: 0, y: 28)[3] == 0)
        #expect(turned.pixel(x: 14, y: 14) == [255, 0, 0, 255])
        // Along the bar (down and right at 45° clockwise) red; across it, clear.
        #expect(turned.pixel(x: 6, y: 6) == [255, 0, 0, 255] && turned.pixel(x: 22, y: 22) == [255, 0, 0, 255])
        #expect(turned.pixel(x: 22, y: 6)[3] == 0 && turned.pixel(x: 6, y: 22)[3] == 0)
        // Edges are blended in premultiplied alpha: no dark fringe, only less coverage.
        for y in 0..<turned.height {
            for x in 0..<turned.width where turned.pixel(x: x, y: y)[3] > 0 && turned.pixel(x: x, y: y)[3] < 255 {
                let p = turned.pixel(x: x, y: y)
                #expect(p[0] > 200 || p[2] > 60, "(\(x), \(y)): \(p)")
            }
        }
        step.rotation = 45
        #expect(Self.redBox(try step.process(Self.white)).map { $0.x >= 0 && $0.x + $0.width <= 29 && $0.y + $0.height <= 29 } == true)
        // A turned mark is bounded as a scaled one is: past four times the image (and 2²² pixels),
        // it could only be clipped.
        let large = Bitmap(width: 2100, height: 2100, pixelFormat: .rgba8)
        var tilted = try Watermark(mark: large, markIdentifier: "large")
        tilted.rotation = 45
        #expect(throws: CodecError.self) { try tilted.process(painted(width: 1, height: 1) { _, _ in [255, 255, 255, 255] }) }
        #expect(throws: CodecError.self) { try Watermark.turned(bar, degrees: 45, maxPixels: 100) }
    }

    @Test func opacityBlendsAndAlphaComposes() throws {
        let half = try Watermark(mark: Self.red, markIdentifier: "red", opacity: 0.5, position: .northWest).process(Self.white)
        let p = half.pixel(x: 4, y: 4)
        #expect(p[0] == 255 && abs(Int(p[1]) - 128) <= 1 && abs(Int(p[2]) - 128) <= 1 && p[3] == 255)
        #expect(half.pixel(x: 10, y: 4) == [255, 255, 255, 255])
        #expect(try Watermark(mark: Self.red, markIdentifier: "red", opacity: 0).process(Self.white).hasSamePixels(as: Self.white))
        // Over a transparent image: the mark's colour with its coverage as alpha.
        let clear = painted(width: 20, height: 20) { _, _ in [0, 0, 255, 0] }
        let onClear = try Watermark(mark: Self.red, markIdentifier: "red", opacity: 0.5, position: .northWest).process(clear)
        #expect(onClear.pixel(x: 0, y: 0) == [255, 0, 0, 128] && onClear.pixel(x: 15, y: 15) == [0, 0, 255, 0])
        // Over half-transparent blue: alpha 0.5 + 0.5·0.5 = 0.75; colour two thirds red.
        let halfBlue = painted(width: 20, height: 20) { _, _ in [0, 0, 255, 128] }
        let mixed = try Watermark(mark: Self.red, markIdentifier: "red", opacity: 0.5, position: .northWest).process(halfBlue)
        let m = mixed.pixel(x: 0, y: 0)
        #expect(abs(Int(m[0]) - 170) <= 1 && m[1] == 0 && abs(Int(m[2]) - 85) <= 1 && abs(Int(m[3]) - 191) <= 1)
        // An opaque image stays known opaque; a gray one becomes RGBA.
        #expect(try Watermark(mark: Self.red, markIdentifier: "red").process(Flatten().process(Self.white)).isKnownOpaque)
        let gray = try Watermark(mark: Self.red, markIdentifier: "red", position: .northWest).process(Self.white.converted(to: .gray8))
        #expect(gray.pixelFormat == .rgba8 && gray.pixel(x: 0, y: 0) == [255, 0, 0, 255] && gray.isKnownOpaque)
    }

    @Test func tilingCoversTheImage() throws {
        let tiled = try Watermark(mark: Self.red, markIdentifier: "red", position: .tiled).process(Self.white)
        for y in 0..<80 { for x in 0..<100 { #expect(tiled.pixel(x: x, y: y) == [255, 0, 0, 255]) } }
        // With gaps: copies every 15 × 12 pixels.
        let gapped = try Watermark(mark: Self.red, markIdentifier: "red", position: .tiled, offsetX: 5, offsetY: 2).process(Self.white)
        #expect(gapped.pixel(x: 0, y: 0) == [255, 0, 0, 255] && gapped.pixel(x: 12, y: 0) == [255, 255, 255, 255])
        #expect(gapped.pixel(x: 15, y: 12) == [255, 0, 0, 255] && gapped.pixel(x: 95, y: 79) == [255, 0, 0, 255])
        #expect(gapped.pixel(x: 5, y: 10) == [255, 255, 255, 255])
    }

    @Test func scaleSetsTheMarkWidthFromTheImageWidth() throws {
        let wide = painted(width: 200, height: 100) { _, _ in [255, 255, 255, 255] }
        let scaled = try Watermark(mark: Self.red, markIdentifier: "red", position: .northWest, scale: 0.2).process(wide)
        #expect((0..<200).filter { scaled.pixel(x: $0, y: 20)[1] < 128 }.count == 40)
        #expect((0..<100).filter { scaled.pixel(x: 20, y: $0)[1] < 128 }.count == 40)
    }

    @Test func marksClipAtTheEdges() throws {
        let big = painted(width: 300, height: 250) { _, _ in [0, 0, 0, 128] }
        for position in [Watermark.Position.center, .northWest, .southEast, .tiled, .offset(x: -5000, y: 5000), .offset(x: 95, y: 75)] {
            let result = try Watermark(mark: big, markIdentifier: "big", position: position).process(Self.white)
            #expect(result.width == 100 && result.height == 80)
        }
        let far = try Watermark(mark: Self.red, markIdentifier: "red", position: .center, offsetX: .max, offsetY: .min).process(Self.white)
        #expect(far.hasSamePixels(as: Self.white))
        let corner = try Watermark(mark: Self.red, markIdentifier: "red", position: .offset(x: 95, y: 75)).process(Self.white)
        #expect(Self.redBox(corner).map { $0 == (95, 75, 5, 5) } == true)
    }

    @Test func watermarkIdentifierAndValidation() throws {
        let mark = try Watermark(mark: Self.red, markIdentifier: "abc", opacity: 0.5, position: .offset(x: -3, y: 4),
                             offsetX: 1, offsetY: 2, scale: 0.25)
        #expect(mark.identifier == "watermark(abc,0.5,offset(-3,4),1,2,0.25)")
        #expect(try Watermark(mark: Self.red, markIdentifier: "abc").identifier == "watermark(abc,1.0,southEast,0,0,0.0)")
        #expect(throws: CodecError.self) { try Watermark(mark: Self.red, markIdentifier: "x", opacity: 1.5) }
        #expect(throws: CodecError.self) { try Watermark(mark: Self.red, markIdentifier: "x", scale: -0.1) }
        #expect(throws: CodecError.self) { try Watermark(mark: Self.red, markIdentifier: "x", opacity: .nan) }
    }

    // MARK: - Trim

    @Test func trimRemovesAUniformBorder() throws {
        let framed = painted(width: 50, height: 40) { x, y in
            x >= 7 && x < 30 && y >= 5 && y < 33 ? [200, 0, 0, 255] : [250, 250, 250 - UInt8((x + y) % 5), 255]
        }
        let trimmed = try Trim().process(framed)
        #expect(trimmed.width == 23 && trimmed.height == 28 && trimmed.pixel(x: 0, y: 0) == [200, 0, 0, 255])
        #expect(try Trim(tolerance: 0).process(framed).width == 50) // the border's noise is not border at 0
        let flat = painted(width: 30, height: 20) { _, _ in [9, 9, 9, 255] }
        #expect(try Trim().process(flat).hasSamePixels(as: flat))
        #expect(try Trim().identifier == "trim(10)")
        #expect(throws: CodecError.self) { try Trim.validated(tolerance: -1) }
    }
}
