import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// A still WebP shrinks on load (libwebp's scaled decode) by the largest of 1/2, 1/4 and 1/8
/// that covers the size asked for, as JPEG does: `decodedSize` says so before any decode, the
/// decode makes exactly that, and a thumbnail made from it is the full decode's within a PSNR
/// bar; animations keep their full canvas.
@Suite("WebP shrink-on-load")
struct WebPScaledDecodeTests {
    static let photo: Data = (try? ImageEncoder.encode(photoLike(width: 2003, height: 1401), as: .webp(quality: 90))) ?? Data()

    @Test(arguments: [(256, 256, 4), (120, 120, 8), (600, 600, 2), (1500, 1500, 1)])
    func theDecodeShrinksByTheLargestFactorThatCovers(boxWidth: Int, boxHeight: Int, factor: Int) throws {
        let reduced = try expectReducedDecode(of: Self.photo, covering: (boxWidth, boxHeight), factor: factor)
        #expect(reduced.width >= boxWidth || reduced.height >= boxHeight)
    }

    @Test func aThumbnailFromTheReducedDecodeIsTheFullDecodesWithinTheBar() throws {
        try expectThumbnailFromTheReducedDecodeWithinTheBar(of: Self.photo)
    }

    @Test func anAnimationKeepsItsFullCanvas() throws {
        let frames = [paintedOpaque(width: 400, height: 300) { x, _ in [UInt8(x % 256), 0, 0, 255] },
                      paintedOpaque(width: 400, height: 300) { _, y in [0, UInt8(y % 256), 0, 255] }]
        let animation = try AnimationWriter.webp(frames.map { AnimationFrame(image: $0, duration: 100) })
        let info = try ImageDecoder.info(of: animation)
        #expect(info.isAnimated)
        let size = ImageDecoder.decodedSize(of: info, covering: (50, 50))
        #expect(size.width == 400 && size.height == 300)
        let decoded = try ImageDecoder.decode(animation, info: info, covering: (50, 50))
        #expect(decoded.width == 400 && decoded.height == 300)
    }
}

/// The 2003×1401 photo `data` decodes, when `box` is asked for, at 1/`factor` of each side
/// (rounded up), as `decodedSize` says first; the reduced decode.
@discardableResult
func expectReducedDecode(of data: Data, covering box: (width: Int, height: Int), factor: Int) throws -> Bitmap {
    let info = try ImageDecoder.info(of: data)
    let size = ImageDecoder.decodedSize(of: info, covering: box)
    #expect(size.width == (2003 + factor - 1) / factor && size.height == (1401 + factor - 1) / factor, "\(size)")
    let reduced = try ImageDecoder.decode(data, info: info, covering: box)
    #expect(reduced.width == size.width && reduced.height == size.height)
    return reduced
}

/// A 256 px thumbnail from the reduced decode of `data` is the full decode's, within 35 dB PSNR.
func expectThumbnailFromTheReducedDecodeWithinTheBar(of data: Data) throws {
    let (fromReduced, fromFull) = try thumbnailsFromReducedAndFullDecodes(of: data)
    #expect(fromReduced.width == fromFull.width && fromReduced.height == fromFull.height)
    let psnr = ResamplerTests.psnr(fromReduced.converted(to: .rgba8), fromFull.converted(to: .rgba8))
    #expect(psnr > 35, "PSNR \(psnr) dB")
}

/// A 256 px fit thumbnail of `data` made from its decode shrunk on load (covering 256×180) and
/// from its full decode: what a shrink-on-load format's PSNR bar compares.
func thumbnailsFromReducedAndFullDecodes(of data: Data) throws -> (reduced: Bitmap, full: Bitmap) {
    let info = try ImageDecoder.info(of: data)
    let resize = Resize(width: 256, height: 256, mode: .fit)
    return (try resize.process(try ImageDecoder.decode(data, info: info, covering: (256, 180))),
            try resize.process(try ImageDecoder.decode(data, info: info)))
}
