import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// A TIFF page shrinks on load (issue 40): read in bands of strips or tile rows, each block of
/// the largest of 1/2, 1/4 and 1/8 that covers the size asked for becoming its mean, so the
/// full-size raster never exists. Every layout of the TIFF corpus (strips, tiles, compressions,
/// gray, 16-bit, palette, bilevel, alpha, the orientation tag, pages) decodes shrunk to the block
/// means of its full decode; a photo's thumbnail from the reduced decode is the full decode's
/// within the PSNR bar; a file cut in the middle of a band is an error, not a partial image.
@Suite("TIFF shrink-on-load", .timeLimit(.minutes(2)))
struct TIFFScaledDecodeTests {
    /// The mean of each `factor × factor` block of `bitmap` (the last ones partial): colour
    /// weighed by alpha, alpha rounded — what the shrunk decode computes in C.
    static func blockMeans(_ bitmap: Bitmap, factor: Int) -> Bitmap {
        let width = (bitmap.width + factor - 1) / factor, height = (bitmap.height + factor - 1) / factor
        return painted(width: width, height: height) { bx, by in
            var sums = [0, 0, 0, 0], count = 0
            for y in by * factor..<min(bitmap.height, by * factor + factor) {
                for x in bx * factor..<min(bitmap.width, bx * factor + factor) {
                    let p = bitmap.pixel(x: x, y: y).map(Int.init)
                    for c in 0..<3 { sums[c] += p[c] * p[3] }
                    sums[3] += p[3]
                    count += 1
                }
            }
            let alpha = sums[3]
            return (0..<3).map { alpha == 0 ? 0 : UInt8((sums[$0] + alpha / 2) / alpha) } + [UInt8((alpha + count / 2) / count)]
        }
    }

    @Test func everyLayoutDecodesShrunkToTheBlockMeansOfItsFullDecode() throws {
        let directory = try TemporaryDirectory()
        for name in try TIFFTests.corpus(in: directory.url) {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            // 67×45 stored; covering 17×12 (stored) is 1/4, 33×22 is 1/2.
            for (box, factor) in [((17, 12), 4), ((33, 22), 2)] {
                let size = ImageDecoder.decodedSize(of: info, covering: (5...8).contains(info.orientation) ? (box.1, box.0) : box)
                let shrunk = try ImageDecoder.decode(data, info: info, covering: box, applyOrientation: false)
                #expect(shrunk.width == (67 + factor - 1) / factor && shrunk.height == (45 + factor - 1) / factor, "\(name) at 1/\(factor)")
                let expected = Self.blockMeans(try ImageDecoder.decode(data, info: info, applyOrientation: false), factor: factor)
                #expect(shrunk.width == expected.width && shrunk.height == expected.height)
                var worst = 0
                for y in 0..<min(shrunk.height, expected.height) {
                    for x in 0..<min(shrunk.width, expected.width) {
                        let a = shrunk.pixel(x: x, y: y), b = expected.pixel(x: x, y: y)
                        // Colour where the block is visible at all; alpha always.
                        let channels = b[3] == 0 ? [3] : [0, 1, 2, 3]
                        for c in channels { worst = max(worst, abs(Int(a[c]) - Int(b[c]))) }
                    }
                }
                // Means of the same straight pixels: within a level of rounding (the full decode's
                // straightening of premultiplied alpha rounds once more).
                #expect(worst <= 1, "\(name) at 1/\(factor): a channel \(worst) levels off the block mean")
                // Upright: the size `decodedSize` promised, the orientation tag applied after.
                let turned = try ImageDecoder.decode(data, info: info, covering: (5...8).contains(info.orientation) ? (box.1, box.0) : box)
                #expect(turned.width == size.width && turned.height == size.height, "\(name): \(turned.width)×\(turned.height), \(size)")
            }
        }
    }

    /// A 2003×1401 photo as deflate strips (Pillow) and as 256 px tiles (`tiffcp`).
    static func photos(in directory: URL) throws -> [URL] {
        let png = directory.appendingPathComponent("photo.png")
        try ImageEncoder.encode(photoLike(width: 2003, height: 1401), as: .png()).write(to: png)
        let program = """
            import sys
            from PIL import Image
            Image.open(sys.argv[1]).convert("RGB").save(sys.argv[2], compression="tiff_adobe_deflate")
            """
        let strips = directory.appendingPathComponent("strips.tif"), tiles = directory.appendingPathComponent("tiles.tif")
        try #require(FileManager.default.isExecutableFile(atPath: TIFFTests.python), "no \(TIFFTests.python): run `make deps-test`")
        #expect(try runTool(TIFFTests.python, ["-c", program, png.path, strips.path]), "Pillow wrote the strips")
        #expect(try runTool("/usr/bin/tiffcp", ["-t", "-w", "256", "-l", "256", "-c", "zip", strips.path, tiles.path]), "tiffcp wrote the tiles")
        return [strips, tiles]
    }

    @Test func aPhotosThumbnailFromTheReducedDecodeIsTheFullDecodesWithinTheBarAndACutFileIsAnError() throws {
        let directory = try TemporaryDirectory()
        for url in try Self.photos(in: directory.url) {
            let data = try Data(contentsOf: url)
            for (box, factor) in [((256, 256), 4), ((120, 120), 8), ((600, 600), 2), ((1500, 1500), 1)] {
                _ = try expectReducedDecode(of: data, covering: box, factor: factor)
            }
            try expectThumbnailFromTheReducedDecodeWithinTheBar(of: data)
            // Cut in the middle of a band: refused, with libtiff's reason, never a partial image.
            let info = try ImageDecoder.info(of: data)
            let cut = data.prefix(data.count * 3 / 5)
            #expect(throws: CodecError.self, "\(url.lastPathComponent) cut") { try ImageDecoder.decode(cut, info: info, covering: (256, 256)) }
        }
    }
}
