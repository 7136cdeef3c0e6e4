import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// A non-interlaced PNG shrinks on load: its rows, decoded one at a time, are summed into
/// blocks of the largest of 1/2, 1/4 and 1/8 that covers the size asked for. `decodedSize` says
/// so first; a thumbnail from it is the full decode's within a PSNR bar; transparent pixels lend
/// no colour to the blocks they share (no dark fringe); a truncated file is an error.
@Suite("PNG shrink-on-load")
struct PNGScaledDecodeTests {
    static let photo: Data = (try? ImageEncoder.encode(photoLike(width: 2003, height: 1401), as: .png())) ?? Data()

    @Test(arguments: [(256, 256, 4), (120, 120, 8), (600, 600, 2), (1500, 1500, 1)])
    func theDecodeShrinksByTheLargestFactorThatCovers(boxWidth: Int, boxHeight: Int, factor: Int) throws {
        try expectReducedDecode(of: Self.photo, covering: (boxWidth, boxHeight), factor: factor)
    }

    @Test func aThumbnailFromTheReducedDecodeIsTheFullDecodesWithinTheBar() throws {
        try expectThumbnailFromTheReducedDecodeWithinTheBar(of: Self.photo)
    }

    /// Every colour type, opaque ones (summed as RGB, without weights) and ones with alpha or a
    /// transparent colour, shrinks to the block means of its full decode; Pillow writes them.
    @Test func everyColourTypeShrinksToTheBlockMeansOfItsFullDecode() throws {
        let directory = try TemporaryDirectory()
        let program = TIFFTests.pattern + """
            rgb.save(os.path.join(out, "rgb.png"))
            im.save(os.path.join(out, "rgba.png"))
            rgb.convert("L").save(os.path.join(out, "gray.png"))
            rgb.convert("P", palette=Image.ADAPTIVE, colors=60).save(os.path.join(out, "palette.png"))
            rgb.convert("L").save(os.path.join(out, "gray-trns.png"), transparency=0)
            Image.frombytes("I;16", (w, h), b"".join(struct.pack("<H", v * 257) for v in rgb.convert("L").getdata())).save(os.path.join(out, "gray16.png"))
            """
        try #require(FileManager.default.isExecutableFile(atPath: TIFFTests.python), "no \(TIFFTests.python): run `make deps`")
        #expect(try runTool(TIFFTests.python, ["-c", program, directory.path]), "Pillow wrote the PNGs")
        for name in ["rgb.png", "rgba.png", "gray.png", "palette.png", "gray-trns.png", "gray16.png"] {
            let data = try Data(contentsOf: directory.child(name))
            let info = try ImageDecoder.info(of: data)
            for (box, factor) in [((17, 12), 4), ((33, 22), 2), ((9, 6), 8)] {
                let shrunk = try ImageDecoder.decode(data, info: info, covering: box)
                #expect(shrunk.width == (67 + factor - 1) / factor && shrunk.height == (45 + factor - 1) / factor, "\(name) at 1/\(factor)")
                try TIFFScaledDecodeTests.expectBlockMeans(shrunk, of: data, info: info, factor: factor, name: name)
            }
        }
    }

    @Test func transparentPixelsLendNoColourAndBlocksAtTheEdgesAreTheirOwnMean() throws {
        // 10×9: red columns 0–3 opaque, the rest transparent black; at 1/2 (covering 5×5) the
        // block of columns 2–3 is opaque red, of columns 4–5 transparent, and the last column
        // and row are blocks of one pixel's width or height.
        let image = painted(width: 10, height: 9) { x, _ in x < 4 ? [255, 0, 0, 255] : [0, 0, 0, 0] }
        let png = try ImageEncoder.encode(image, as: .png())
        let info = try ImageDecoder.info(of: png)
        let reduced = try ImageDecoder.decode(png, info: info, covering: (5, 5))
        #expect(reduced.width == 5 && reduced.height == 5)
        #expect(reduced.pixel(x: 1, y: 0) == [255, 0, 0, 255])
        #expect(reduced.pixel(x: 2, y: 4)[3] == 0)
        // A block half red, half transparent: red at half coverage, not a darkened red.
        let half = painted(width: 4, height: 2) { x, _ in x == 0 ? [255, 0, 0, 255] : [0, 0, 0, 0] }
        let halfPNG = try ImageEncoder.encode(half, as: .png())
        let halfReduced = try ImageDecoder.decode(halfPNG, info: try ImageDecoder.info(of: halfPNG), covering: (2, 1))
        #expect(halfReduced.pixel(x: 0, y: 0) == [255, 0, 0, 128], "\(halfReduced.pixel(x: 0, y: 0))")
    }

    @Test func aTruncatedFileIsAnErrorNotAPartialImage() throws {
        let info = try ImageDecoder.info(of: Self.photo)
        let truncated = Self.photo.prefix(Self.photo.count / 2)
        #expect(throws: (any Error).self) { try ImageDecoder.decode(truncated, info: info, covering: (256, 256)) }
    }

    /// The zlib stream's Adler-32 is not computed, so each IDAT chunk's CRC-32 is what finds
    /// damage: a bit flipped in the compressed rows is refused, shrunk or whole, even where the
    /// inflated stream would still have made rows: in a middle chunk, in the last one, and in a
    /// file whose rows are all in one chunk.
    @Test func aBitFlippedInTheCompressedRowsIsAnError() throws {
        let info = try ImageDecoder.info(of: Self.photo)
        // The photo's IDAT chunks, and the same file with them as one chunk (as many optimised
        // PNGs are): libspng reads a chunk's CRC with the next chunk's header, so the last
        // chunk's (the only one's) is read after the image.
        var chunks: [(type: String, body: Data, at: Int)] = []
        var offset = 8
        while offset + 12 <= Self.photo.count {
            let bytes = [UInt8](Self.photo[(Self.photo.startIndex + offset)..<(Self.photo.startIndex + offset + 8)])
            let length = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
            let type = String(decoding: bytes[4..<8], as: UTF8.self)
            chunks.append((type, Self.photo.subdata(in: (Self.photo.startIndex + offset + 8)..<(Self.photo.startIndex + offset + 8 + length)), offset + 8))
            offset += 12 + length
        }
        let idats = chunks.filter { $0.type == "IDAT" }
        #expect(idats.count > 1)
        var single = Self.photo.prefix(try #require(idats.first).at - 8)
        single.append(TestPNG.chunk("IDAT", idats.reduce(Data()) { $0 + $1.body }))
        single.append(TestPNG.chunk("IEND", Data()))
        let (fromSingle, fromPhoto) = (try ImageDecoder.decode(single, covering: (256, 256)), try ImageDecoder.decode(Self.photo, covering: (256, 256)))
        #expect(fromSingle.width == fromPhoto.width && fromSingle.height == fromPhoto.height)
        let last = try #require(idats.last)
        let cases = [Self.photo.count / 3, Self.photo.count / 2, last.at + last.body.count / 2].map { (Self.photo, $0, "photo") }
            + [(single, single.count / 2, "one IDAT"), (single, single.count - 40, "one IDAT, near its end")]
        for (file, offset, name) in cases {
            var damaged = file
            damaged[damaged.startIndex + offset] ^= 0x10
            for box in [(256, 256), (4000, 4000)] {
                #expect(throws: CodecError.self, "\(name): a bit flipped at \(offset), covering \(box)") {
                    try ImageDecoder.decode(damaged, info: info, covering: box)
                }
            }
        }
    }
}
