@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// SVG served as SVG: the cleaned document draws what the source draws, and a hostile one comes
/// out with no script, handler, foreign object or outside reference — read back by Python's own
/// XML parser — having loaded nothing (a loopback server sees no request, a file's text never
/// appears); bombs are refused within the limits.
@Suite("SVG output", .timeLimit(.minutes(2)))
struct SVGSanitizerTests {
    static let python = BMPAndICOTests.python

    /// Every element (namespace URI and local name) and attribute of `document`, as Python's
    /// ElementTree reads it, one per line: `E <uri> <name>` then `A <uri> <name> <value>`.
    static func parsedBack(_ document: Data) throws -> [String] {
        let directory = try TemporaryDirectory()
        try document.write(to: directory.child("out.svg"))
        let program = """
            import sys
            import xml.etree.ElementTree as ET
            def split(tag):
                return tag[1:].split("}", 1) if tag.startswith("{") else ["", tag]
            out = []
            for element in ET.parse(sys.argv[1]).getroot().iter():
                uri, name = split(element.tag)
                out.append(f"E {uri} {name}")
                for key, value in element.attrib.items():
                    auri, aname = split(key)
                    out.append(f"A {auri} {aname} {value}".replace("\\n", " "))
            open(sys.argv[2], "w").write("\\n".join(out))
            """
        try #require(FileManager.default.isExecutableFile(atPath: python), "no \(python): run `make deps`")
        #expect(try runTool(python, ["-c", program, directory.child("out.svg").path, directory.child("parsed.txt").path]), "Python parsed it")
        return try String(contentsOf: directory.child("parsed.txt"), encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// What a browser must never find in a served SVG.
    static func dangers(_ lines: [String]) -> [String] {
        lines.filter { line in
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            if parts[0] == "E" {
                return parts[1] != "http://www.w3.org/2000/svg" || ["script", "foreignObject", "iframe"].contains(parts[2])
            }
            let name = parts[2].lowercased(), value = parts.count > 3 ? parts[3].lowercased().trimmingCharacters(in: .whitespaces) : ""
            if name.hasPrefix("on") || (parts[1] == "http://www.w3.org/XML/1998/namespace" && name == "base") { return true }
            if name == "href" { return !(value.hasPrefix("#") || value.hasPrefix("data:image/png")) }
            return value.contains("javascript:") || (value.contains("url(") && !value.contains("url(#")) || value.contains("@import")
        }
    }

    /// An Inkscape-style drawing (its own namespaces, metadata, comments, a DTD entity, a
    /// gradient, a `use`, a class style, an embedded PNG) renders the same cleaned as not.
    @Test func aCleanedDrawingDrawsWhatTheSourceDraws() throws {
        let png = try ImageEncoder.encode(paintedOpaque(width: 4, height: 4) { _, _ in [0, 200, 0] }, as: .png()).base64EncodedString()
        let source = Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE svg [ <!ENTITY accent "#c03"> ]>
            <!-- Created with a drawing program -->
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
                 xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape"
                 width="120" height="60" viewBox="0 0 120 60" sodipodi:docname="drawing.svg">
              <sodipodi:namedview inkscape:zoom="2"/>
              <metadata><title>a drawing</title></metadata>
              <defs>
                <linearGradient id="g"><stop offset="0" stop-color="#00f"/><stop offset="1" stop-color="&accent;"/></linearGradient>
                <rect id="box" width="20" height="20"/>
                <style>.dark { fill: #222 }</style>
              </defs>
              <rect width="120" height="60" fill="url(#g)" inkscape:label="background"/>
              <use xlink:href="#box" x="10" y="10" class="dark"/>
              <use href="#box" x="40" y="10" style="fill: &accent;"/>
              <image x="80" y="10" width="20" height="20" href="data:image/png;base64,\(png)"/>
            </svg>
            """.utf8)
        let cleaned = try SVGSanitizer.sanitize(source)
        let lines = try Self.parsedBack(cleaned)
        #expect(Self.dangers(lines).isEmpty, "\(Self.dangers(lines))")
        #expect(!lines.contains { $0.contains("sodipodi") || $0.contains("inkscape") })
        #expect(lines.contains("E http://www.w3.org/2000/svg linearGradient") && lines.contains("A  stop-color #c03"))
        let original = try ImageDecoder.decode(source, covering: (240, 120)), again = try ImageDecoder.decode(cleaned, covering: (240, 120))
        #expect(original.width == 240 && again.width == 240)
        #expect(TIFFTests.meanDifference(again, Data(BMPAndICOTests.pixels(original).joined())) < 0.01)
        #expect(again.pixel(x: 180, y: 40)[1] > 150, "the embedded PNG is drawn")
    }

    /// Everything that runs or loads goes; a file named by an external entity and a loopback
    /// server named by an entity, a DTD, an image, a style sheet and an XInclude see no read (a
    /// document that declares an external entity, used or not, is refused).
    @Test func aHostileDocumentComesOutInert() async throws {
        let directory = try TemporaryDirectory()
        try Data("SECRET-TEXT-42".utf8).write(to: directory.child("secret.txt"))
        let origin = Origin()
        origin.serve("/x", .file(Data("LOADED".utf8)))
        try await origin.run { base in
            let url = base.absoluteString + "x"
            let source = Data("""
                <?xml version="1.0"?>
                <?xml-stylesheet href="\(url)" type="text/css"?>
                <!DOCTYPE svg SYSTEM "\(url)" [
                  <!ENTITY fine "safe-text">
                  <!-- DECLARES -->
                ]>
                <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xi="http://www.w3.org/2001/XInclude"
                     xmlns:ev="http://www.w3.org/2001/xml-events" xmlns:html="http://www.w3.org/1999/xhtml"
                     width="50" height="50" onload="alert(1)" xml:base="\(url)">
                  <script>alert(2)</script>
                  <script xlink:href="\(url)"/>
                  <SCRIPT>alert(3)</SCRIPT>
                  <html:script>alert(4)</html:script>
                  <foreignObject width="50" height="50"><html:iframe src="\(url)"/></foreignObject>
                  <style>@import url("\(url)"); rect { fill: blue }</style>
                  <style>rect { background: \\75rl(\(url)) }</style>
                  <text>&fine;</text>
                  <!-- USES -->
                  <rect width="10" height="10" onclick="alert(5)" ONMOUSEOVER="alert(6)" ev:event="click" fill="url(\(url)#p)"
                        style="filter: url('\(url)')"/>
                  <a href="javascript:alert(7)"><rect width="5" height="5"/></a>
                  <a xlink:href=" java&#x09;script:alert(8)"><rect width="5" height="5"/></a>
                  <image href="\(url)" width="5" height="5"/>
                  <image xlink:href="data:image/svg+xml;base64,PHN2Zy8+" width="5" height="5"/>
                  <image href="data:text/html,&lt;script&gt;alert(9)&lt;/script&gt;" width="5" height="5"/>
                  <use href="\(url)#a"/>
                  <feImage href="file:///etc/passwd"/>
                  <set attributeName="href" to="javascript:alert(10)"/>
                  <animate attributeName="xlink:href" values="javascript:alert(11)"/>
                  <animate attributeName="onbegin" values="alert(12)"/>
                  <animate attributeName="opacity" values="0;1" dur="1s"/>
                  <xi:include href="\(url)"/>
                  <!-- a comment -->
                </svg>
                """.utf8)
            let file = "file://\(directory.child("secret.txt").path)"
            for (declares, uses) in [("<!ENTITY file SYSTEM \"\(file)\">", "<text>&file;</text>"),
                                     ("<!ENTITY remote SYSTEM \"\(url)\">", "<text>&remote;</text>"),
                                     ("<!ENTITY unused PUBLIC \"-//x//y\" \"\(url)\">", ""),
                                     ("<!ENTITY % parameter SYSTEM \"\(file)\"> %parameter;", "")] {
                let using = Data(String(decoding: source, as: UTF8.self).replacingOccurrences(of: "<!-- USES -->", with: uses)
                    .replacingOccurrences(of: "<!-- DECLARES -->", with: declares).utf8)
                #expect { try SVGSanitizer.sanitize(using) } throws: { error in
                    guard case .corrupt(.svg, let reason) = error as? CodecError else { return false }
                    return reason == "the document declares an external entity (never loaded)"
                }
            }
            let cleaned = try SVGSanitizer.sanitize(source)
            #expect(origin.all.isEmpty, "the document's URLs were fetched: \(origin.all.map(\.path))")
            let text = String(decoding: cleaned, as: UTF8.self)
            #expect(!text.contains("SECRET-TEXT-42") && !text.contains("LOADED") && text.contains("safe-text"))
            #expect(!text.lowercased().contains("alert") && !text.contains("<!DOCTYPE") && !text.contains("<!--") && !text.contains("xml-stylesheet"))
            // The loopback URL (and so every reference to it) is nowhere in what is served.
            #expect(!text.contains(url) && !text.contains(base.host ?? "127.0.0.1"), "\(text)")
            let lines = try Self.parsedBack(cleaned)
            #expect(Self.dangers(lines).isEmpty, "\(Self.dangers(lines))")
            // What draws stays: the rects, the links' contents, the harmless animation.
            #expect(lines.filter { $0 == "E http://www.w3.org/2000/svg rect" }.count == 3)
            #expect(lines.contains("A  attributeName opacity") && lines.filter { $0 == "E http://www.w3.org/2000/svg a" }.count == 2)
            // And it still renders.
            #expect(try ImageDecoder.decode(cleaned).width == 50)
        }
    }

    /// A document without the SVG namespace is served with it; entity bombs, a million elements,
    /// HTML and broken XML are refused with a reason.
    @Test func bombsAndNonSVGAreRefused() throws {
        let bare = try SVGSanitizer.sanitize(Data("<svg width='4' height='4'><rect width='4' height='4'/></svg>".utf8))
        #expect(try Self.parsedBack(bare) == ["E http://www.w3.org/2000/svg svg", "A  width 4", "A  height 4", "E http://www.w3.org/2000/svg rect",
                                              "A  width 4", "A  height 4"])
        var laughs = "<?xml version=\"1.0\"?><!DOCTYPE svg [<!ENTITY a0 \"lol\">"
        for level in 1...10 { laughs += "<!ENTITY a\(level) \"" + String(repeating: "&a\(level - 1);", count: 10) + "\">" }
        laughs += "]><svg xmlns='http://www.w3.org/2000/svg'><text>&a10;</text></svg>"
        let start = ContinuousClock.now
        #expect(throws: CodecError.self) { try SVGSanitizer.sanitize(Data(laughs.utf8)) }
        #expect(ContinuousClock.now - start < .seconds(20), "refused, not expanded")
        var many = "<svg xmlns='http://www.w3.org/2000/svg'>" + String(repeating: "<g/>", count: 1_000_000) + "</svg>"
        #expect(throws: CodecError.corrupt(format: .svg, reason: "more than 100000 elements (the limit)")) { try SVGSanitizer.sanitize(Data(many.utf8)) }
        many = "<svg xmlns='http://www.w3.org/2000/svg'>" + String(repeating: "<g/>", count: 300) + "</svg>"
        #expect(throws: CodecError.corrupt(format: .svg, reason: "more than 200 elements (the limit)")) {
            try SVGSanitizer.sanitize(Data(many.utf8), limits: configured(DecodingLimits()) { $0.maxVectorElements = 200 })
        }
        #expect(throws: CodecError.corrupt(format: .svg, reason: "not an SVG document (its root is <html>)")) {
            try SVGSanitizer.sanitize(Data("<html><svg xmlns='http://www.w3.org/2000/svg'/></html>".utf8))
        }
        #expect { try SVGSanitizer.sanitize(Data("<svg xmlns='http://www.w3.org/2000/svg'><g></svg>".utf8)) } throws: { error in
            guard case .corrupt(.svg, let reason) = error as? CodecError else { return false }
            return reason.hasPrefix("not well-formed XML")
        }
    }
}

extension SVGSanitizerTests {
    /// Tricks that split or hide what the checks look for: a style sheet whose `url(` or
    /// `@import` is cut by a child element, an animation whose real target hides behind a
    /// namespaced decoy or whose link is the second entry of its values, an undeclared prefix,
    /// names in upper case (live when the SVG is inlined in HTML) and an empty root namespace.
    @Test func splitAndDisguisedReferencesDoNotSurvive() throws {
        let evil = "https://evil.example/p"
        let documents = [
            "<style>rect{fill:u<script>-</script>rl(\(evil))}</style>",
            "<style>@im<script>x</script>port \"\(evil).css\";</style>",
            "<style>@im<g>x</g>port \"\(evil).css\";</style>",
            "<a><animate xlink:attributeName=\"x\" attributeName=\"href\" values=\"#a;javascript:alert(1)\" dur=\"1s\"/><text>t</text></a>",
            "<image><set xlink:attributeName=\"x\" attributeName=\"href\" to=\"\(evil).png\"/></image>",
            "<a><animate attributeName=\"fill\" values=\"red;javascript:alert(1)\"/><set attributeName=\"HREF\" to=\"\(evil)\"/></a>",
            "<STYLE>@import \"\(evil).css\";</STYLE><SET attributeName=\"href\" to=\"\(evil)\"/><image HREF=\"\(evil).png\"/>",
        ]
        for body in documents {
            let source = "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\(body)<rect width=\"5\" height=\"5\"/></svg>"
            let text = String(decoding: try SVGSanitizer.sanitize(Data(source.utf8)), as: UTF8.self)
            #expect(!text.contains("evil.example") && !text.contains("javascript") && !text.lowercased().contains("import"), "\(body) → \(text)")
            #expect(text.contains("<rect"), "\(body): what draws stays")
        }
        // An undeclared prefix, and a root whose default namespace is declared empty: refused.
        for source in ["<svg xmlns=\"http://www.w3.org/2000/svg\"><image xlink:href=\"\(evil).png\"/></svg>", "<svg><x:script>alert(1)</x:script></svg>"] {
            #expect { try SVGSanitizer.sanitize(Data(source.utf8)) } throws: { error in
                guard case .corrupt(.svg, let reason) = error as? CodecError else { return false }
                return reason.hasPrefix("not well-formed XML (namespaces)")
            }
        }
        #expect(throws: CodecError.corrupt(format: .svg, reason: "not an SVG document (its root declares an empty namespace)")) {
            try SVGSanitizer.sanitize(Data("<svg xmlns=\"\"><rect/></svg>".utf8))
        }
    }
}
