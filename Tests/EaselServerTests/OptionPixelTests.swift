import EaselCodecs
@testable import EaselServer
import EaselTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Every URL option docs/server.md lists, in each style where it exists, asked of a real server on
/// small synthetic PNGs whose pixels say where everything went: the answer must change as the
/// option says (sizes, colours at known places, sharper or softer edges, the focal point's
/// pixel where it should be). PNG out, so nothing is lost to a lossy encoder.
@Suite struct OptionPixelTests {
    /// What a request answered, decoded.
    struct Answer: Sendable {
        var status: Int
        var contentType: String?
        var body: Data
        var bitmap: Bitmap? { try? ImageDecoder.decode(body) }
    }

    typealias Fetch = @Sendable (String) async throws -> Answer

    /// One option in one style: the path asked, and what must hold of the answer (nil: it
    /// holds; else what went wrong).
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var path: String
        var check: @Sendable (Bitmap, Fetch) async throws -> String?
    }

    // MARK: Fixtures

    static func png(_ width: Int, _ height: Int, _ pixel: (Int, Int) -> [UInt8]) throws -> Data {
        try ImageEncoder.encode(paintedOpaque(width: width, height: height, pixel), as: .png())
    }

    static let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255]
    static let nine: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [255, 0, 255],
                                  [0, 255, 255], [128, 0, 0], [0, 128, 0], [0, 0, 128]]

    /// The fixtures, by file name.
    static func fixtures() throws -> [String: Data] {
        [
            // 60×20: red | green | blue blocks of 20×20.
            "s1.png": try png(60, 20) { x, _ in [red, green, blue][x / 20] },
            // 20×60: red / green / blue, top to bottom.
            "s2.png": try png(20, 60) { _, y in [red, green, blue][y / 20] },
            // 60×60: a 3×3 grid of nine colours.
            "s3.png": try png(60, 60) { x, y in nine[(y / 20) * 3 + x / 20] },
            // 32×32: a black and white checkerboard of 2-pixel squares.
            "s4.png": try png(32, 32) { x, y in (x / 2 + y / 2) % 2 == 0 ? [0, 0, 0] : [255, 255, 255] },
            // 40×20: gray 100 on the left, 150 on the right.
            "s5.png": try png(40, 20) { x, _ in x < 20 ? [100, 100, 100] : [150, 150, 150] },
            // 60×60: a red 20×20 square at (20, 20) in a white border whose every third pixel
            // is (250, 250, 250): 5 levels per channel, 8.7 apart in RGB.
            "s6.png": try png(60, 60) { x, y in
                (20..<40).contains(x) && (20..<40).contains(y) ? red : ((x + y) % 3 == 0 ? [250, 250, 250] : [255, 255, 255])
            },
            // The same with a black top-left pixel: trimming from it finds nothing; from the
            // bottom-right, the border.
            "s6b.png": try png(60, 60) { x, y in
                x == 0 && y == 0 ? [0, 0, 0] : ((20..<40).contains(x) && (20..<40).contains(y) ? red : [255, 255, 255])
            },
            // 20×20: the left half opaque red, the right half transparent.
            "s7.png": try png(20, 20) { x, _ in x < 10 ? red + [255] : [0, 0, 0, 0] },
            // 100×20: gray 128 with red columns at x = 10…14.
            "s8.png": try png(100, 20) { x, _ in (10...14).contains(x) ? red : [128, 128, 128] },
            // 100×20: gray 128 with a red 6×6 square at x = 10…15, y = 7…12 (four corners).
            "s8b.png": try png(100, 20) { x, y in (10...15).contains(x) && (7...12).contains(y) ? red : [128, 128, 128] },
            // 20×20 red; and 60×60 red.
            "s9.png": try png(20, 20) { _, _ in red },
            "s10.png": try png(60, 60) { _, _ in red },
            // 40×20: a reddish half and a bluish half of equal luma-ish contrast (for luma-only
            // sharpening, whose chroma must not move).
            "s11.png": try png(40, 20) { x, _ in x < 20 ? [180, 60, 60] : [60, 60, 180] },
            // 70×60 red: twenty-odd marks do not divide it evenly.
            "s12.png": try png(70, 60) { _, _ in red },
            // 60×40 white with a red block at x 10…29, y 5…24: borders of 10 and 30 across, 5 and 15 down.
            "s13.png": try png(60, 40) { x, y in (10...29).contains(x) && (5...24).contains(y) ? red : [255, 255, 255] },
            // A 7×7 nine-patch: the middle column and row stretch, the content area is the inner
            // 3×3, the frame a blue ring one pixel wide (ColorFilterTests draws the same).
            "ring.png": try png(7, 7) { x, y in
                if (y == 0 && x == 3) || (x == 0 && y == 3) || (y == 6 && (2...4).contains(x)) || (x == 6 && (2...4).contains(y)) { return [0, 0, 0, 255] }
                if x == 0 || y == 0 || x == 6 || y == 6 { return [0, 0, 0, 0] }
                return x == 1 || y == 1 || x == 5 || y == 5 ? [0, 0, 255, 255] : [0, 0, 0, 0]
            },
            // 3000×10 red: wider than the ad-hoc limit (2048).
            "s14.png": try png(3000, 10) { _, _ in red },
            // The watermark: 20×10 opaque blue.
            "mark.png": try solidMark(blue),
            // An animated GIF of four frames (`animation()`).
            "anim.gif": try animation(),
        ]
    }

    /// A 200×100 GIF of four frames: a red band 50 wide on blue, one place further each frame
    /// (no two frames alike, so no encoder merges them).
    static func animation() throws -> Data {
        let frames: [[UInt8]] = (0..<4).map { i in (0..<(200 * 100)).map { p -> UInt8 in p % 200 / 50 == i ? 0 : 1 } }
        return try GIFCodec.encodeAnimation(width: 200, height: 100, frames: frames, palette: [255, 0, 0, 0, 0, 255], delays: [10, 10, 10, 10])
    }

    // MARK: Checks

    static func close(_ p: [UInt8], _ q: [UInt8], _ tolerance: Int = 3) -> Bool {
        zip(p, q).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }

    static func isRed(_ p: [UInt8]) -> Bool { p[0] > 200 && p[1] < 60 && p[2] < 60 && p[3] > 200 }

    static func size(_ width: Int, _ height: Int) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, _ in bitmap.width == width && bitmap.height == height ? nil : "\(bitmap.width)×\(bitmap.height), not \(width)×\(height)" }
    }

    /// Every listed pixel has the colour (RGB, or RGBA when four values are given).
    static func pixels(_ size: (Int, Int)? = nil, _ expected: [(Int, Int, [UInt8])], tolerance: Int = 3)
        -> @Sendable (Bitmap, Fetch) async throws -> String? {
        let expected = expected.map { (x: $0.0, y: $0.1, colour: $0.2) }
        return { bitmap, _ in
            if let size, bitmap.width != size.0 || bitmap.height != size.1 {
                return "\(bitmap.width)×\(bitmap.height), not \(size.0)×\(size.1)"
            }
            for (x, y, colour) in expected {
                guard x < bitmap.width, y < bitmap.height else { return "(\(x), \(y)) is outside \(bitmap.width)×\(bitmap.height)" }
                let pixel = bitmap.pixel(x: x, y: y)
                if !close(Array(pixel.prefix(colour.count)), colour, tolerance) { return "(\(x), \(y)) is \(pixel), not \(colour)" }
            }
            return nil
        }
    }

    /// The alpha of each listed pixel (transparent pixels' colour says nothing).
    static func alphas(_ size: (Int, Int), _ expected: [(Int, Int, UInt8)]) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        let expected = expected.map { (x: $0.0, y: $0.1, alpha: $0.2) }
        return { bitmap, _ in
            guard bitmap.width == size.0, bitmap.height == size.1 else { return "\(bitmap.width)×\(bitmap.height), not \(size.0)×\(size.1)" }
            for (x, y, alpha) in expected where abs(Int(bitmap.pixel(x: x, y: y)[3]) - Int(alpha)) > 3 {
                return "(\(x), \(y)) is \(bitmap.pixel(x: x, y: y)), alpha not \(alpha)"
            }
            return nil
        }
    }

    /// Two checks, both of which must hold.
    static func both(_ a: @escaping @Sendable (Bitmap, Fetch) async throws -> String?,
                     _ b: @escaping @Sendable (Bitmap, Fetch) async throws -> String?) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, fetch in
            if let problem = try await a(bitmap, fetch) { return problem }
            return try await b(bitmap, fetch)
        }
    }

    /// The answer's media type (asked again, the same path).
    static func type(_ expected: String, of path: String) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { _, fetch in
            let answer = try await fetch(path)
            return answer.contentType == expected ? nil : "Content-Type \(answer.contentType ?? "none"), not \(expected)"
        }
    }

    /// An animation of `frames` frames in `type` (asked again, the same path: the check sees
    /// only the first frame's pixels).
    static func animated(_ type: String, frames: Int, of path: String) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { _, fetch in
            let answer = try await fetch(path)
            guard answer.contentType == type else { return "Content-Type \(answer.contentType ?? "none"), not \(type)" }
            let count = try ImageDecoder.info(of: answer.body).frameCount
            return count == frames ? nil : "\(count) frames, not \(frames)"
        }
    }

    /// thumbor's `noise(amount, seed)` on s5 (gray 100 | 150): each pixel's three channels moved
    /// by one offset in −⌊amount/2⌋…amount − 1 − ⌊amount/2⌋ (gray stays gray), most pixels moved,
    /// every offset of that range used, and another seed (`otherSeed`, the same image) making
    /// other pixels.
    static func noisy(amount: Int, otherSeed: String) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, fetch in
            guard bitmap.width == 40, bitmap.height == 20 else { return "\(bitmap.width)×\(bitmap.height), not 40×20" }
            let range = -(amount / 2)...(amount - 1 - amount / 2)
            var moved = 0, offsets = Set<Int>()
            for y in 0..<20 { for x in 0..<40 {
                let p = bitmap.pixel(x: x, y: y), offset = Int(p[0]) - (x < 20 ? 100 : 150)
                guard p[1] == p[0], p[2] == p[0] else { return "(\(x), \(y)) is \(p): the channels moved apart" }
                guard range.contains(offset) else { return "(\(x), \(y)) is \(p), \(offset) from the source: outside \(range)" }
                if offset != 0 { moved += 1 }
                offsets.insert(offset)
            } }
            // Uniform over `amount` offsets: about one pixel in `amount` stays as it was.
            guard moved >= 800 * 3 / 4 else { return "only \(moved) of 800 pixels moved" }
            guard offsets.count == range.count else { return "offsets \(offsets.sorted()), not every one of \(range)" }
            guard let other = try await fetch(otherSeed).bitmap else { return "\(otherSeed) did not answer an image" }
            return other.hasSamePixels(as: bitmap) ? "\(otherSeed) makes the same pixels" : nil
        }
    }

    /// The whole answer is one colour.
    static func all(_ colour: [UInt8], _ width: Int, _ height: Int) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, _ in
            guard bitmap.width == width, bitmap.height == height else { return "\(bitmap.width)×\(bitmap.height), not \(width)×\(height)" }
            for y in 0..<height { for x in 0..<width where !close(Array(bitmap.pixel(x: x, y: y).prefix(3)), colour) {
                return "(\(x), \(y)) is \(bitmap.pixel(x: x, y: y)), not \(colour)"
            } }
            return nil
        }
    }

    /// The standard deviation of the pixels' first channel.
    static func spread(_ bitmap: Bitmap) -> Double {
        var values: [Double] = []
        for y in 0..<bitmap.height { for x in 0..<bitmap.width { values.append(Double(bitmap.pixel(x: x, y: y)[0])) } }
        let mean = values.reduce(0, +) / Double(values.count)
        return (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)).squareRoot()
    }

    /// Blurred: the checkerboard's spread (127.5 unblurred) falls below `limit`, and below the
    /// spread of `other` when given (a lesser blur of the same image).
    static func blurred(below limit: Double, moreThan other: String? = nil) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, fetch in
            let spread = spread(bitmap)
            guard spread < limit else { return "spread \(spread) is not below \(limit)" }
            if let other {
                guard let lesser = try await fetch(other).bitmap else { return "\(other) did not answer an image" }
                let lesserSpread = Self.spread(lesser)
                guard spread < lesserSpread - 5 else { return "spread \(spread) is not below \(other)'s \(lesserSpread)" }
            }
            return nil
        }
    }

    /// Sharpened across s5's edge (gray 100 | 150 at x = 20 of a 40×20 image): an undershoot
    /// left of it and an overshoot right of it, the far ends untouched; larger than `other`'s
    /// when given.
    static func sharpened(moreThan other: String? = nil) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, fetch in
            guard bitmap.width == 40, bitmap.height == 20 else { return "\(bitmap.width)×\(bitmap.height)" }
            let left = Int(bitmap.pixel(x: 19, y: 10)[0]), right = Int(bitmap.pixel(x: 20, y: 10)[0])
            guard left < 97, right > 153 else { return "no over- and undershoot at the edge: \(left) | \(right)" }
            guard close(bitmap.pixel(x: 0, y: 10), [100, 100, 100], 1), close(bitmap.pixel(x: 39, y: 10), [150, 150, 150], 1) else {
                return "the flat ends moved: \(bitmap.pixel(x: 0, y: 10)) | \(bitmap.pixel(x: 39, y: 10))"
            }
            if let other {
                guard let lesser = try await fetch(other).bitmap else { return "\(other) did not answer an image" }
                let lesserJump = Int(lesser.pixel(x: 20, y: 10)[0]) - Int(lesser.pixel(x: 19, y: 10)[0])
                guard right - left > lesserJump + 5 else { return "edge jump \(right - left) is not above \(other)'s \(lesserJump)" }
            }
            return nil
        }
    }

    /// The same pixels as `other` (an option that deliberately changes nothing).
    static func sameAs(_ other: String) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, fetch in
            guard let reference = try await fetch(other).bitmap else { return "\(other) did not answer an image" }
            return bitmap.hasSamePixels(as: reference) ? nil : "pixels differ from \(other)"
        }
    }

    /// Some pixel is red (the salient columns of s8 were kept), and none of `other`'s is.
    static func keepsRed(notIn other: String) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, fetch in
            func reds(_ b: Bitmap) -> Int {
                var count = 0
                for y in 0..<b.height { for x in 0..<b.width where isRed(b.pixel(x: x, y: y)) { count += 1 } }
                return count
            }
            guard reds(bitmap) > 0 else { return "no red pixel kept" }
            guard let centre = try await fetch(other).bitmap else { return "\(other) did not answer an image" }
            return reds(centre) == 0 ? nil : "\(other) keeps red too, so this proves nothing"
        }
    }

    /// A lossy answer at a low quality is further from the lossless answer than at a high one.
    static func lossierThan(_ better: String, reference: String) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, fetch in
            guard let good = try await fetch(better).bitmap, let exact = try await fetch(reference).bitmap else { return "no reference" }
            func error(_ b: Bitmap) -> Double {
                var total = 0
                for y in 0..<b.height { for x in 0..<b.width {
                    let p = b.pixel(x: x, y: y), q = exact.pixel(x: x, y: y)
                    for c in 0..<3 { total += abs(Int(p[c]) - Int(q[c])) }
                } }
                return Double(total) / Double(b.width * b.height * 3)
            }
            let low = error(bitmap), high = error(good)
            return low > high + 1 ? nil : "error \(low) at the low quality is not above \(high)"
        }
    }

    /// The red columns of s8 (x = 10…14) appear at output columns `columns` of a 20×20 answer.
    static func focal(columns: ClosedRange<Int>) -> @Sendable (Bitmap, Fetch) async throws -> String? {
        { bitmap, _ in
            guard bitmap.width == 20, bitmap.height == 20 else { return "\(bitmap.width)×\(bitmap.height)" }
            let reds = (0..<20).filter { isRed(bitmap.pixel(x: $0, y: 10)) }
            return reds == Array(columns) ? nil : "red columns \(reds), not \(columns)"
        }
    }

    /// Every pixel gray (R = G = B), the blocks of s1 at their Rec. 601 lumas.
    static let gray: @Sendable (Bitmap, Fetch) async throws -> String? = { bitmap, _ in
        for y in 0..<bitmap.height { for x in 0..<bitmap.width {
            let p = bitmap.pixel(x: x, y: y)
            if p[0] != p[1] || p[1] != p[2] { return "(\(x), \(y)) is \(p)" }
        } }
        let lumas = [10, 30, 50].map { Int(bitmap.pixel(x: $0, y: 10)[0]) }
        return zip(lumas, [76, 150, 29]).allSatisfy({ abs($0 - $1) <= 2 }) ? nil : "lumas \(lumas), not 76, 150, 29"
    }

    /// Chroma (Cb, Cr) unchanged pixel by pixel while the luma edge was sharpened (s11).
    static let lumaOnly: @Sendable (Bitmap, Fetch) async throws -> String? = { bitmap, fetch in
        guard let plain = try await fetch("/thumbor/unsafe/filters:format(png)/s11.png").bitmap else { return "no reference" }
        func ycc(_ p: [UInt8]) -> (Double, Double, Double) {
            let r = Double(p[0]), g = Double(p[1]), b = Double(p[2])
            return (0.299 * r + 0.587 * g + 0.114 * b, -0.168736 * r - 0.331264 * g + 0.5 * b, 0.5 * r - 0.418688 * g - 0.081312 * b)
        }
        var lumaMoved = false
        for x in 16..<24 {
            let a = ycc(bitmap.pixel(x: x, y: 10)), b = ycc(plain.pixel(x: x, y: 10))
            if abs(a.1 - b.1) > 1.5 || abs(a.2 - b.2) > 1.5 { return "chroma moved at x = \(x): \(a) vs \(b)" }
            if abs(a.0 - b.0) > 3 { lumaMoved = true }
        }
        return lumaMoved ? nil : "the luma was not sharpened"
    }

    /// Without luminance_only the same edge's chroma moves (so `lumaOnly` tells them apart).
    static let chromaMoves: @Sendable (Bitmap, Fetch) async throws -> String? = { bitmap, fetch in
        guard let plain = try await fetch("/thumbor/unsafe/filters:format(png)/s11.png").bitmap else { return "no reference" }
        for x in 16..<24 {
            let p = bitmap.pixel(x: x, y: 10), q = plain.pixel(x: x, y: 10)
            if abs(Int(p[0]) - Int(q[0])) > 3 && abs(Int(p[2]) - Int(q[2])) > 3 { return nil }
        }
        return "no channel moved"
    }

    // MARK: The cases

    static let native: [Case] = [
        Case(description: "native w,h,fit=fit", path: "/images/w=30,h=30,fit=fit,f=png/s1.png", check: size(30, 10)),
        Case(description: "native fit=fill", path: "/images/w=20,h=20,fit=fill,f=png/s1.png", check: all(green, 20, 20)),
        Case(description: "native fit=fill-down", path: "/images/w=40,h=20,fit=fill-down,f=png/s9.png", check: all(red, 20, 10)),
        Case(description: "native fit=auto, same orientation: fill", path: "/images/w=20,h=10,fit=auto,f=png/s1.png",
             check: pixels((20, 10), [(10, 5, green)])),
        Case(description: "native fit=auto, other orientation: fit", path: "/images/w=10,h=20,fit=auto,f=png/s1.png", check: size(10, 3)),
        Case(description: "native fit=exact", path: "/images/w=6,h=20,fit=exact,f=png/s1.png",
             check: pixels((6, 20), [(0, 10, red), (5, 10, blue)], tolerance: 40)),
        Case(description: "native q", path: "/images/w=32,h=32,fit=fit,f=jpeg,q=10/s4.png",
             check: lossierThan("/images/w=32,h=32,fit=fit,f=jpeg,q=95/s4.png", reference: "/images/w=32,h=32,fit=fit,f=png/s4.png")),
        Case(description: "native dpr", path: "/images/w=15,h=5,fit=fit,dpr=2,f=png/s1.png", check: size(30, 10)),
        Case(description: "native g=w", path: "/images/w=20,h=20,fit=fill,g=w,f=png/s1.png", check: all(red, 20, 20)),
        Case(description: "native g=e", path: "/images/w=20,h=20,fit=fill,g=e,f=png/s1.png", check: all(blue, 20, 20)),
        Case(description: "native g=n", path: "/images/w=20,h=20,fit=fill,g=n,f=png/s2.png", check: all(red, 20, 20)),
        Case(description: "native g=s", path: "/images/w=20,h=20,fit=fill,g=s,f=png/s2.png", check: all(blue, 20, 20)),
        Case(description: "native g=c", path: "/images/w=20,h=20,fit=fill,g=c,f=png/s1.png", check: all(green, 20, 20)),
        Case(description: "native g=ne", path: "/images/w=20,h=20,fit=fill,g=ne,f=png/s1.png", check: all(blue, 20, 20)),
        Case(description: "native g=sw", path: "/images/w=20,h=20,fit=fill,g=sw,f=png/s2.png", check: all(blue, 20, 20)),
        Case(description: "native f=png", path: "/images/w=20,h=20,fit=fill,f=png/s1.png",
             check: type("image/png", of: "/images/w=20,h=20,fit=fill,f=png/s1.png")),
        Case(description: "native f=jpeg", path: "/images/w=20,h=20,fit=fill,f=jpeg/s1.png",
             check: type("image/jpeg", of: "/images/w=20,h=20,fit=fill,f=jpeg/s1.png")),
        Case(description: "native g=nw", path: "/images/w=20,h=20,fit=fill,g=nw,f=png/s1.png", check: all(red, 20, 20)),
        Case(description: "native g=se", path: "/images/w=20,h=20,fit=fill,g=se,f=png/s2.png", check: all(blue, 20, 20)),
        Case(description: "native g=fp", path: "/images/w=20,h=20,fit=fill,g=fp:0.12:0.5,f=png/s8.png", check: focal(columns: 8...12)),
        Case(description: "native g=sm", path: "/images/w=20,h=20,fit=fill,g=sm,f=png/s8.png",
             check: keepsRed(notIn: "/images/w=20,h=20,fit=fill,f=png/s8.png")),
        Case(description: "native g=entropy", path: "/images/w=20,h=20,fit=fill,g=entropy,f=png/s8.png",
             check: keepsRed(notIn: "/images/w=20,h=20,fit=fill,f=png/s8.png")),
        Case(description: "native blur", path: "/images/w=32,h=32,fit=fit,blur=2,f=png/s4.png",
             check: blurred(below: 40, moreThan: "/images/w=32,h=32,fit=fit,blur=0.5,f=png/s4.png")),
        Case(description: "native sharpen", path: "/images/w=40,h=20,fit=fit,sharpen=1,f=png/s5.png",
             check: sharpened(moreThan: "/images/w=40,h=20,fit=fit,sharpen=0.3,f=png/s5.png")),
    ]

    static func imgproxy(_ options: String, _ source: String, _ ext: String = "png") -> String {
        "/imgproxy/insecure/\(options)/plain/local:///\(source)@\(ext)"
    }

    static let imgproxyCases: [Case] = [
        // Gravity offsets (60×20 red | green | blue, a 20×20 window): inward from the edge the
        // direction touches, times dpr in the box's pixels; a crop's in the source's.
        Case(description: "imgproxy gravity offset from the west", path: imgproxy("rs:fill:20:20/g:nowe:10:0", "s1.png"),
             check: pixels((20, 20), [(5, 10, red), (15, 10, green)], tolerance: 0)),
        Case(description: "imgproxy gravity offset from the east", path: imgproxy("rs:fill:20:20/g:soea:10:0", "s1.png"),
             check: pixels((20, 20), [(5, 10, green), (15, 10, blue)], tolerance: 0)),
        Case(description: "imgproxy gravity offset from the centre", path: imgproxy("rs:fill:20:20/g:ce:-10:0", "s1.png"),
             check: pixels((20, 20), [(5, 10, red), (15, 10, green)], tolerance: 0)),
        Case(description: "imgproxy gravity offsets times dpr", path: imgproxy("rs:fill:10:10/dpr:2/g:we:5:0", "s1.png"),
             check: pixels((20, 20), [(5, 10, red), (15, 10, green)], tolerance: 0)),
        Case(description: "imgproxy crop with gravity offsets", path: imgproxy("c:20:20:nowe:10:0", "s1.png"),
             check: pixels((20, 20), [(5, 10, red), (15, 10, green)], tolerance: 0)),
        Case(description: "imgproxy extend with gravity offsets", path: imgproxy("rs:fit:40:40/ex:1:nowe:5:5/bg:0000ff", "s9.png"),
             check: pixels((40, 40), [(4, 4, blue), (5, 5, red), (24, 24, red), (25, 25, blue)], tolerance: 0)),
        Case(description: "imgproxy trim", path: imgproxy("trim:10", "s6.png"), check: all(red, 20, 20)),
        Case(description: "imgproxy trim below the noise", path: imgproxy("trim:3", "s6.png"), check: size(60, 60)),
        Case(description: "imgproxy trim's colour", path: imgproxy("trim:10:ff0000", "s13.png"), check: size(60, 40)),
        Case(description: "imgproxy trim equal_hor", path: imgproxy("trim:0::1", "s13.png"),
             check: pixels((40, 20), [(0, 0, red), (19, 19, red), (20, 10, [255, 255, 255])], tolerance: 0)),
        Case(description: "imgproxy trim equal_hor and equal_ver", path: imgproxy("trim:0::1:1", "s13.png"),
             check: pixels((40, 30), [(0, 0, red), (19, 19, red), (20, 10, [255, 255, 255]), (5, 25, [255, 255, 255])], tolerance: 0)),
        Case(description: "imgproxy path-escaped plain source", path: "/imgproxy/insecure/rs:fit:30:30/plain/local:%2F%2F%2Fs1.png@png", check: size(30, 10)),
        Case(description: "imgproxy auto_rotate:1 is the default", path: imgproxy("rs:fit:60:60/ar:1", "s3.png"), check: sameAs(imgproxy("rs:fit:60:60", "s3.png"))),
        // rotate turns clockwise before the resize: 60×20 red | green | blue becomes 20×60, red on top.
        Case(description: "imgproxy rotate:90", path: imgproxy("rot:90", "s1.png"), check: pixels((20, 60), [(10, 5, red), (10, 55, blue)])),
        Case(description: "imgproxy rotate then resize", path: imgproxy("rot:270/rs:fit:10:30", "s1.png"),
             check: pixels((10, 30), [(5, 2, blue), (5, 27, red)], tolerance: 40)),
        // padding: CSS order, in background or transparent.
        Case(description: "imgproxy padding", path: imgproxy("pd:1:2:3:4/bg:0000ff", "s9.png"),
             check: pixels((26, 24), [(3, 10, blue), (4, 1, red), (23, 20, red), (24, 20, blue), (10, 0, blue), (10, 21, blue)], tolerance: 0)),
        Case(description: "imgproxy padding carries top, then right", path: imgproxy("pd:10::5/bg:0000ff", "s9.png"),
             check: pixels((40, 35), [(9, 20, blue), (10, 20, red), (29, 20, red), (30, 20, blue), (20, 29, red), (20, 30, blue)], tolerance: 0)),
        Case(description: "imgproxy zoom without a size scales the source", path: imgproxy("z:0.5", "s14.png"), check: size(1500, 5)),
        Case(description: "imgproxy padding shorthand, transparent", path: imgproxy("pd:5", "s9.png"),
             check: both(alphas((30, 30), [(0, 0, 0), (4, 15, 0), (5, 15, 255), (25, 15, 0)]), pixels(nil, [(15, 15, red)]))),
        Case(description: "imgproxy pixelate", path: imgproxy("pix:20", "s1.png"),
             check: pixels((60, 20), [(0, 0, red), (19, 19, red), (20, 0, green), (59, 19, blue)], tolerance: 0)),
        Case(description: "imgproxy pixelate averages a block", path: imgproxy("pix:30", "s1.png"),
             check: pixels((60, 20), [(0, 0, [170, 85, 0]), (59, 19, [0, 85, 170])], tolerance: 1)),
        Case(description: "imgproxy zoom multiplies the size", path: imgproxy("rs:fit:30:30/z:0.5", "s1.png"), check: size(15, 5)),
        // imgproxy's zoom is per axis and never enlarges without `enlarge`: 2:1 of 20×20 keeps
        // the width and halves the height (the aspect it asks, at the size the source allows).
        Case(description: "imgproxy zoom without a size", path: imgproxy("z:2:1", "s9.png"), check: size(20, 10)),
        Case(description: "imgproxy zoom enlarges with enlarge", path: imgproxy("z:2:1/el:1", "s9.png"), check: size(40, 20)),
        Case(description: "imgproxy min-width enlarges", path: imgproxy("mw:120", "s1.png"), check: size(120, 40)),
        // A minimum size raises the scale; the result is still cut to the box.
        Case(description: "imgproxy min-height within a box", path: imgproxy("rs:fit:30:30/mh:40", "s1.png"), check: size(30, 30)),
        Case(description: "imgproxy dpr with enlarge and no size", path: imgproxy("dpr:2/el:1", "s1.png"), check: size(120, 40)),
        Case(description: "imgproxy preserve_hdr is accepted", path: imgproxy("rs:fit:60:60/ph:1", "s3.png"), check: sameAs(imgproxy("rs:fit:60:60", "s3.png"))),
        Case(description: "imgproxy rs:fill", path: imgproxy("rs:fill:20:20", "s1.png"), check: all(green, 20, 20)),
        Case(description: "imgproxy s + rt", path: imgproxy("s:20:20/rt:fill", "s1.png"), check: all(green, 20, 20)),
        Case(description: "imgproxy w, h", path: imgproxy("rt:fit/w:30/h:30", "s1.png"), check: size(30, 10)),
        Case(description: "imgproxy rs:force", path: imgproxy("rs:force:30:20", "s1.png"),
             check: pixels((30, 20), [(0, 10, red), (29, 10, blue)], tolerance: 40)),
        Case(description: "imgproxy el:1", path: imgproxy("rs:fit:40:40/el:1", "s9.png"), check: all(red, 40, 40)),
        Case(description: "imgproxy no el", path: imgproxy("rs:fit:40:40", "s9.png"), check: all(red, 20, 20)),
        Case(description: "imgproxy ex + bg", path: imgproxy("rs:fit:40:40/ex:1/bg:0000ff", "s9.png"),
             check: pixels((40, 40), [(0, 0, blue), (20, 20, red), (39, 39, blue), (10, 10, red)])),
        Case(description: "imgproxy ex:1:no", path: imgproxy("rs:fit:40:40/ex:1:no/bg:0000ff", "s9.png"),
             check: pixels((40, 40), [(20, 5, red), (20, 35, blue), (5, 5, blue)])),
        Case(description: "imgproxy ex:1:fp", path: imgproxy("rs:fit:40:40/ex:1:fp:0:0/bg:0000ff", "s9.png"),
             check: pixels((40, 40), [(5, 5, red), (19, 19, red), (35, 35, blue), (20, 5, blue)])),
        Case(description: "imgproxy ex:1:fp, not at an edge", path: imgproxy("rs:fit:40:40/ex:1:fp:0.4:0.5/bg:0000ff", "s9.png"),
             check: pixels((40, 40), [(6, 10, red), (5, 10, blue), (25, 10, red), (26, 10, blue), (6, 29, red), (6, 30, blue)])),
        Case(description: "imgproxy rs extend gravity", path: imgproxy("rs:fit:40:40:0:1:soea/bg:0000ff", "s9.png"),
             check: pixels((40, 40), [(35, 35, red), (5, 5, blue)])),
        Case(description: "imgproxy ex with one side", path: imgproxy("rs:fit:40:0:0:1/bg:0000ff", "s9.png"),
             check: pixels((40, 20), [(0, 10, blue), (20, 10, red)])),
        Case(description: "imgproxy g:we", path: imgproxy("rs:fill:20:20/g:we", "s1.png"), check: all(red, 20, 20)),
        Case(description: "imgproxy g:ea", path: imgproxy("rs:fill:20:20/g:ea", "s1.png"), check: all(blue, 20, 20)),
        Case(description: "imgproxy g:no", path: imgproxy("rs:fill:20:20/g:no", "s2.png"), check: all(red, 20, 20)),
        Case(description: "imgproxy g:soea", path: imgproxy("rs:fill:20:20/g:soea", "s2.png"), check: all(blue, 20, 20)),
        Case(description: "imgproxy g:ce", path: imgproxy("rs:fill:20:20/g:ce", "s1.png"), check: all(green, 20, 20)),
        Case(description: "imgproxy g:so", path: imgproxy("rs:fill:20:20/g:so", "s2.png"), check: all(blue, 20, 20)),
        Case(description: "imgproxy g:sowe", path: imgproxy("rs:fill:20:20/g:sowe", "s1.png"), check: all(red, 20, 20)),
        Case(description: "imgproxy g:noea", path: imgproxy("rs:fill:20:20/g:noea", "s2.png"), check: all(red, 20, 20)),
        Case(description: "imgproxy f", path: "/imgproxy/insecure/rs:fill:20:20/f:png/plain/local:///s1.png",
             check: type("image/png", of: "/imgproxy/insecure/rs:fill:20:20/f:png/plain/local:///s1.png")),
        Case(description: "imgproxy g:nowe", path: imgproxy("rs:fill:20:20/g:nowe", "s1.png"), check: all(red, 20, 20)),
        Case(description: "imgproxy g:fp", path: imgproxy("rs:fill:20:20/g:fp:0.12:0.5", "s8.png"), check: focal(columns: 8...12)),
        Case(description: "imgproxy g:sm", path: imgproxy("rs:fill:20:20/g:sm", "s8.png"),
             check: keepsRed(notIn: imgproxy("rs:fill:20:20", "s8.png"))),
        Case(description: "imgproxy dpr", path: imgproxy("rs:fit:15:5/dpr:2", "s1.png"), check: size(30, 10)),
        Case(description: "imgproxy q", path: imgproxy("rs:fit:32:32/q:10", "s4.png", "jpg"),
             check: lossierThan(imgproxy("rs:fit:32:32/q:95", "s4.png", "jpg"), reference: imgproxy("rs:fit:32:32", "s4.png"))),
        Case(description: "imgproxy c:nowe", path: imgproxy("c:20:20:nowe", "s3.png"), check: all(nine[0], 20, 20)),
        Case(description: "imgproxy c:soea", path: imgproxy("c:20:20:soea", "s3.png"), check: all(nine[8], 20, 20)),
        Case(description: "imgproxy c (centre)", path: imgproxy("c:20:20", "s3.png"), check: all(nine[4], 20, 20)),
        Case(description: "imgproxy bl", path: imgproxy("bl:2", "s4.png"), check: blurred(below: 40, moreThan: imgproxy("bl:0.5", "s4.png"))),
        Case(description: "imgproxy sh", path: imgproxy("sh:1", "s5.png"), check: sharpened(moreThan: imgproxy("sh:0.3", "s5.png"))),
        Case(description: "imgproxy wm:soea", path: imgproxy("wm:1:soea:0:0:0", "s10.png"),
             check: pixels((60, 60), [(59, 59, blue), (40, 50, blue), (39, 50, red), (40, 49, red)])),
        Case(description: "imgproxy wm offsets", path: imgproxy("wm:1:nowe:5:3", "s10.png"),
             check: pixels((60, 60), [(5, 3, blue), (4, 3, red), (5, 2, red), (24, 12, blue), (25, 12, red)])),
        Case(description: "imgproxy wm:re", path: imgproxy("wm:1:re", "s10.png"),
             check: pixels((60, 60), [(0, 0, blue), (20, 0, blue), (0, 10, blue), (59, 59, blue)])),
        Case(description: "imgproxy wm scale fits both sides", path: imgproxy("wm:1:nowe:0:0:0.5", "s10.png"),
             check: pixels((60, 60), [(29, 0, blue), (30, 0, red), (0, 14, blue), (0, 15, red)])),
        Case(description: "imgproxy wm scale fits a wide image's height too", path: imgproxy("wm:1:nowe:0:0:0.5", "s1.png"),
             check: pixels((60, 20), [(19, 0, blue), (20, 0, green), (0, 9, blue), (0, 10, red)])),
        Case(description: "imgproxy wm opacity", path: imgproxy("wm:0.5:ce", "s10.png"),
             check: pixels((60, 60), [(30, 30, [128, 0, 128]), (5, 5, red)])),
        Case(description: "imgproxy bg", path: imgproxy("bg:00ff00", "s7.png"), check: pixels((20, 20), [(15, 10, green + [255]), (5, 10, red)])),
        Case(description: "imgproxy sm is a no-op", path: imgproxy("sm:1", "s3.png"), check: sameAs(imgproxy("c:60:60", "s3.png"))),
        Case(description: "imgproxy scp is a no-op", path: imgproxy("scp:1", "s3.png"), check: sameAs(imgproxy("c:60:60", "s3.png"))),
        Case(description: "imgproxy cb is a no-op", path: imgproxy("cb:xyz", "s3.png"), check: sameAs(imgproxy("c:60:60", "s3.png"))),
        Case(description: "imgproxy pr", path: imgproxy("pr:west", "s1.png"), check: all(red, 20, 20)),
    ]

    static func thumbor(_ options: String, _ source: String) -> String { "/thumbor/unsafe/\(options)/\(source)" }

    static let thumborCases: [Case] = [
        Case(description: "thumbor trim (Euclidean tolerance)", path: thumbor("trim:10/filters:format(png)", "s6.png"), check: all(red, 20, 20)),
        Case(description: "thumbor trim below the noise's distance", path: thumbor("trim:5/filters:format(png)", "s6.png"), check: size(60, 60)),
        Case(description: "thumbor trim from the top-left", path: thumbor("trim/filters:format(png)", "s6b.png"), check: size(60, 60)),
        Case(description: "thumbor trim:bottom-right", path: thumbor("trim:bottom-right/filters:format(png)", "s6b.png"),
             check: pixels((40, 40), [(0, 0, [0, 0, 0]), (39, 39, red), (19, 19, [255, 255, 255])])),
        Case(description: "thumbor manual crop", path: thumbor("20x0:40x20/filters:format(png)", "s3.png"), check: all(nine[1], 20, 20)),
        Case(description: "thumbor fit-in", path: thumbor("fit-in/30x30/filters:format(png)", "s1.png"), check: size(30, 10)),
        Case(description: "thumbor fit-in does not enlarge", path: thumbor("fit-in/40x40/filters:format(png)", "s9.png"), check: size(20, 20)),
        Case(description: "thumbor WxH crops", path: thumbor("20x20/filters:format(png)", "s1.png"), check: all(green, 20, 20)),
        Case(description: "thumbor WxH enlarges", path: thumbor("40x40/filters:format(png)", "s9.png"), check: all(red, 40, 40)),
        Case(description: "thumbor -W flips", path: thumbor("-60x20/filters:format(png)", "s1.png"),
             check: pixels((60, 20), [(0, 10, blue), (59, 10, red)])),
        Case(description: "thumbor -H flips", path: thumbor("20x-60/filters:format(png)", "s2.png"),
             check: pixels((20, 60), [(10, 0, blue), (10, 59, red)])),
        Case(description: "thumbor left", path: thumbor("20x20/left/filters:format(png)", "s1.png"), check: all(red, 20, 20)),
        Case(description: "thumbor right", path: thumbor("20x20/right/filters:format(png)", "s1.png"), check: all(blue, 20, 20)),
        Case(description: "thumbor center/middle", path: thumbor("20x20/center/middle/filters:format(png)", "s1.png"), check: all(green, 20, 20)),
        Case(description: "thumbor top", path: thumbor("20x20/top/filters:format(png)", "s2.png"), check: all(red, 20, 20)),
        Case(description: "thumbor bottom", path: thumbor("20x20/bottom/filters:format(png)", "s2.png"), check: all(blue, 20, 20)),
        // thumbor's smart: no face, so its corner detector; the square's corners are the focus.
        Case(description: "thumbor smart centres the corners found", path: thumbor("20x20/smart/filters:format(png)", "s8b.png"),
             check: keepsRed(notIn: thumbor("20x20/filters:format(png)", "s8b.png"))),
        // Stripes have no corners: nothing found, the centred crop (as thumbor answers).
        Case(description: "thumbor smart with nothing found is centred", path: thumbor("20x20/smart/filters:format(png)", "s8.png"),
             check: sameAs(thumbor("20x20/filters:format(png)", "s8.png"))),
        Case(description: "thumbor quality", path: thumbor("32x32/filters:quality(10):format(jpeg)", "s4.png"),
             check: lossierThan(thumbor("32x32/filters:quality(95):format(jpeg)", "s4.png"), reference: thumbor("32x32/filters:format(png)", "s4.png"))),
        Case(description: "thumbor blur", path: thumbor("filters:blur(6):format(png)", "s4.png"), check: blurred(below: 40)),
        Case(description: "thumbor blur's sigma", path: thumbor("filters:blur(6,3):format(png)", "s4.png"),
             check: blurred(below: 40, moreThan: thumbor("filters:blur(6,0.7):format(png)", "s4.png"))),
        Case(description: "thumbor blur's sigma 0 is the radius", path: thumbor("filters:blur(3,0):format(png)", "s4.png"),
             check: sameAs(thumbor("filters:blur(3):format(png)", "s4.png"))),
        Case(description: "thumbor blur's radius cuts the kernel", path: thumbor("filters:blur(6,3):format(png)", "s4.png"),
             check: blurred(below: 40, moreThan: thumbor("filters:blur(1,3):format(png)", "s4.png"))),
        Case(description: "thumbor sharpen's amount", path: thumbor("filters:sharpen(3,0,false):format(png)", "s5.png"),
             check: sharpened(moreThan: thumbor("filters:sharpen(0.5,0,false):format(png)", "s5.png"))),
        Case(description: "thumbor sharpen luminance_only", path: thumbor("filters:sharpen(3,0,true):format(png)", "s11.png"), check: lumaOnly),
        Case(description: "thumbor sharpen all channels", path: thumbor("filters:sharpen(3,0,false):format(png)", "s11.png"), check: chromaMoves),
        Case(description: "thumbor grayscale", path: thumbor("filters:grayscale():format(png)", "s1.png"), check: gray),
        Case(description: "thumbor round_corner", path: thumbor("60x60/filters:round_corner(10,0,0,255):format(png)", "s10.png"),
             check: pixels((60, 60), [(0, 0, blue + [255]), (59, 59, blue + [255]), (30, 30, red), (0, 30, red)])),
        Case(description: "thumbor round_corner a|b", path: thumbor("60x60/filters:round_corner(20|5,0,0,255):format(png)", "s10.png"),
             check: pixels((60, 60), [(0, 4, red), (5, 0, blue), (30, 0, red)], tolerance: 60)),
        Case(description: "thumbor round_corner circular", path: thumbor("60x60/filters:round_corner(20,0,0,255):format(png)", "s10.png"),
             check: pixels((60, 60), [(0, 4, blue)], tolerance: 60)),
        Case(description: "thumbor round_corner transparent", path: thumbor("60x60/filters:round_corner(10,0,0,255,1):format(png)", "s10.png"),
             check: both(alphas((60, 60), [(0, 0, 0), (59, 0, 0), (30, 30, 255)]), pixels(nil, [(30, 30, red)]))),
        Case(description: "thumbor watermark", path: thumbor("filters:watermark(mark.png,10,20,50):format(png)", "s10.png"),
             check: pixels((60, 60), [(10, 20, [128, 0, 128]), (9, 20, red), (29, 29, [128, 0, 128]), (30, 29, red)])),
        Case(description: "thumbor watermark from the far edges", path: thumbor("filters:watermark(mark.png,-0,-0,0):format(png)", "s10.png"),
             check: pixels((60, 60), [(59, 59, blue), (40, 50, blue), (39, 50, red)])),
        // 70 wide: three 20-wide copies with the 10 pixels left shared out (x 0, 25, 50); 60
        // high: six rows, no gap.
        Case(description: "thumbor watermark repeat", path: thumbor("filters:watermark(mark.png,repeat,repeat,0):format(png)", "s12.png"),
             check: pixels((70, 60), [(0, 0, blue), (19, 0, blue), (20, 0, red), (24, 0, red), (25, 0, blue), (49, 59, red),
                                      (50, 59, blue), (69, 30, blue)])),
        Case(description: "thumbor watermark w_ratio", path: thumbor("filters:watermark(mark.png,0,0,0,50):format(png)", "s10.png"),
             check: pixels((60, 60), [(29, 0, blue), (30, 0, red), (0, 14, blue), (0, 15, red)])),
        Case(description: "thumbor watermark h_ratio", path: thumbor("filters:watermark(mark.png,0,0,0,none,10):format(png)", "s10.png"),
             check: pixels((60, 60), [(11, 0, blue), (12, 0, red), (0, 5, blue), (0, 6, red)])),
        Case(description: "thumbor watermark ratio 0 is no limit", path: thumbor("filters:watermark(mark.png,0,0,0,0,0):format(png)", "s10.png"),
             check: sameAs(thumbor("filters:watermark(mark.png,0,0,0):format(png)", "s10.png"))),
        Case(description: "thumbor focal", path: thumbor("20x20/filters:focal(10x0:14x20):format(png)", "s8.png"), check: focal(columns: 8...12)),
        Case(description: "thumbor fill", path: thumbor("fit-in/40x40/filters:fill(blue):format(png)", "s9.png"),
             check: pixels((40, 40), [(0, 0, blue + [255]), (20, 20, red)])),
        Case(description: "thumbor fill(transparent)", path: thumbor("fit-in/40x40/filters:fill(transparent):format(png)", "s9.png"),
             check: both(alphas((40, 40), [(0, 0, 0), (20, 20, 255)]), pixels(nil, [(20, 20, red)]))),
        Case(description: "thumbor fill keeps the image's transparency", path: thumbor("fit-in/40x40/filters:fill(blue):format(png)", "s7.png"),
             check: both(alphas((40, 40), [(0, 0, 255), (15, 20, 255), (25, 20, 0)]), pixels(nil, [(0, 0, blue), (15, 20, red)]))),
        Case(description: "thumbor fill_transparent", path: thumbor("fit-in/40x40/filters:fill(blue,true):format(png)", "s7.png"),
             check: pixels((40, 40), [(0, 0, blue + [255]), (15, 20, red + [255]), (25, 20, blue + [255])])),
        Case(description: "thumbor background_color", path: thumbor("filters:background_color(00ff00):format(png)", "s7.png"),
             check: pixels((20, 20), [(15, 10, green + [255]), (5, 10, red)])),
        Case(description: "thumbor background_color after fill keeps the padding",
             path: thumbor("fit-in/40x40/filters:fill(blue):background_color(00ff00):format(png)", "s7.png"),
             check: pixels((40, 40), [(0, 0, blue + [255]), (25, 20, green + [255])])),
        Case(description: "thumbor upscale", path: thumbor("fit-in/40x40/filters:upscale():format(png)", "s9.png"), check: all(red, 40, 40)),
        Case(description: "thumbor no_upscale", path: thumbor("40x40/filters:no_upscale():format(png)", "s9.png"), check: size(20, 20)),
        Case(description: "thumbor strip_exif is a no-op", path: thumbor("filters:strip_exif():format(png)", "s3.png"),
             check: sameAs(thumbor("filters:format(png)", "s3.png"))),
        Case(description: "thumbor strip_icc is a no-op", path: thumbor("filters:strip_icc():format(png)", "s3.png"),
             check: sameAs(thumbor("filters:format(png)", "s3.png"))),
        // Colour filters on gray 100 | 150 (their arithmetic: ColorFilterTests).
        Case(description: "thumbor brightness", path: thumbor("filters:brightness(10):format(png)", "s5.png"),
             check: pixels((40, 20), [(5, 10, [125, 125, 125]), (30, 10, [175, 175, 175])], tolerance: 0)),
        Case(description: "thumbor contrast", path: thumbor("filters:contrast(10):format(png)", "s5.png"),
             check: pixels((40, 20), [(5, 10, [95, 95, 95]), (30, 10, [154, 154, 154])], tolerance: 0)),
        Case(description: "thumbor rgb", path: thumbor("filters:rgb(10,-10,20):format(png)", "s5.png"),
             check: pixels((40, 20), [(5, 10, [125, 75, 151]), (30, 10, [175, 125, 201])], tolerance: 0)),
        Case(description: "thumbor saturation(0) is gray", path: thumbor("filters:saturation(0):format(png)", "s11.png"),
             check: pixels((40, 20), [(5, 10, [110, 110, 110]), (30, 10, [82, 82, 82])], tolerance: 0)),
        Case(description: "thumbor colorize", path: thumbor("filters:colorize(100,100,100,00ff00):format(png)", "s1.png"), check: all(green, 60, 20)),
        Case(description: "thumbor equalize", path: thumbor("filters:equalize():format(png)", "s5.png"),
             check: pixels((40, 20), [(5, 10, [0, 0, 0]), (30, 10, [255, 255, 255])], tolerance: 0)),
        Case(description: "thumbor curve", path: thumbor("filters:curve([(0,0),(255,255)],[(0,255),(255,0)],[(0,0),(255,255)],[(0,0),(255,255)]):format(png)", "s5.png"),
             check: pixels((40, 20), [(5, 10, [155, 100, 100]), (30, 10, [105, 150, 150])], tolerance: 0)),
        Case(description: "thumbor noise", path: thumbor("filters:noise(10,1):format(png)", "s5.png"),
             check: noisy(amount: 10, otherSeed: thumbor("filters:noise(10,2):format(png)", "s5.png"))),
        Case(description: "thumbor convolution (identity)", path: thumbor("filters:convolution(0;0;0;0;1;0;0;0;0,3,false):format(png)", "s3.png"),
             check: sameAs(thumbor("filters:format(png)", "s3.png"))),
        Case(description: "thumbor convolution (box)", path: thumbor("filters:convolution(1;1;1;1;1;1;1;1;1,3,true):format(png)", "s4.png"),
             check: blurred(below: 40)),
        Case(description: "thumbor rotate(90) turns left", path: thumbor("filters:rotate(90):format(png)", "s1.png"),
             check: pixels((20, 60), [(10, 5, blue), (10, 55, red)])),
        Case(description: "thumbor rotate(180)", path: thumbor("filters:rotate(180):format(png)", "s1.png"),
             check: pixels((60, 20), [(5, 10, blue), (55, 10, red)])),
        Case(description: "thumbor proportion", path: thumbor("filters:proportion(0.5):format(png)", "s3.png"), check: size(30, 30)),
        Case(description: "thumbor stretch", path: thumbor("40x10/filters:stretch():format(png)", "s3.png"),
             check: pixels((40, 10), [(2, 1, red), (2, 8, [128, 0, 0])], tolerance: 40)),
        Case(description: "thumbor adaptive-fit-in turns the box", path: thumbor("adaptive-fit-in/30x10/filters:format(png)", "s2.png"), check: size(10, 30)),
        Case(description: "thumbor full-fit-in covers the box", path: thumbor("full-fit-in/30x30/filters:format(png)", "s1.png"), check: size(90, 30)),
        Case(description: "thumbor adaptive-full-fit-in", path: thumbor("adaptive-full-fit-in/10x30/filters:format(png)", "s1.png"), check: size(30, 10)),
        // A portrait 20×60 in a landscape 40×20 box: the box turns to 20×40, and so does the fill.
        Case(description: "thumbor adaptive-fit-in with fill pads the turned box", path: thumbor("adaptive-fit-in/40x20/filters:fill(blue):format(png)", "s2.png"),
             check: pixels((20, 40), [(0, 20, blue), (10, 20, green)], tolerance: 10)),
        // 60×20 red | green | blue fitted in 40×40: padded with its mean colour, a third of each.
        Case(description: "thumbor fill(auto)", path: thumbor("fit-in/40x40/filters:fill(auto):format(png)", "s1.png"),
             check: pixels((40, 40), [(0, 0, [85, 85, 85, 255]), (39, 39, [85, 85, 85, 255]), (2, 20, red)], tolerance: 6)),
        // thumbor's focal() names points; without one it changes nothing (no detection).
        Case(description: "thumbor focal() without a region changes nothing", path: thumbor("20x20/filters:focal():format(png)", "s8b.png"),
             check: sameAs(thumbor("20x20/filters:format(png)", "s8b.png"))),
        Case(description: "thumbor extract_focal() from a thumbor URL's crop",
             path: thumbor("20x20/filters:extract_focal():format(png)", "localhost:8888/unsafe/10x0:14x20/s8.png"), check: focal(columns: 8...12)),
        Case(description: "thumbor format(heic)", path: thumbor("filters:format(heic)", "s1.png"),
             check: both(type("image/heic", of: thumbor("filters:format(heic)", "s1.png")), pixels((60, 20), [(10, 10, red), (50, 10, blue)], tolerance: 30))),
        Case(description: "thumbor format(heif) is HEIC", path: thumbor("filters:format(heif)", "s1.png"),
             check: type("image/heic", of: thumbor("filters:format(heif)", "s1.png"))),
        Case(description: "thumbor frame (nine-patch)", path: thumbor("filters:frame(ring.png):format(png)", "s9.png"),
             check: pixels((22, 22), [(0, 0, blue), (0, 11, blue), (21, 21, blue), (1, 1, red), (20, 20, red)], tolerance: 0)),
        // gifv: an animated GIF becomes an animated WebP, every frame kept (without it, a client
        // sending no Accept gets the first frame as JPEG); a still source is a still WebP.
        Case(description: "thumbor gifv() answers an animation as animated WebP", path: thumbor("filters:gifv()", "anim.gif"),
             check: animated("image/webp", frames: 4, of: thumbor("filters:gifv()", "anim.gif"))),
        Case(description: "thumbor gifv(mp4) answers animated WebP too", path: thumbor("filters:gifv(mp4)", "anim.gif"),
             check: animated("image/webp", frames: 4, of: thumbor("filters:gifv(mp4)", "anim.gif"))),
        Case(description: "thumbor gifv(webm) answers animated WebP too", path: thumbor("filters:gifv(webm)", "anim.gif"),
             check: animated("image/webp", frames: 4, of: thumbor("filters:gifv(webm)", "anim.gif"))),
        Case(description: "without gifv() the animation stays an animated GIF", path: thumbor("filters:quality(90)", "anim.gif"),
             check: animated("image/gif", frames: 4, of: thumbor("filters:quality(90)", "anim.gif"))),
        Case(description: "thumbor gifv() of a still keeps its format", path: thumbor("filters:gifv()", "s1.png"),
             check: animated("image/png", frames: 1, of: thumbor("filters:gifv()", "s1.png"))),
        Case(description: "thumbor extract_focal() of a plain source does nothing", path: thumbor("20x20/filters:extract_focal():format(png)", "s8.png"),
             check: sameAs(thumbor("20x20/filters:format(png)", "s8.png"))),
    ]

    static let everyCase = native + imgproxyCases + thumborCases

    @Test func everyOptionChangesThePixelsAsItSays() async throws {
        let mark = try TemporaryDirectory()
        try solidMark(Self.blue).write(to: mark.child("mark.png"))
        let server = try TestServer {
            $0.allowUnsignedAdHoc = true
            $0.watermark = mark.child("mark.png").path
            $0.imgproxyPresets = ["west": "rs:fill:20:20/g:we"]
        }
        for (name, data) in try Self.fixtures() { try data.write(to: server.origin.child(name)) }
        try await server.test { client in
            let fetch: Fetch = { path in
                let response = try await get(client, path)
                return Answer(status: Int(response.status.code), contentType: response.headers[.contentType], body: Data(buffer: response.body))
            }
            for test in Self.everyCase {
                let answer = try await fetch(test.path)
                guard answer.status == 200, let bitmap = answer.bitmap else {
                    Issue.record("\(test): \(test.path) answered \(answer.status) \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                    continue
                }
                if let problem = try await test.check(bitmap, fetch) { Issue.record("\(test): \(test.path): \(problem)") }
            }
        }
    }

    /// Arguments that would be accepted and ignored are refused with a 400 whose message names
    /// what is wrong (a watermark is configured, so the watermark cases fail on their argument).
    @Test(arguments: [
        ("/imgproxy/insecure/q:80:90/plain/local:///s1.png@png", "at most 1 argument"),
        ("/imgproxy/insecure/bl:-1/plain/local:///s1.png@png", "sigma is 0 or more"),
        ("/imgproxy/insecure/bg:1:2:3:4/plain/local:///s1.png@png", "background"),
        ("/imgproxy/insecure/bg:255:0/plain/local:///s1.png@png", "background"),
        ("/imgproxy/insecure/wm:2/plain/local:///s1.png@png", "opacity is 0–1"),
        ("/imgproxy/insecure/wm:1:ce:0:0:0:9/plain/local:///s1.png@png", "at most 5 arguments"),
        ("/imgproxy/insecure/wm:1:re:-5:0/plain/local:///s1.png@png", "gaps"),
        ("/imgproxy/insecure/g:fp:0.5:0.5:1/plain/local:///s1.png@png", "at most 3 arguments"),
        ("/imgproxy/insecure/ex:1:sm/plain/local:///s1.png@png", "no smart gravity"),
        ("/imgproxy/insecure/ex:1::5:5/plain/local:///s1.png@png", "offsets without a gravity"),
        ("/imgproxy/insecure/c:20:20::5:5/plain/local:///s1.png@png", "offsets without a gravity"),
        ("/imgproxy/insecure/rs:fit:40:40:0:1:ce:0:0:9/plain/local:///s1.png@png", "at most 8 arguments"),
        ("/thumbor/unsafe/filters:sharpen(2)/s1.png", "sharpen takes"),
        ("/thumbor/unsafe/filters:sharpen(2,1,maybe)/s1.png", "luminance_only"),
        ("/thumbor/unsafe/filters:round_corner(10)/s1.png", "round_corner takes"),
        ("/thumbor/unsafe/filters:round_corner(10|0,0,0,0)/s1.png", "round_corner radius"),
        ("/thumbor/unsafe/filters:quality(80.5)/s1.png", "whole number"),
        ("/thumbor/unsafe/filters:watermark(mark.png,repeat,10,0)/s1.png", "repeat on one axis"),
        ("/thumbor/unsafe/filters:blur(2.5)/s1.png", "blur takes"),
        ("/thumbor/unsafe/filters:blur(2):blur(3)/s1.png", "given twice"),
        ("/thumbor/unsafe/filters:format(png,x)/s1.png", "format takes one"),
        ("/thumbor/unsafe/filters:grayscale(1)/s1.png", "takes no arguments"),
        ("/thumbor/unsafe/filters:upscale(1)/s1.png", "takes no arguments"),
        ("/thumbor/unsafe/filters:strip_exif(1)/s1.png", "takes no arguments"),
        ("/thumbor/unsafe/filters:focal(0x0:1x1,2)/s1.png", "focal takes"),
        ("/thumbor/unsafe/filters:rotate(45)/s1.png", "multiple of 90"),
        ("/imgproxy/insecure/rot:45/plain/local:///s1.png@png", "multiples of 90"),
        ("/imgproxy/insecure/g:sm:1:1/plain/local:///s1.png@png", "smart gravity takes no offsets"),
        ("/imgproxy/insecure/g:no:x:1/plain/local:///s1.png@png", "offsets are numbers"),
        ("/imgproxy/insecure/trim:300/plain/local:///s1.png@png", "threshold is 0–255"),
        ("/imgproxy/insecure/trim:10:nocolour/plain/local:///s1.png@png", "bad colour"),
        ("/imgproxy/insecure/pd:1:2:3:4:5/plain/local:///s1.png@png", "at most 4 arguments"),
        ("/imgproxy/insecure/pd:9000/plain/local:///s1.png@png", "padding is 0–8192"),
        ("/imgproxy/insecure/z:0/plain/local:///s1.png@png", "zoom is above 0"),
        ("/imgproxy/insecure/z:9/plain/local:///s1.png@png", "at most 8"),
        ("/imgproxy/insecure/msr:0/plain/local:///s1.png@png", "max_src_resolution"),
        ("/imgproxy/insecure/exp:soon/plain/local:///s1.png@png", "UNIX time"),
        ("/imgproxy/insecure/fn:!!!:1/plain/local:///s1.png@png", "not base64url"),
        ("/thumbor/unsafe/filters:brightness(200)/s1.png", "−100–100"),
        ("/thumbor/unsafe/filters:rgb(1,2)/s1.png", "rgb takes three"),
        ("/thumbor/unsafe/filters:convolution(1;1,2)/s1.png", "odd sides"),
        ("/thumbor/unsafe/filters:curve([(0,0)],[(0,0),(255,255)],[(0,0),(255,255)],[(0,0),(255,255)])/s1.png", "2 to 256 points"),
        ("/thumbor/unsafe/filters:noise(300)/s1.png", "noise takes"),
        ("/thumbor/unsafe/filters:proportion(2)/s1.png", "proportion"),
        ("/thumbor/unsafe/filters:max_age(-1)/s1.png", "max_age takes"),
        ("/thumbor/unsafe/filters:colorize(10,10,10,red)/s1.png", "colorize takes"),
        ("/thumbor/unsafe/filters:stretch(1)/s1.png", "takes no arguments"),
        ("/thumbor/unsafe/filters:gifv(avi)/s1.png", "gifv takes mp4 or webm"),
        ("/thumbor/unsafe/filters:redeye(1)/s1.png", "takes no arguments"),
        ("/thumbor/unsafe/fit-in/40x40/filters:fill(blur)/s1.png", "fill(blur) is not supported"),
        ("/thumbor/unsafe/half-fit-in/10x10/s1.png", "is not one of fit-in"),
        ("/thumbor/unsafe/fit-in/40x40/filters:fill(red,true):background_color(blue)/s1.png", "give one"),
        ("/thumbor/unsafe/fit-in/40x40/filters:fill(transparent):background_color(blue)/s1.png", "contradict"),
        ("/thumbor/unsafe/trim:500/s1.png", "trim"),
        ("/images/w=10,w=20/s1.png", "given twice"),
    ])
    func ignoredArgumentsAreRefused(_ path: String, _ reason: String) async throws {
        let mark = try TemporaryDirectory()
        try solidMark(Self.blue).write(to: mark.child("mark.png"))
        let server = try TestServer {
            $0.allowUnsignedAdHoc = true
            $0.watermark = mark.child("mark.png").path
        }
        for (name, data) in try Self.fixtures() { try data.write(to: server.origin.child(name)) }
        try await server.test { client in
            let response = try await get(client, path)
            let body = String(buffer: response.body)
            #expect(response.status == .badRequest && body.contains(reason), "\(path): \(response.status) \(body)")
        }
    }

    /// `s1.png`'s pixels (60×20: red | green | blue) tagged with EXIF orientation 6, shown a
    /// quarter turn clockwise: 20×60, red on top.
    static func turnedPNG() throws -> Data {
        var png = try png(60, 20) { x, _ in [red, green, blue][x / 20] }
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        // A big-endian TIFF header and one IFD entry: Orientation (0x0112), SHORT, 1, 6.
        let tiff: [UInt8] = Array("MM".utf8) + [0, 42] + be32(8) + [0, 1] + [0x01, 0x12, 0, 3] + be32(1) + [0, 6, 0, 0] + be32(0)
        let typed = Data(Array("eXIf".utf8) + tiff)
        // After the signature (8 bytes) and IHDR (25).
        png.insert(contentsOf: Data(be32(tiff.count)) + typed + Data(be32(Int(crc32(typed)))), at: 33)
        return png
    }

    /// imgproxy's `auto_rotate:0` makes the image of the pixels as stored, and a turn or a resize
    /// applies to those; on (the default) the image is upright. Each is its own answer of one
    /// source, whichever is asked first.
    @Test func autoRotateOffKeepsThePixelsAsStored() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try Self.turnedPNG().write(to: server.origin.child("turned.png"))
        try await server.test { client in
            func image(_ options: String) async throws -> Bitmap {
                let response = try await get(client, "/imgproxy/insecure/\(options)/plain/local:///turned.png@png")
                #expect(response.status == .ok, "\(options): \(response.status)")
                return try ImageDecoder.decode(Data(buffer: response.body))
            }
            let upright = try await image("ar:1")
            #expect(upright.width == 20 && upright.height == 60)
            #expect(upright.pixel(x: 10, y: 5) == Self.red + [255] && upright.pixel(x: 10, y: 55) == Self.blue + [255])
            let stored = try await image("ar:0")
            #expect(stored.width == 60 && stored.height == 20)
            #expect(stored.pixel(x: 5, y: 10) == Self.red + [255] && stored.pixel(x: 55, y: 10) == Self.blue + [255])
            // A quarter turn of the stored pixels: red on top, as the upright image, by the turn asked.
            let turned = try await image("ar:0/rot:90")
            #expect(turned.width == 20 && turned.height == 60 && turned.pixel(x: 10, y: 5) == Self.red + [255])
            // A box is fitted to the stored shape.
            let fitted = try await image("ar:0/rs:fit:30:30")
            #expect(fitted.width == 30 && fitted.height == 10)
            #expect(try await image("rs:fit:30:30").width == 10)
        }
    }

    /// An imgproxy preset the parser refuses stops the server at start, naming the preset
    /// (instead of turning every URL that names it into a 400).
    @Test func aPresetThatCannotBeParsedStopsTheServer() async throws {
        #expect(throws: ServerConfigurationError.self) {
            _ = try TestServer { $0.imgproxyPresets = ["default": "q:80:90"] }
        }
        #expect(throws: ServerConfigurationError.self) {
            _ = try TestServer { $0.imgproxyPresets = ["thumb": "rs:fill:100:100/bl:-1"] }
        }
        let good = try TestServer { $0.imgproxyPresets = ["thumb": "rs:fill:100:100/g:sm"] }
        await good.server.shutdown()
    }
}
