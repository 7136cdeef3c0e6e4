import EaselCodecs
import Foundation
import Testing

@Suite("Sniffing")
struct ImageFileTypeTests {
    @Test func recognisesSupportedFormatsByMagicBytes() throws {
        #expect(try ImageFileType.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(try ImageFileType.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]) == .png)
        #expect(try ImageFileType.sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == .webp)
        #expect(try ImageFileType.sniff(Array("GIF89a....".utf8)) == .gif)
        #expect(try ImageFileType.sniff(Array("GIF87a....".utf8)) == .gif)
        #expect(try ImageFileType.sniff([0, 0, 0, 0x10] + Array("ftypavif".utf8) + [0, 0, 0, 0]) == .avif)
        #expect(try ImageFileType.sniff([0, 0, 0, 0x10] + Array("ftypheic".utf8) + [0, 0, 0, 0]) == .heic)
        // BMP: `BM` and a DIB header size that exists (40 here); ICO and CUR: a directory with entries.
        #expect(try ImageFileType.sniff(Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0]) == .bmp)
        #expect(try ImageFileType.sniff([0, 0, 1, 0, 1, 0]) == .ico)
        #expect(try ImageFileType.sniff([0, 0, 2, 0, 3, 0]) == .ico)
        // JPEG XL: a bare codestream and the container.
        #expect(try ImageFileType.sniff([0xFF, 0x0A, 0, 0]) == .jxl)
        #expect(try ImageFileType.sniff([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) == .jxl)
        // TIFF, both byte orders, and BigTIFF.
        #expect(try ImageFileType.sniff([0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]) == .tiff)
        #expect(try ImageFileType.sniff([0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]) == .tiff)
        #expect(try ImageFileType.sniff([0x49, 0x49, 0x2B, 0x00, 8, 0, 0, 0]) == .tiff)
    }

    static let unsupported: [([UInt8], String)] = {
        [([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A], "JPEG 2000")]
    }()

    @Test(arguments: unsupported)
    func refusesRecognisedButUnsupportedFormats(bytes: [UInt8], name: String) {
        #expect(throws: CodecError.unsupportedFormat(name)) { try ImageFileType.sniff(bytes) }
    }

    @Test func refusesEverythingElse() {
        #expect(throws: CodecError.unknownFormat) { try ImageFileType.sniff([UInt8]()) }
        #expect(throws: CodecError.unknownFormat) { try ImageFileType.sniff(Array("hello world".utf8)) }
        #expect(throws: CodecError.unknownFormat) { try ImageFileType.sniff([0xFF, 0xD8]) } // too short for JPEG
        // `BM` text, and an icon directory of no entries, are not images.
        #expect(throws: CodecError.unknownFormat) { try ImageFileType.sniff(Array("BM is not a bitmap header".utf8)) }
        #expect(throws: CodecError.unknownFormat) { try ImageFileType.sniff([0, 0, 1, 0, 0, 0]) }
    }

    @Test func aFileNameNeverDecides() throws {
        // A PNG called photo.jpg is a PNG: sniffing looks only at bytes.
        let png = TestPNG.make(width: 1, height: 1, bitDepth: 8, colorType: 0) { _, _ in [0] }
        #expect(try ImageDecoder.info(of: png).fileType == .png)
    }
}
