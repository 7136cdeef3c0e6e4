@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// A GIF's first frame shrinks on load (issue 40): its rows are summed into blocks of the largest
/// of 1/2, 1/4 and 1/8 that covers the size asked for as they are read (an interlaced frame's
/// palette indexes kept, a byte a pixel, until its four passes are in), so the full-size RGBA
/// canvas never exists. Pillow's files (interlaced or not, with a transparent colour) and frames
/// placed inside or across the canvas decode shrunk to exactly the block means of their full
/// decode; a file cut in the middle of the frame is an error, as it is for the full decode.
@Suite("GIF shrink-on-load", .timeLimit(.minutes(2)))
struct GIFScaledDecodeTests {
    /// Pillow's GIFs of a 61×37 picture: `plain.gif` (rows in order), `interlaced.gif` (four
    /// passes) and `transparent.gif` (interlaced, palette index 0 transparent).
    static func pillowFiles(in directory: URL) throws -> [String] {
        try #require(FileManager.default.isExecutableFile(atPath: BMPAndICOTests.python), "no \(BMPAndICOTests.python): run `make deps`")
        let program = """
            import sys, os
            from PIL import Image
            out = sys.argv[1]
            w, h = 61, 37
            im = Image.new("RGB", (w, h))
            im.putdata([((x * 4) % 256, (y * 7) % 256, (x * y) % 256) for y in range(h) for x in range(w)])
            p = im.quantize(200)
            p.save(os.path.join(out, "plain.gif"), interlace=False)
            p.save(os.path.join(out, "interlaced.gif"), interlace=True)
            p.save(os.path.join(out, "transparent.gif"), interlace=True, transparency=0)
            """
        #expect(try runTool(BMPAndICOTests.python, ["-c", program, directory.path]), "Pillow wrote its files")
        return ["plain.gif", "interlaced.gif", "transparent.gif"]
    }

    /// Every block of `shrunk` is the mean of its block of `whole` (colour weighed by alpha),
    /// exactly: a GIF's pixels are opaque or transparent, with no rounding of their own.
    static func expectExactBlockMeans(_ shrunk: Bitmap, of whole: Bitmap, factor: Int, name: String) {
        let expected = TIFFScaledDecodeTests.blockMeans(whole, factor: factor)
        #expect(shrunk.width == expected.width && shrunk.height == expected.height, "\(name) by \(factor)")
        var worst = 0
        for y in 0..<min(shrunk.height, expected.height) {
            for x in 0..<min(shrunk.width, expected.width) {
                let a = shrunk.pixel(x: x, y: y), b = expected.pixel(x: x, y: y)
                for c in b[3] == 0 ? [3] : [0, 1, 2, 3] { worst = max(worst, abs(Int(a[c]) - Int(b[c]))) }
            }
        }
        #expect(worst == 0, "\(name) by \(factor): a channel \(worst) levels off the block mean")
    }

    /// `data` decoded covering 1/2, 1/4 and 1/8 of its size: what `decodedSize` says, and the
    /// block means of its full decode.
    static func expectShrinksToItsBlockMeans(_ data: Data, name: String) throws {
        let info = try ImageDecoder.info(of: data)
        let whole = try ImageDecoder.decode(data, info: info)
        #expect(whole.width == info.width && whole.height == info.height, "\(name)")
        for factor in [2, 4, 8] {
            let size = ((info.width + factor - 1) / factor, (info.height + factor - 1) / factor)
            #expect(ImageDecoder.decodedSize(of: info, covering: size) == size, "\(name) by \(factor)")
            expectExactBlockMeans(try ImageDecoder.decode(data, info: info, covering: size), of: whole, factor: factor, name: name)
        }
    }

    @Test func pillowsGIFsShrinkToTheBlockMeansOfTheirFullDecode() throws {
        let directory = try TemporaryDirectory()
        for name in try Self.pillowFiles(in: directory.url) {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            // The header says how the frame is stored, and what its shrinking decode holds: an
            // interlaced frame's indexes, or a row of indexes and sums.
            #expect(info.shrunkDecodeWorkingBytes == (name == "plain.gif" ? 61 * 17 : 61 * 37 + 61 * 17), "\(name)")
            try Self.expectShrinksToItsBlockMeans(data, name: name)
        }
    }

    @Test func aFrameInsideOrAcrossTheCanvasShrinksWithTheCanvasAroundIt() throws {
        let palette: [UInt8] = [255, 0, 0, 0, 0, 255, 0, 255, 0, 255, 255, 255]
        // A 23×13 frame at (5, 3) of a 40×30 screen, index 3 transparent; and one that runs past
        // the screen's right and bottom edges (drawn clipped, as the full decode draws it).
        for (left, top, name) in [(5, 3, "inside"), (30, 22, "across")] {
            let indexes: [UInt8] = (0..<(23 * 13)).map { (index: Int) -> UInt8 in UInt8((index % 23 + index / 23) % 4) }
            let frame = GIFCodec.TestFrame(left: left, top: top, width: 23, height: 13, indexes: indexes, transparent: 3)
            let gif = try GIFCodec.encodeFrames(width: 40, height: 30, frames: [frame], palette: palette)
            try Self.expectShrinksToItsBlockMeans(gif, name: name)
        }
    }

    /// Cut anywhere, a file is refused or decoded alike whole and shrunk: neither reads rows of
    /// a frame below the canvas, so one cut after the visible rows is no error to either.
    @Test func aCutFileIsRefusedAlikeWholeOrShrunk() throws {
        let palette: [UInt8] = [255, 0, 0, 0, 0, 255, 0, 255, 0, 255, 255, 255]
        for (left, top) in [(5, 3), (30, 22), (0, 35)] {
            let indexes: [UInt8] = (0..<(23 * 13)).map { (index: Int) -> UInt8 in UInt8((index * 7 + index / 23) % 4) }
            let frame = GIFCodec.TestFrame(left: left, top: top, width: 23, height: 13, indexes: indexes, transparent: 3)
            let gif = try GIFCodec.encodeFrames(width: 40, height: 30, frames: [frame], palette: palette)
            let info = try ImageDecoder.info(of: gif)
            var refusedBoth = 0
            for length in 30..<gif.count {
                let cut = gif.prefix(length)
                let whole = (try? ImageDecoder.decode(cut, info: info)) != nil
                let shrunk = (try? ImageDecoder.decode(cut, info: info, covering: (10, 8))) != nil
                #expect(whole == shrunk, "frame at (\(left), \(top)) cut at \(length) of \(gif.count): whole \(whole), shrunk \(shrunk)")
                if !whole && !shrunk { refusedBoth += 1 }
            }
            #expect(refusedBoth > 0, "frame at (\(left), \(top)): some cut is refused")
        }
    }

    @Test func aFileCutInsideTheFrameIsAnErrorNotAPartialImage() throws {
        let directory = try TemporaryDirectory()
        for name in try Self.pillowFiles(in: directory.url) {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            let cut = data.prefix(data.count * 2 / 3)
            for factor in [1, 4] {
                let size = ((61 + factor - 1) / factor, (37 + factor - 1) / factor)
                #expect(throws: CodecError.self, "\(name) cut, by \(factor)") {
                    try ImageDecoder.decode(cut, info: info, covering: size)
                }
            }
        }
    }

    @Test func anAnimationsFirstFrameShrinksAndTheAnimationKeepsItsCanvas() throws {
        let frames = [[UInt8](repeating: 0, count: 64 * 48), (0..<(64 * 48)).map { UInt8($0 % 3) }]
        let gif = try GIFCodec.encodeAnimation(width: 64, height: 48, frames: frames, palette: [255, 0, 0, 0, 255, 0, 0, 0, 255],
                                               delays: [10, 10])
        let info = try ImageDecoder.info(of: gif)
        #expect(info.isAnimated)
        #expect(ImageDecoder.decodedSize(of: info, covering: (16, 12)) == (16, 12))
        let first = try ImageDecoder.decode(gif, info: info, covering: (16, 12))
        #expect(first.width == 16 && first.height == 12 && first.pixel(x: 3, y: 3) == [255, 0, 0, 255])
        // A later page, as a still, is composed from every frame before it at full size.
        let second = try ImageDecoder.info(of: gif, page: 1)
        #expect(ImageDecoder.decodedSize(of: second, covering: (16, 12)) == (64, 48))
    }
}
