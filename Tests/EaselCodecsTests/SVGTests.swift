@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// SVG through librsvg: sniffed from its text, sized from width/height or the viewBox, rendered
/// at the size asked for (sharp at 64 and at 2048 pixels, as `rsvg-convert` renders it), never
/// reading a file or URL it names, and refused past its limits.
@Suite("SVG", .timeLimit(.minutes(2)))
struct SVGTests {
    /// 100×50: white, a black rectangle over x 25–75 and y 10–40, a red circle.
    static let drawing = Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a test drawing -->
        <svg xmlns="http://www.w3.org/2000/svg" width="100" height="50" viewBox="0 0 100 50">
          <rect width="100" height="50" fill="#fff"/>
          <rect x="25" y="10" width="50" height="30" fill="#000"/>
          <circle cx="90" cy="40" r="6" fill="#f00"/>
        </svg>
        """.utf8)

    @Test func svgIsToldFromItsTextAndHTMLIsNot() throws {
        for text in ["<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "\u{FEFF}  <?xml version=\"1.0\"?>\n<svg>",
                     "<!-- c --><!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x\">\n<svg width='1'>"] {
            #expect(try ImageFileType.sniff(Array(text.utf8)) == .svg, "\(text)")
        }
        // (XML is case-sensitive: `<SVG>` is not an SVG root, as librsvg agrees.)
        for text in ["<!DOCTYPE html><html><svg></svg></html>", "<svgfoo>", "<?xml version=\"1.0\"?><feed/>", "<html><body><svg>", "<SVG width='1'>"] {
            #expect(throws: CodecError.unknownFormat) { try ImageFileType.sniff(Array(text.utf8)) }
        }
    }

    @Test func theSizeComesFromWidthAndHeightElseTheViewBox() throws {
        let info = try ImageDecoder.info(of: Self.drawing)
        #expect(info.fileType == .svg && info.width == 100 && info.height == 50 && info.hasAlpha && info.isVector)
        let viewBoxOnly = Data("<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 30.5 20'><rect width='30' height='20'/></svg>".utf8)
        #expect(try ImageDecoder.info(of: viewBoxOnly).width == 31 && (try ImageDecoder.info(of: viewBoxOnly).height) == 20)
        // Units: 1in is 96 px.
        let inches = Data("<svg xmlns='http://www.w3.org/2000/svg' width='1in' height='0.5in'/>".utf8)
        #expect(try ImageDecoder.info(of: inches).width == 96)
        // Neither: a typed error (there is no size to render at).
        #expect(throws: CodecError.corrupt(format: .svg, reason: "the document has neither a size nor a viewBox")) {
            try ImageDecoder.info(of: Data("<svg xmlns='http://www.w3.org/2000/svg'><rect width='5' height='5'/></svg>".utf8))
        }
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: Data("<svg xmlns='http://www.w3.org/2000/svg'><rect".utf8)) }
    }

    /// The column where row `y` turns from white to black (its first pixel under 128).
    static func firstDark(_ bitmap: Bitmap, row y: Int) -> Int? {
        bitmap.withUnsafeBytes { p in (0..<bitmap.width).first { p[y * bitmap.rowBytes + $0 * 4] < 128 } }
    }

    @Test func aVectorIsRenderedAtTheSizeAskedForAndMatchesRsvgConvert() throws {
        let directory = try TemporaryDirectory()
        try Self.drawing.write(to: directory.child("drawing.svg"))
        let info = try ImageDecoder.info(of: Self.drawing)
        for width in [64, 2048] {
            let height = width / 2
            // Covering (width, height): rendered there, not at 100×50 and resized.
            #expect(ImageDecoder.decodedSize(of: info, covering: (width, height)) == (width, height))
            let bitmap = try ImageDecoder.decode(Self.drawing, covering: (width, height))
            #expect(bitmap.width == width && bitmap.height == height)
            // The rectangle's left edge within a pixel of the vector's (x = 25 % of the width).
            let edge = try #require(Self.firstDark(bitmap, row: height / 2))
            #expect(abs(edge - width / 4) <= 1, "\(width): edge at \(edge)")
            // And the same pixels as librsvg's own tool, to within two levels on average.
            let png = directory.child("rsvg-\(width).png")
            #expect(try runTool("/usr/bin/rsvg-convert", ["-w", "\(width)", "-h", "\(height)", "-o", png.path, directory.child("drawing.svg").path]),
                    "rsvg-convert ran (librsvg2-bin: run `make deps`)")
            let reference = try ImageDecoder.decode(try Data(contentsOf: png))
            var total = 0
            bitmap.withUnsafeBytes { a in
                reference.withUnsafeBytes { b in
                    for y in 0..<height { for x in 0..<(width * 4) { total += abs(Int(a[y * bitmap.rowBytes + x]) - Int(b[y * reference.rowBytes + x])) } }
                }
            }
            #expect(Double(total) / Double(width * height * 4) <= 2)
        }
        // Covering a size exactly where floating point overshoots (11 × 100/11): that size, not one more.
        let eleven = try ImageDecoder.info(of: Data("<svg xmlns='http://www.w3.org/2000/svg' width='11' height='11'/>".utf8))
        #expect(ImageDecoder.decodedSize(of: eleven, covering: (100, 100)) == (100, 100))
        // A gravity in source pixels (thumbor's focal points) plans at the intrinsic size, where
        // its coordinates are.
        #expect(Resize(width: 50, height: 50, mode: .fill, gravity: .focalPixel(x: 10, y: 10)).minimumSourceSize(of: info) == (100, 50))
        // Without a size asked for: the intrinsic size.
        #expect(try ImageDecoder.decode(Self.drawing).width == 100)
        // The planning size of a small vector is large (a resize of it is planned at the box).
        #expect(info.planningWidth == ImageInfo.vectorPlanningSide && info.planningHeight == ImageInfo.vectorPlanningSide / 2)
    }

    @Test func noFileAndNoURLItNamesIsEverRead() async throws {
        // A red PNG in a file and on a loopback server: the document names both, and neither
        // may be read (no request; no red in the output).
        let directory = try TemporaryDirectory()
        let red = try ImageEncoder.encode(paintedOpaque(width: 8, height: 8) { _, _ in [255, 0, 0] }, as: .png())
        try red.write(to: directory.child("secret.png"))
        try Data("<svg xmlns='http://www.w3.org/2000/svg' width='8' height='8'><rect width='8' height='8' fill='red'/></svg>".utf8)
            .write(to: directory.child("part.svg"))
        let origin = Origin()
        origin.serve("/red.png", .file(red))
        origin.serve("/style.css", .file(Data("rect { fill: red }".utf8)))
        try await origin.run { base in
            let document = """
                <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
                     xmlns:xi="http://www.w3.org/2001/XInclude" width="40" height="10">
                  <style>@import url("\(base.absoluteString)style.css");</style>
                  <rect width="40" height="10" fill="#00f"/>
                  <image x="0" width="8" height="8" href="\(base.absoluteString)red.png"/>
                  <image x="8" width="8" height="8" xlink:href="file://\(directory.child("secret.png").path)"/>
                  <image x="16" width="8" height="8" href="secret.png"/>
                  <use x="24" href="file://\(directory.child("part.svg").path)#x"/>
                  <xi:include href="file://\(directory.child("part.svg").path)"/>
                </svg>
                """
            let bitmap = try ImageDecoder.decode(Data(document.utf8))
            #expect(origin.all.isEmpty, "the document's URLs were fetched: \(origin.all.map(\.path))")
            let reds = bitmap.withUnsafeBytes { p in
                (0..<bitmap.height).flatMap { y in (0..<bitmap.width).map { (y, $0) } }.filter { y, x in
                    let at = y * bitmap.rowBytes + x * 4
                    return p[at] > 200 && p[at + 1] < 50 && p[at + 2] < 50
                }.count
            }
            #expect(reds == 0, "\(reds) red pixels: something the document names was read")
        }
    }

    @Test func bombsAreRefusedWithinTheLimits() throws {
        // A million elements: refused by counting, before librsvg parses anything.
        var many = "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'>"
        many += String(repeating: "<g/>", count: 1_000_000) + "</svg>"
        #expect(throws: CodecError.corrupt(format: .svg, reason: "more than 100000 elements (the limit)")) {
            try ImageDecoder.info(of: Data(many.utf8))
        }
        // A huge canvas: a vector has no pixels of its own, so it is read, and rendered small
        // when asked small; rendered whole, it is refused by the pixel limit before a pixel is
        // allocated (its render stops at 32767 a side).
        let huge = Data("<svg xmlns='http://www.w3.org/2000/svg' width='100000' height='100000'><rect width='9' height='9'/></svg>".utf8)
        #expect(try ImageDecoder.info(of: huge).width == 100_000)
        #expect(try ImageDecoder.decode(huge, covering: (256, 256)).width == 256)
        #expect(throws: CodecError.tooManyPixels(width: 32767, height: 32767, limit: DecodingLimits.default.maxPixels)) {
            try ImageDecoder.decode(huge)
        }
        // A small one asked to cover a huge size: enlarged only to 4096² pixels (a resize makes
        // the rest), and never past cairo's 32767 a side, however thin.
        let info = try ImageDecoder.info(of: Self.drawing)
        let big = try ImageDecoder.decode(Self.drawing, info: info, covering: (20_000, 10_000))
        #expect(big.width * big.height <= VectorRender.maxRenderPixels + big.width + big.height && abs(big.width - 2 * big.height) <= 1)
        let thin = Data("<svg xmlns='http://www.w3.org/2000/svg' width='1' height='40000'><rect width='1' height='40000'/></svg>".utf8)
        #expect(try ImageDecoder.decode(thin, covering: (256, 256)).height == VectorRender.maxRenderSide)
        // An embedded PNG whose header says 20000×20000 (librsvg would decode it whole: 1.5 MB
        // of document took 2.7 GB): refused from its header, as a file would be; as would one
        // Easel cannot read the header of, and embedded images over the pixel limit together.
        var bomb = [UInt8](try ImageEncoder.encode(paintedOpaque(width: 4, height: 4) { _, _ in [1, 2, 3] }, as: .png()))
        bomb.replaceSubrange(16..<24, with: [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20])  // IHDR: 20000×20000 (CRC left wrong: the header is read first)
        func document(_ images: [String]) -> Data {
            Data(("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'>"
                  + images.map { "<image width='10' height='10' href='\($0)'/>" }.joined() + "</svg>").utf8)
        }
        let bombURL = "data:image/png;base64," + Data(bomb).base64EncodedString()
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: document([bombURL])) }
        do { _ = try ImageDecoder.info(of: document([bombURL])) } catch let error as CodecError {
            #expect(error.description.contains("an embedded image") && error.description.contains("20000"), "\(error)")
        }
        // However the URL is written, as librsvg reads it: character references, any case, tabs
        // inside, an entity of the internal subset, text/plain (which librsvg sniffs).
        let base64 = Data(bomb).base64EncodedString()
        for spelling in ["&#100;ata:image/png;base64,", "DATA:image/PNG;base64,", "d&#9;ata:image/png;base64,", "&#x64;&#x61;ta:image/png ; base64,",
                         "data:text/plain;charset=US-ASCII;base64,", "data:;base64,"] {
            #expect(throws: CodecError.self, "\(spelling)") { try ImageDecoder.info(of: document([spelling + base64])) }
        }
        let entity = Data(("<!DOCTYPE svg [<!ENTITY d 'd'><!ENTITY png 'image/png'>]><svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'>"
                           + "<image width='10' height='10' href='&d;ata:&png;;base64,\(base64)'/></svg>").utf8)
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: entity) }
        // Percent-encoded binary (not UTF-8) is decoded to its bytes.
        let percent = bomb.map { String(format: "%%%02X", $0) }.joined()
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: document(["data:image/png," + percent])) }
        // An embedded SVG is drawn at its own size: held to the pixel limits, and it may not
        // embed images of its own.
        let bigSVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='20000' height='20000'/%3E"
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: document([bigSVG.replacingOccurrences(of: "'", with: "%22")])) }
        let nested = "data:image/svg+xml;base64," + Data(document([bombURL])).base64EncodedString()
        #expect(throws: CodecError.corrupt(format: .svg, reason: "an embedded SVG embeds images of its own")) { try ImageDecoder.info(of: document([nested])) }
        // Declared as something else, sniffed as an image: checked too.
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: document(["data:application/octet-stream;base64," + Data(bomb).base64EncodedString()])) }
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: document(["data:image/x-portable-pixmap;base64,UDYKMzAwMDAgMzAwMDAKMjU1Cg=="])) }
        let fine = "data:image/png;base64," + (try ImageEncoder.encode(paintedOpaque(width: 600, height: 600) { _, _ in [1, 2, 3] }, as: .png())).base64EncodedString()
        let million = DecodingLimits(maxPixels: 1_000_000)
        #expect(try ImageDecoder.info(of: document([fine, fine]), limits: million).width == 10)
        #expect(throws: CodecError.corrupt(format: .svg, reason: "embedded images of more than 1000000 pixels in all (the limit)")) {
            try ImageDecoder.info(of: document([fine, fine, fine]), limits: million)
        }
        // Entity expansion ("billion laughs"): libxml2's limits refuse it.
        var laughs = "<?xml version='1.0'?><!DOCTYPE svg [<!ENTITY a0 'ha'>"
        for level in 1...10 { laughs += "<!ENTITY a\(level) '" + String(repeating: "&a\(level - 1);", count: 10) + "'>" }
        laughs += "]><svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><text>&a10;</text></svg>"
        do {
            _ = try ImageDecoder.decode(Data(laughs.utf8))
            Issue.record("a document of 10^10 characters of entities was rendered")
        } catch let error as CodecError {
            guard case .corrupt(.svg, _) = error else { Issue.record("\(error)"); return }
        }
    }
}
