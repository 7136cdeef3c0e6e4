import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselTestSupport
import Foundation
import Testing

/// imgproxy's sizes, as its own code computes them (`processing/prepare.go`, `calc_position.go`;
/// each expected size below was worked from those formulas, the marked ones also measured
/// against imgproxy): an imgproxy URL's plan through `ImgproxyGeometry` on a source of the
/// given size.
/// (One case at a time, the pixel work off the cooperative pool: under ThreadSanitizer it takes
/// seconds, which on one of the pool's two threads would stall every server suite beside it.)
@Suite(.serialized) struct ImgproxyGeometryTests {
    /// The answer's size for imgproxy's `options` on a `width × height` source: its geometry
    /// step's layout when the chain is that step alone (what `process` makes, checked on pixels
    /// by the tests below), else the chain run on a blank bitmap.
    static func size(_ options: String, _ width: Int, _ height: Int) throws -> (Int, Int) {
        let chain = try PlanParsing.imgproxy(options).plan.processors(limit: 2048, maxPixels: 16_777_216)
        if chain.count == 1, let geometry = chain.first as? ImgproxyGeometry {
            let result = geometry.layout(sourceWidth: width, sourceHeight: height).result
            return (result.width, result.height)
        }
        let made = try chain.process(Bitmap(width: width, height: height, pixelFormat: .rgba8))
        return (made.width, made.height)
    }

    /// The layout's sizes are what processing makes, on a reduced decode too.
    @Test func theLayoutIsWhatProcessingMakes() async throws {
        let options = ["rs:fill:300:200/g:ea:0.1:0.05", "rs:fit:200:200/pd:10:5", "rs:fill-down:300:150", "c:0.5:0.5/rs:fit:100:100/ex:1", "z:0.5:0.25"]
        // (Made off the cooperative pool; the expectations on the test's own task.)
        let sizes = try await offThePool { () throws -> [[Int]] in
            try options.map { options in
                let chain = try PlanParsing.imgproxy(options).plan.processors(limit: 2048, maxPixels: 16_777_216)
                guard let geometry = chain.first as? ImgproxyGeometry else { return [] }
                let layout = geometry.layout(sourceWidth: 400, sourceHeight: 300).result
                let made = try chain.process(Bitmap(width: 400, height: 300, pixelFormat: .rgba8))
                // A 200×150 decode standing for the 400×300 source.
                let reduced = try geometry.process(Bitmap(width: 200, height: 150, pixelFormat: .rgba8), planned: (400, 300))
                return [layout.width, layout.height, made.width, made.height, reduced.width, reduced.height]
            }
        }
        for (option, size) in zip(options, sizes) {
            #expect(size.count == 6 && size[0...1] == size[2...3] && size[0...1] == size[4...5], "\(option): layout, made, from a reduced decode: \(size)")
        }
    }

    @Test(arguments: [
        // (options, source, imgproxy's answer)
        ("rs:force:500:0:0", 1000, 667, 500, 667),            // force keeps the side not asked for
        ("rs:force:2000:1000:0", 1000, 667, 1000, 500),       // without enlarge, the asked aspect kept
        ("rs:fit:300:300/mw:500", 1000, 667, 300, 300),       // a minimum width, then cut to the box
        ("mw:1500", 1000, 667, 1500, 1001),                   // a minimum width enlarges
        ("z:1.5", 1000, 667, 1000, 667),                      // zoom without enlarge
        ("z:0.5:0.25", 1000, 667, 500, 167),                  // zoom per axis
        ("rs:fit:300:300/z:2", 1000, 667, 600, 400),
        ("rs:fill:600:600:0/dpr:2", 1000, 667, 667, 667),     // the DPR capped by what the source allows
        ("pd:10/dpr:2", 300, 200, 320, 220),                  // padding at the capped DPR
        ("rs:fit:500:500:0:1/dpr:2", 300, 200, 500, 500),
        ("rs:fill:300:300/dpr:0.5/ex:1", 200, 100, 150, 150),
        ("rs:fill:800:200/mrd:100", 300, 200, 100, 67),       // max_result_dimension on the would-be result
        ("pd:50/mrd:100", 2000, 1500, 99, 75),
        ("rs:fit:500:500:0:1/mrd:100", 300, 200, 100, 100),
        ("rs:fill:1500:900:0/dpr:3", 600, 400, 600, 400),     // the limit is on the result, not the request
        ("rs:fit:0:0:0", 2400, 1800, 2400, 1800),             // no clamp to the limit (2048 here)
        ("rs:fill-down:600:300", 400, 400, 400, 200),
        ("rs:fit:600:300/exar:1", 400, 400, 600, 300),
        ("rs:auto:300:200", 1000, 667, 300, 200),
        ("rs:auto:200:300", 1000, 667, 200, 133),
        ("c:290:190:ea:0.1:0.05", 1000, 667, 290, 190),
        ("c:0.5:0.5/rs:fit:100:100", 1000, 667, 100, 67),
        ("rs:fit:300:300:1/dpr:2", 1000, 667, 600, 400),
    ])
    func sizesAsImgproxyComputesThem(_ options: String, _ width: Int, _ height: Int, _ resultWidth: Int, _ resultHeight: Int) throws {
        let made = try Self.size(options, width, height)
        #expect(made == (resultWidth, resultHeight), "\(options) of \(width)×\(height): \(made)")
    }

    /// Growing past the source is still held to the server's limits (a result no larger than
    /// the source always passes).
    @Test func growingPastTheSourceIsHeldToTheLimit() throws {
        func process(_ options: String, _ width: Int, _ height: Int) throws -> Bitmap {
            try PlanParsing.imgproxy(options).plan.processors(limit: 2048, maxPixels: 16_777_216)
                .process(Bitmap(width: width, height: height, pixelFormat: .rgba8))
        }
        #expect(throws: CodecError.self) { _ = try process("rs:fit:1500:900:1/dpr:3", 600, 400) }
        #expect(throws: CodecError.self) { _ = try process("pd:2000", 300, 200) }
    }

    @Test func windowsArePlacedAsImgproxyPlacesThem() {
        typealias Size = ImgproxyGeometry.Size
        func at(_ outer: (Int, Int), _ inner: (Int, Int), _ gravity: Gravity, dpr: Double = 1) -> [Int] {
            let p = ImgproxyGeometry.position(outer: Size(outer.0, outer.1), inner: Size(inner.0, inner.1), gravity: gravity, dpr: dpr)
            return [p.x, p.y]
        }
        // Centred at roundToEven((outer − inner + 1) / 2): one more than half the free space in
        // three cases of four.
        #expect(at((1000, 667), (667, 667), .center) == [167, 0])
        #expect(at((1006, 100), (1000, 100), .center) == [4, 0])
        #expect(at((1004, 100), (1000, 100), .center) == [2, 0])
        // An offset below 1 is a fraction of the outer size; others are pixels times the DPR,
        // half to even.
        #expect(at((1000, 667), (290, 190), .offset(.east, x: 0.1, y: 0.05)) == [610, 272])
        #expect(at((500, 500), (300, 200), .offset(.northWest, x: 0.1, y: 0.1)) == [50, 50])
        #expect(at((500, 500), (300, 200), .offset(.center, x: 0.1, y: 0.1)) == [150, 200])
        #expect(at((1000, 1000), (100, 100), .offset(.northWest, x: 10.5, y: 10), dpr: 1) == [10, 10])
        #expect(at((1000, 1000), (100, 100), .offset(.southEast, x: 10, y: 20), dpr: 2) == [880, 860])
        // A focus point: its pixel (half to even) minus half the window.
        #expect(at((1001, 100), (300, 100), .focalPoint(x: 0.5, y: 0.5)) == [350, 0])
        // Always inside.
        #expect(at((100, 100), (50, 50), .offset(.west, x: 500, y: 0)) == [50, 26])
    }

    /// Extended and padded areas are transparent black, as libvips' embed makes them (a JPEG
    /// answer flattens them on white).
    @Test func extendedAndPaddedAreasAreTransparent() async throws {
        let options = ["rs:fit:500:500:0:1", "pd:20", "rs:fit:600:300/exar:1"]
        let pixels = try await offThePool { () throws -> [[[UInt8]]] in
            try options.map { options in
                let chain = try PlanParsing.imgproxy(options).plan.processors(limit: 2048, maxPixels: 16_777_216)
                let made = try chain.process(paintedOpaque(width: 400, height: 400) { _, _ in [200, 30, 30] })
                return [made.pixel(x: 0, y: 0), made.pixel(x: made.width / 2, y: made.height / 2)]
            }
        }
        for (option, pair) in zip(options, pixels) {
            #expect(pair[0] == [0, 0, 0, 0], "\(option): the corner \(pair[0])")
            #expect(pair[1] == [200, 30, 30, 255], "\(option): the middle \(pair[1])")
        }
    }

    /// imgproxy's marks on its geometry: a replicated mark is an odd number of tiles (the mark
    /// with half the gap before it), the row centred; offsets are times the DPR as capped (a
    /// source that cannot enlarge keeps 1).
    @Test func marksArePlacedAsImgproxyPlacesThem() throws {
        let white = paintedOpaque(width: 100, height: 100) { _, _ in [255, 255, 255] }
        let mark = MarkImage(image: paintedOpaque(width: 20, height: 20) { _, _ in [0, 0, 255] }, identifier: "blue")
        func made(_ options: String) throws -> Bitmap {
            let chain = try PlanParsing.imgproxy(options).plan.processors(limit: 2048, maxPixels: 16_777_216, marks: [mark])
            #expect(chain.count == 1 && chain.first is ImgproxyGeometry, "\(options): \(chain.identifier)")
            return try chain.process(white)
        }
        let blue: [UInt8] = [0, 0, 255, 255], blank: [UInt8] = [255, 255, 255, 255]
        // Tiles of 30 (5 + 20 + 5): ceil(100 / 30) = 4, made 5; 25 over on each side, so the
        // marks cover 10…29, 40…59 and 70…89 on each axis.
        let tiled = try made("wm:1:re:10:10/dpr:1.5")
        for (x, expected) in [(5, blank), (15, blue), (35, blank), (45, blue), (75, blue), (95, blank)] {
            #expect(tiled.pixel(x: x, y: 15) == expected, "x = \(x): \(tiled.pixel(x: x, y: 15))")
        }
        // dpr 2 of a source that cannot enlarge is 1: the mark 10 pixels in, not 20.
        let cornered = try made("wm:1:nowe:10:10/dpr:2")
        #expect(cornered.pixel(x: 10, y: 10) == blue && cornered.pixel(x: 9, y: 9) == blank && cornered.pixel(x: 30, y: 30) == blank)
        // At half opacity imgproxy's blend (libvips' float result cast back) truncates: red over
        // blue is 127.5 on two channels, 127 there (128 in the native styles, which round).
        let red = paintedOpaque(width: 4, height: 4) { _, _ in [255, 0, 0] }, base = paintedOpaque(width: 4, height: 4) { _, _ in [0, 0, 255] }
        var half = try Watermark(mark: red, markIdentifier: "red", opacity: 0.5, position: .center, offsetX: 0, offsetY: 0, scale: 0, heightScale: 0)
        #expect(try half.process(base).pixel(x: 1, y: 1) == [128, 0, 128, 255])
        half.centresAsImgproxy = true
        #expect(try half.process(base).pixel(x: 1, y: 1) == [127, 0, 127, 255])
    }

    /// A plain `fit` box stays the resize every style shares (the same answer as imgproxy's, and
    /// one identity with the native and thumbor URLs that ask for it); a centred `fill` is
    /// imgproxy's own (its window a pixel further than the shared fill's in half the sizes).
    @Test func aPlainBoxIsTheSharedResize() throws {
        let fit = try PlanParsing.imgproxy("rs:fit:300:200").plan.processors(limit: 2048, maxPixels: 16_777_216)
        #expect(fit.identifier == Resize(width: 300, height: 200, mode: .fit, upscale: false).identifier)
        for options in ["rs:fill:300:200:1", "rs:fill:300:200/g:no", "rs:fit:300:200/dpr:2", "rs:force:300:200", "rs:fit:300:200/pd:1", "c:100:100/rs:fit:50:50"] {
            let chain = try PlanParsing.imgproxy(options).plan.processors(limit: 2048, maxPixels: 16_777_216)
            #expect(chain.contains { $0 is ImgproxyGeometry }, "\(options)")
        }
    }

    /// `options` made of `data` as the pipeline makes it: decoded at the size the plan covers
    /// (shrink-on-load, a vector drawn at the size asked), then the chain (`ReducedDecode`).
    static func made(_ options: String, of data: Data) throws -> Bitmap {
        let chain = try PlanParsing.imgproxy(options).plan.processors(limit: 2048, maxPixels: 16_777_216)
        let info = try ImageDecoder.info(of: data)
        let decoded = try ImageDecoder.decode(data, info: info, covering: ReducedDecode.covering(chain, info: info))
        return try ReducedDecode.process(chain, decoded: decoded, info: info)
    }

    /// Found by review: a vector is planned from its own size (not the size it is drawn at), a
    /// smart crop on a turned reduced decode stays inside it, and an enlarging fill cuts its
    /// window before resizing (never the whole covering image, which could pass the limit).
    @Test func vectorsReducedDecodesAndEnlargingFills() async throws {
        let svg = Data(##"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="60"><rect width="100" height="60" fill="#c33"/></svg>"##.utf8)
        let vectorCases = [("pd:10", [120, 80]), ("c:50:30", [50, 30]), ("rs:fit:300:300:1/pd:5", [310, 190]), ("mw:200", [200, 120])]
        let (vectors, turned, fill) = try await offThePool { () throws -> ([[Int]], [Int], [Int]) in
            let vectors = try vectorCases.map { options, _ in
                let made = try Self.made(options, of: svg)
                return [made.width, made.height]
            }
            let jpeg = try ImageEncoder.encode(photoLike(width: 1000, height: 667), as: .jpeg(quality: 85))
            let turned = try Self.made("rot:90/c:0:500:sm/rs:fit:100:100", of: jpeg)
            // 600 a side at most here: the 1200×600 the fill stands for is past it, the 600×600 answer is not.
            let fill = try PlanParsing.imgproxy("rs:fill:600:600:1/g:no").plan.processors(limit: 600, maxPixels: 1_000_000)
                .process(Bitmap(width: 400, height: 200, pixelFormat: .rgba8))
            return (vectors, [turned.width, turned.height], [fill.width, fill.height])
        }
        for ((options, expected), size) in zip(vectorCases, vectors) {
            #expect(size == expected, "\(options) of a 100×60 SVG: \(size)")
        }
        #expect(turned == [100, 75], "\(turned)")
        #expect(fill == [600, 600], "\(fill)")
    }
}
