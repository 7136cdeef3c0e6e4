import Foundation

/// Hostile documents made at test time (a few lines each), shared by the codec and server tests.
public enum HostileDocuments {
    /// librsvg 2.54 panics on this kernel (nalgebra's "dimension mismatch"): an abort.
    public static let convolution = Data("""
        <svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><filter id="f">\
        <feConvolveMatrix order="22" kernelMatrix="\(Array(repeating: "1", count: 484).joined(separator: " "))"/></filter>\
        <rect width="100" height="100" fill="red" filter="url(#f)"/></svg>
        """.utf8)
    /// A selector nested 3,000 deep: librsvg's CSS parser overflows its stack (SIGSEGV).
    public static let nestedSelectors = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><style>"
        + String(repeating: ":not(", count: 3000) + "a" + String(repeating: ")", count: 3000)
        + "{fill:red}</style><rect width=\"100\" height=\"100\"/></svg>").utf8)
    /// A font Pango cannot make.
    public static let hugeFont = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><text font-size="1e9" y="50">A</text></svg>"#.utf8)
    /// Turbulence by the billion octaves: a render that never ends.
    public static let octaves = Data("""
        <svg xmlns="http://www.w3.org/2000/svg" width="500" height="500"><filter id="t">\
        <feTurbulence baseFrequency="0.05" numOctaves="1000000000"/></filter><rect width="500" height="500" filter="url(#t)"/></svg>
        """.utf8)
    /// 400,000 glyphs of text.
    public static let text = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><text y=\"50\">"
        + String(repeating: "W", count: 400_000) + "</text></svg>").utf8)
    /// Masks nested in masks, each the size of the render.
    public static let masks: Data = {
        var body = "<rect width=\"100\" height=\"100\" fill=\"white\"/>"
        var defs = ""
        for index in 0..<100 {
            defs += "<mask id=\"m\(index)\">\(index == 0 ? body : "<rect width=\"100\" height=\"100\" fill=\"white\" mask=\"url(#m\(index - 1))\"/>")</mask>"
        }
        body = "<rect width=\"100\" height=\"100\" mask=\"url(#m99)\"/>"
        return Data("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><defs>\(defs)</defs>\(body)</svg>".utf8)
    }()
    /// Within every budget, but slow: 150 filter primitives of 10 octaves each (over a minute of
    /// CPU at 2000×2000).
    public static let slow = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><filter id=\"f\" x=\"0\" y=\"0\" width=\"1\" height=\"1\">"
        + (0..<150).map { "<feTurbulence baseFrequency=\"0.0\($0 % 9 + 1)\" numOctaves=\"10\" seed=\"\($0)\" result=\"t\($0)\"/>" }.joined()
        + "</filter><rect width=\"100\" height=\"100\" filter=\"url(#f)\"/></svg>").utf8)
    /// A plain drawing: a blue rectangle on the left half.
    public static let plain = Data(##"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><rect width="50" height="50" fill="#00f"/></svg>"##.utf8)

    /// A PDF whose page draws a form that draws the next one 8 times, 12 deep (8^12 fills).
    public static let nestedForms: Data = {
        var objects = [Data("<< /Type /Catalog /Pages 2 0 R >>".utf8), Data("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8),
                       Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /XObject << /X 5 0 R >> >> >>".utf8),
                       stream("/X Do")]
        for level in 0..<12 {
            if level < 11 {
                objects.append(stream(Array(repeating: "q 0.9 0 0 0.9 1 1 cm /X Do Q", count: 8).joined(separator: " "),
                                      extra: "/Type /XObject /Subtype /Form /BBox [0 0 200 200] /Resources << /XObject << /X \(6 + level) 0 R >> >>"))
            } else {
                objects.append(stream("0 0 1 rg 0 0 200 200 re f", extra: "/Type /XObject /Subtype /Form /BBox [0 0 200 200]"))
            }
        }
        return pdf(objects)
    }()
    /// A page of two million `q` (saved graphics states, never restored).
    public static let saves = pdf([Data("<< /Type /Catalog /Pages 2 0 R >>".utf8), Data("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8),
                            Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>".utf8),
                            stream(String(repeating: "q ", count: 2_000_000), compressed: true)])

    /// Two million unrestored `q` spread over 2,100 content streams of 999 each: under the PDF
    /// budget's per-stream depth (a gap `docs/security.md` names), so only the worker's memory
    /// limit stops poppler's growing stack of graphics states.
    public static let savesAcrossStreams: Data = {
        let streams = 2100
        var objects = [Data("<< /Type /Catalog /Pages 2 0 R >>".utf8), Data("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8),
                       Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents [\((0..<streams).map { "\(4 + $0) 0 R" }.joined(separator: " "))] >>".utf8)]
        for _ in 0..<streams { objects.append(stream(String(repeating: "q ", count: 999))) }
        return pdf(objects)
    }()

    /// A stream object: its dictionary (with `extra`) and its content, FlateDecode when `compressed`.
    public static func stream(_ content: String, extra: String = "", compressed: Bool = false) -> Data {
        let bytes = compressed ? zlibCompress(Data(content.utf8)) : Data(content.utf8)
        return Data("<< /Length \(bytes.count) \(compressed ? "/Filter /FlateDecode " : "")\(extra) >>\nstream\n".utf8) + bytes
            + Data("\nendstream".utf8)
    }

    /// A PDF file of `objects` (numbered from 1), with its cross-reference table.
    public static func pdf(_ objects: [Data]) -> Data {
        var out = Data("%PDF-1.4\n".utf8)
        var offsets: [Int] = []
        for (index, body) in objects.enumerated() {
            offsets.append(out.count)
            out += Data("\(index + 1) 0 obj\n".utf8) + body + Data("\nendobj\n".utf8)
        }
        let xref = out.count
        out += Data("xref\n0 \(objects.count + 1)\n0000000000 65535 f \n".utf8)
        for offset in offsets { out += Data(String(format: "%010d 00000 n \n", offset).utf8) }
        out += Data("trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }

    /// zlib's format (RFC 1950) around deflate's stored blocks: valid FlateDecode that any
    /// inflater reads, made without a compression library (the 4 MB page stays 4 MB here; the
    /// budget is what refuses it, not its file size).
    public static func zlibCompress(_ data: Data) -> Data {
        var out = Data([0x78, 0x01])
        let bytes = [UInt8](data)
        var index = 0
        repeat {
            let count = min(65_535, bytes.count - index)
            let last: UInt8 = index + count >= bytes.count ? 1 : 0
            out.append(last)
            out.append(UInt8(count & 0xFF)); out.append(UInt8(count >> 8))
            out.append(UInt8(~count & 0xFF)); out.append(UInt8((~count >> 8) & 0xFF))
            out.append(contentsOf: bytes[index..<(index + count)])
            index += count
        } while index < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        let adler = (b << 16) | a
        out.append(contentsOf: [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)])
        return out
    }
}

