import Foundation

/// The images an SVG embeds as `data:` URLs, found as librsvg would read them: librsvg decodes
/// them whole through gdk-pixbuf, with no limit of its own (a 1.5 MB document holding a 20000²
/// PNG took 2.7 GB), so each must be an image whose header Easel reads, within the limits.
///
/// The document is first read the way XML and the URL parser read an attribute: character
/// references decoded, the internal DTD subset's entities expanded (within a byte budget), tabs
/// and line breaks dropped, the scheme compared without case; a payload is percent-decoded to
/// bytes and base64-decoded forgivingly. A payload with no type, an image type or `text/plain`
/// (which librsvg sniffs) must be readable; one of another type is checked when its bytes are an
/// image. An embedded SVG may not embed images itself (no recursion).
enum SVGEmbeddedImages {
    static func corrupt(_ reason: String) -> CodecError { .corrupt(format: .svg, reason: reason) }

    /// Checks every embedded image against `limits` (all of them together within `maxPixels`).
    static func check(_ document: [UInt8], limits: DecodingLimits, nested: Bool = false) throws(CodecError) {
        let text = try normalized(document, budget: document.count * 4 + (1 << 20))
        var pixels = 0
        for url in dataURLs(text) {
            let type = try? ImageFileType.sniff(url.payload)
            guard url.declaredImage || type != nil else { continue }
            if nested { throw corrupt("an embedded SVG embeds images of its own") }
            // (gdk-pixbuf draws no video: one is refused before FFmpeg reads it.)
            if type?.isVideo == true { throw corrupt("an embedded video") }
            // An embedded SVG first: it may embed nothing, so reading its header below (which
            // checks its own embedded images) never goes deeper.
            if type == .svg { try check(url.payload, limits: limits, nested: true) }
            let info: ImageInfo
            do { info = try ImageDecoder.info(of: Data(url.payload), limits: limits) } catch let error as CodecError {
                throw corrupt("an embedded image: \(error)")
            } catch {
                throw corrupt("an embedded image: \(error)")
            }
            // gdk-pixbuf draws an embedded vector at its own size: held to the pixel limits too.
            do { try limits.check(width: info.width, height: info.height) } catch { throw corrupt("an embedded image: \(error)") }
            pixels += info.pixelCount
            guard pixels <= limits.maxPixels else {
                throw corrupt("embedded images of more than \(limits.maxPixels) pixels in all (the limit)")
            }
        }
    }

    /// The document with character references decoded, the internal subset's general entities
    /// expanded (references to unknown ones left as they are) and tabs, carriage returns and
    /// line feeds removed; at most `budget` bytes.
    static func normalized(_ bytes: [UInt8], budget: Int) throws(CodecError) -> [UInt8] {
        var entities: [String: [UInt8]] = ["amp": [0x26], "lt": [0x3C], "gt": [0x3E], "quot": [0x22], "apos": [0x27]]
        var body = bytes[...]
        if let subset = internalSubset(bytes) {
            for (name, value) in declarations(bytes[subset]) where entities[name] == nil { entities[name] = value }
            body = bytes[subset.upperBound...]
        }
        var output: [UInt8] = []
        output.reserveCapacity(min(body.count, budget))
        func append(_ text: ArraySlice<UInt8>, depth: Int) throws(CodecError) {
            var index = text.startIndex
            while index < text.endIndex {
                let byte = text[index]
                if byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1; continue }
                guard byte == 0x26, let end = text[index...].prefix(72).firstIndex(of: 0x3B) else {
                    output.append(byte)
                    index += 1
                    guard output.count <= budget else { throw corrupt("entity expansion past \(budget) bytes") }
                    continue
                }
                let name = String(decoding: text[(index + 1)..<end], as: UTF8.self)
                if name.hasPrefix("#"), let scalar = characterReference(name) {
                    // (A tab or line break written as a reference is dropped by the URL parser too.)
                    if ![0x09, 0x0A, 0x0D].contains(scalar.value) { output += Array(String(Character(scalar)).utf8) }
                } else if let value = entities[name], depth < 8 {
                    try append(value[...], depth: depth + 1)
                } else {
                    output += text[index...end]
                }
                guard output.count <= budget else { throw corrupt("entity expansion past \(budget) bytes") }
                index = end + 1
            }
        }
        try append(body, depth: 0)
        return output
    }

    /// `#65` or `#x41` as a Unicode scalar.
    static func characterReference(_ name: String) -> Unicode.Scalar? {
        let digits = name.dropFirst()
        let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
        return value.flatMap(Unicode.Scalar.init)
    }

    /// The range of the internal DTD subset (`<!DOCTYPE … [` to `]`), if the document has one.
    static func internalSubset(_ bytes: [UInt8]) -> Range<Int>? {
        let doctype = Array("<!DOCTYPE".utf8)
        guard let start = firstIndex(of: doctype, in: bytes[...]) else { return nil }
        var index = start + doctype.count
        while index < bytes.count, bytes[index] != 0x5B, bytes[index] != 0x3E { index += 1 }
        guard index < bytes.count, bytes[index] == 0x5B else { return nil }
        // The subset ends at the first `]` outside a quoted value.
        var quote: UInt8?
        var end = index + 1
        while end < bytes.count {
            let byte = bytes[end]
            if let open = quote { if byte == open { quote = nil } } else if byte == 0x22 || byte == 0x27 { quote = byte } else if byte == 0x5D { break }
            end += 1
        }
        return (index + 1)..<min(end, bytes.count)
    }

    /// The subset's general internal entities: `<!ENTITY name "value">` (parameter entities,
    /// `%`, and external ones, `SYSTEM`/`PUBLIC`, are left out: they never reach an attribute).
    static func declarations(_ subset: ArraySlice<UInt8>) -> [(String, [UInt8])] {
        let keyword = Array("<!ENTITY".utf8)
        var found: [(String, [UInt8])] = []
        var index = subset.startIndex
        while let start = firstIndex(of: keyword, in: subset[index...]) {
            var i = start + keyword.count
            func skipSpace() { while i < subset.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(subset[i]) { i += 1 } }
            skipSpace()
            let nameStart = i
            while i < subset.endIndex, ![0x20, 0x09, 0x0A, 0x0D, 0x22, 0x27, 0x3E].contains(subset[i]) { i += 1 }
            let name = String(decoding: subset[nameStart..<i], as: UTF8.self)
            skipSpace()
            index = i
            guard name != "%", !name.isEmpty, i < subset.endIndex, subset[i] == 0x22 || subset[i] == 0x27 else { continue }
            let quote = subset[i]
            guard let close = subset[(i + 1)...].firstIndex(of: quote) else { break }
            found.append((name, Array(subset[(i + 1)..<close])))
            index = close + 1
        }
        return found
    }

    static func firstIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var index = haystack.startIndex
        while index + needle.count <= haystack.endIndex {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    struct DataURL {
        var payload: [UInt8]
        var declaredImage: Bool
    }

    /// Every `data:` URL of the normalized text (the scheme in any case), to the quote that
    /// opened it (or, unquoted, to a quote, a parenthesis, a space or `>`).
    static func dataURLs(_ text: [UInt8]) -> [DataURL] {
        var found: [DataURL] = []
        var index = 0
        let scheme = Array("data:".utf8)
        while index + scheme.count <= text.count {
            guard (text[index] | 0x20) == 0x64,
                  zip(text[index..<(index + scheme.count)], scheme).allSatisfy({ a, b in a == b || (a | 0x20) == b }) else {
                index += 1
                continue
            }
            let opener = index > 0 ? text[index - 1] : 0
            let closers: Set<UInt8> = opener == 0x22 || opener == 0x27 ? [opener] : [0x22, 0x27, 0x28, 0x29, 0x20, 0x3E]
            var end = index + scheme.count
            while end < text.count, !closers.contains(text[end]) { end += 1 }
            let url = text[(index + scheme.count)..<end]
            index = end
            guard let comma = url.firstIndex(of: 0x2C) else { continue }
            let header = String(decoding: url[url.startIndex..<comma], as: UTF8.self).lowercased().filter { $0 != " " }
            let type = header.split(separator: ";", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            var payload = percentDecoded(url[(comma + 1)...])
            if header.hasSuffix(";base64") {
                let alphabet = payload.filter { byte in
                    (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2B || byte == 0x2F
                }
                var padded = String(decoding: alphabet, as: UTF8.self)
                padded += String(repeating: "=", count: (4 - padded.count % 4) % 4)
                payload = Data(base64Encoded: padded).map { [UInt8]($0) } ?? []
            }
            found.append(DataURL(payload: payload, declaredImage: type.isEmpty || type.hasPrefix("image/") || type == "text/plain"))
        }
        return found
    }

    /// `%XX` escapes as the bytes they stand for (others as they are).
    static func percentDecoded(_ text: ArraySlice<UInt8>) -> [UInt8] {
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x41 + 10
            case 0x61...0x66: byte - 0x61 + 10
            default: nil
            }
        }
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == 0x25, index + 2 < text.endIndex, let high = hex(text[index + 1]), let low = hex(text[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(text[index])
                index += 1
            }
        }
        return output
    }
}
