@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// PDF through poppler: a page rendered at the size asked for, as `pdftoppm` renders it; pages
/// counted and limited; encrypted and damaged documents refused with typed errors.
@Suite("PDF", .timeLimit(.minutes(2)))
struct PDFTests {
    /// A PDF of `pages` pages of `width`×`height` points, each a filled rectangle of a colour
    /// over the left half of the page on white, written object by object with a correct xref.
    /// `encrypt` adds a standard security handler whose password is not empty; `sizes` gives the
    /// pages their own sizes (page i the i-th, the last for the rest).
    static func document(pages: Int = 1, width: Int = 200, height: Int = 100, sizes: [(Int, Int)] = [], encrypt: Bool = false) -> Data {
        var objects: [String] = []
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        let kids = (0..<pages).map { "\(3 + 2 * $0) 0 R" }.joined(separator: " ")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>")
        for page in 0..<pages {
            let (width, height) = sizes.isEmpty ? (width, height) : sizes[min(page, sizes.count - 1)]
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(width) \(height)] /Contents \(4 + 2 * page) 0 R >>")
            let gray = Double(page % 5) / 5
            let content = "\(gray) 0.2 0.8 rg 0 0 \(width / 2) \(height) re f"
            objects.append("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream")
        }
        if encrypt {
            let filler = String(repeating: "A", count: 64)
            objects.append("<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O <\(filler)> /U <\(filler)> >>")
        }
        let encryption = encrypt ? " /Encrypt \(objects.count) 0 R /ID [<0123456789ABCDEF0123456789ABCDEF> <0123456789ABCDEF0123456789ABCDEF>]" : ""
        return Data(pdfFile(objects: objects, trailer: encryption).utf8)
    }

    @Test func aPageIsRenderedAtTheSizeAskedForAsPdftoppmRendersIt() throws {
        let pdf = Self.document(pages: 3)
        let info = try ImageDecoder.info(of: pdf)
        #expect(info.fileType == .pdf && info.width == 200 && info.height == 100 && info.frameCount == 3 && info.isVector)
        // Twice the page's size: rendered there (not at 200×100 and enlarged).
        let bitmap = try ImageDecoder.decode(pdf, covering: (400, 200))
        #expect(bitmap.width == 400 && bitmap.height == 200 && bitmap.isKnownOpaque)
        // The rectangle (green 0.2) ends at the middle, to the pixel: the first white after it.
        let edge = bitmap.withUnsafeBytes { p in (0..<bitmap.width).first { p[100 * bitmap.rowBytes + $0 * 4 + 1] > 128 } }
        #expect(edge == 200)
        // poppler's own tool at 144 dpi: the same size, the same pixels within two levels.
        let directory = try TemporaryDirectory()
        try pdf.write(to: directory.child("doc.pdf"))
        #expect(try runTool("/usr/bin/pdftoppm", ["-png", "-r", "144", "-f", "1", "-l", "1", "-singlefile", directory.child("doc.pdf").path,
                                                  directory.child("page").path]), "pdftoppm ran (poppler-utils: run `make deps`)")
        let reference = try ImageDecoder.decode(try Data(contentsOf: directory.child("page.png")))
        #expect(reference.width == 400 && reference.height == 200)
        var total = 0
        bitmap.withUnsafeBytes { a in
            reference.withUnsafeBytes { b in
                for y in 0..<200 { for x in 0..<(400 * 4) { total += abs(Int(a[y * bitmap.rowBytes + x]) - Int(b[y * reference.rowBytes + x])) } }
            }
        }
        #expect(Double(total) / Double(400 * 200 * 4) <= 2)
        // Without a size asked for: the page's own (72 dpi).
        #expect(try ImageDecoder.decode(pdf).width == 200)
    }

    /// Any page, at its own size and rendered at the size asked for; one past the last is
    /// `noSuchPage` with the count. The second page as pdftoppm renders it (`-f 2`).
    @Test func anyPageIsRenderedAtItsOwnSize() throws {
        let sizes = [(200, 100), (120, 300), (50, 50)]
        let pdf = Self.document(pages: 3, sizes: sizes)
        for page in 0..<3 {
            let info = try ImageDecoder.info(of: pdf, page: page)
            #expect(info.page == page && info.frameCount == 3 && info.width == sizes[page].0 && info.height == sizes[page].1)
            let bitmap = try ImageDecoder.decode(pdf, info: info, covering: (sizes[page].0 * 2, sizes[page].1 * 2))
            #expect(bitmap.width == sizes[page].0 * 2 && bitmap.height == sizes[page].1 * 2)
            // Page i's rectangle has red i/5 (0, 51, 102), green 0.2, blue 0.8.
            let pixel = bitmap.pixel(x: 4, y: 4)
            #expect(abs(Int(pixel[0]) - page * 51) <= 1 && abs(Int(pixel[1]) - 51) <= 1 && abs(Int(pixel[2]) - 204) <= 1, "page \(page): \(pixel)")
        }
        #expect(throws: CodecError.noSuchPage(page: 3, pages: 3)) { try ImageDecoder.info(of: pdf, page: 3) }
        #expect(throws: CodecError.noSuchPage(page: 1, pages: 1)) { try ImageDecoder.info(of: Self.document(), page: 1) }
        let directory = try TemporaryDirectory()
        try pdf.write(to: directory.child("doc.pdf"))
        #expect(try runTool("/usr/bin/pdftoppm", ["-png", "-r", "144", "-f", "2", "-l", "2", "-singlefile", directory.child("doc.pdf").path,
                                                  directory.child("page").path]), "pdftoppm ran (poppler-utils: run `make deps`)")
        let reference = try ImageDecoder.decode(try Data(contentsOf: directory.child("page.png")))
        let bitmap = try ImageDecoder.decode(pdf, info: try ImageDecoder.info(of: pdf, page: 1), covering: (240, 600))
        #expect(reference.width == 240 && reference.height == 600 && bitmap.width == 240 && bitmap.height == 600)
        #expect(TIFFTests.meanDifference(bitmap, Data(BMPAndICOTests.pixels(reference).joined())) <= 2)
    }

    @Test func encryptedDamagedAndHugeDocumentsAreRefused() throws {
        #expect(throws: CodecError.unsupportedFormat("encrypted PDF (a password is needed)")) {
            try ImageDecoder.info(of: Self.document(encrypt: true))
        }
        // Ten thousand pages: refused from the page count, before a page is read.
        #expect(throws: CodecError.corrupt(format: .pdf, reason: "10000 pages (the limit is 1000)")) {
            try ImageDecoder.info(of: Self.document(pages: 10_000))
        }
        // A poster of 100000×100000 points: a thumbnail of it is rendered small; the whole page
        // is refused by the pixel limit before a pixel is allocated.
        let poster = Self.document(width: 100_000, height: 100_000)
        #expect(try ImageDecoder.decode(poster, covering: (200, 200)).width == 200)
        #expect(throws: CodecError.tooManyPixels(width: 32767, height: 32767, limit: DecodingLimits.default.maxPixels)) {
            try ImageDecoder.decode(poster)
        }
        // Truncated or damaged: a typed error.
        let whole = Self.document()
        for cut in [5, 9, 40] {
            #expect(throws: CodecError.self) { try ImageDecoder.info(of: whole.prefix(cut)) }
        }
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: Data("%PDF-1.4\nnot a document at all".utf8)) }
    }
}
