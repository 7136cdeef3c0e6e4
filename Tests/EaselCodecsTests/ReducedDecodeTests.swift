import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// Geometry from the header: turns, flips and crops before a resize keep shrink-on-load, and
/// the answer has the size and (within resampling) the pixels of a full-size decode.
@Suite struct ReducedDecodeTests {
    /// Odd sizes, so that JPEG's DCT scaling leaves a fraction of a pixel at the edges.
    static let jpeg: Data = {
        (try? ImageEncoder.encode(photoLike(width: 2003, height: 1401), as: .jpeg(quality: 92))) ?? Data()
    }()

    static func chains() throws -> [(String, [any ImageProcessor])] {
        [
            ("plain", [Resize(width: 120, height: 120)]),
            ("turned", [try QuarterTurn(degrees: -90), Resize(width: 120, height: 120)]),
            ("flipped", [Flip(horizontal: true, vertical: false), Resize(width: 120, height: 120)]),
            ("cropped", [RegionCrop(.size(width: 900, height: 700, gravity: .center)), Resize(width: 120, height: 120)]),
            ("edges", [RegionCrop(.edges(left: 101, top: 57, right: 1301, bottom: 1000)), Resize(width: 97, height: 97, mode: .fill)]),
            ("everything", [try QuarterTurn(degrees: -270), Flip(horizontal: false, vertical: true),
                            RegionCrop(.size(width: 0.5, height: 800, gravity: .offset(.southEast, x: 30, y: 41))),
                            Resize(width: 64, height: 80, mode: .fill)]),
        ]
    }

    @Test(arguments: try chains())
    func aChainThatTurnsFlipsOrCropsFirstIsDecodedReducedWithTheFullDecodesAnswer(_ name: String, _ chain: [any ImageProcessor]) throws {
        let info = try ImageDecoder.info(of: Self.jpeg)
        let covering = try #require(ReducedDecode.covering(chain, info: info), "\(name): no reduced decode")
        let reduced = try ImageDecoder.decode(Self.jpeg, info: info, covering: covering)
        #expect(reduced.width < info.width / 2, "\(name): decoded at \(reduced.width)×\(reduced.height)")
        let full = try ImageDecoder.decode(Self.jpeg, info: info)
        let expected = try chain.process(full)
        let made = try ReducedDecode.process(chain, decoded: reduced, info: info)
        #expect((made.width, made.height) == (expected.width, expected.height), "\(name)")
        let difference = try #require(meanDifference(made, expected))
        #expect(difference < 4, "\(name): mean difference \(difference)")
    }

    @Test func stepsThatNeedTheSourcesOwnPixelsKeepTheFullDecode() throws {
        let info = try ImageDecoder.info(of: Self.jpeg)
        // A crop centred on a pixel of the source, and a step that is not geometry, before the resize.
        #expect(ReducedDecode.covering([RegionCrop(.size(width: 500, height: 500, gravity: .focalPixel(x: 900, y: 700))),
                                        Resize(width: 50, height: 50)], info: info) == nil)
        #expect(ReducedDecode.covering([Grayscale(), Resize(width: 50, height: 50)], info: info) == nil)
        // No resize, or one that needs the whole crop.
        #expect(ReducedDecode.covering([try QuarterTurn(degrees: 90)], info: info) == nil)
        #expect(ReducedDecode.covering([RegionCrop(.size(width: 100, height: 100, gravity: .center)), Resize(width: 100, height: 100)],
                                       info: info) == nil)
        // The full decode runs the chain as it is.
        let chain: [any ImageProcessor] = [try QuarterTurn(degrees: 90), Resize(width: 50, height: 50)]
        let full = try ImageDecoder.decode(Self.jpeg, info: info)
        #expect(try ReducedDecode.process(chain, decoded: full, info: info).width == chain.process(full).width)
    }

    /// Sizes at a scale's edges (found in review): a flip before a fill that may not enlarge,
    /// `auto` on a source one pixel taller than wide, and a need that is exactly a fraction.
    @Test(arguments: [(500, 500, 63, 63, ResizeMode.fill), (1000, 1001, 100, 50, .auto), (1001, 1001, 126, 126, .fit),
                      (997, 601, 125, 75, .fillDown)])
    func aFlipBeforeAResizeAtAScalesEdgeKeepsTheFullDecodesSize(_ width: Int, _ height: Int, _ boxWidth: Int, _ boxHeight: Int,
                                                                 _ mode: ResizeMode) throws {
        let data = try ImageEncoder.encode(photoLike(width: width, height: height), as: .jpeg(quality: 90))
        let chain: [any ImageProcessor] = [Flip(horizontal: true, vertical: false), Resize(width: boxWidth, height: boxHeight, mode: mode, upscale: false)]
        let info = try ImageDecoder.info(of: data)
        let covering = ReducedDecode.covering(chain, info: info)
        let plain = Resize(width: boxWidth, height: boxHeight, mode: mode, upscale: false).minimumSourceSize(of: info)
        // No larger a decode than the plain resize's, but for the one pixel a flip asks more.
        if let covering {
            #expect(ImageDecoder.decodedSize(of: info, covering: covering).width
                    <= ImageDecoder.decodedSize(of: info, covering: (plain.width + 1, plain.height + 1)).width)
        }
        let reduced = try ImageDecoder.decode(data, info: info, covering: covering)
        let made = try ReducedDecode.process(chain, decoded: reduced, info: info)
        let expected = try chain.process(try ImageDecoder.decode(data, info: info))
        #expect((made.width, made.height) == (expected.width, expected.height), "\(width)×\(height) \(mode)")
    }
}
