import CSVG
import EaselSupport
import Foundation

/// SVG through librsvg, rendered **at the size asked for**: `info` gives the document's
/// intrinsic size (its width and height, else its viewBox), and a decode covering a size renders
/// the vector straight at the scale that covers it (never small and then enlarged). Safe by
/// construction: loaded from memory with no base URL, so librsvg opens no file and no URL
/// (`<image href>`, `xi:include`, CSS `@import`); libxml2's limits stay on; and the document's
/// elements are counted before it is parsed (`DecodingLimits.maxVectorElements`).
enum SVGCodec {
    static func corrupt(_ reason: String) -> CodecError { .corrupt(format: .svg, reason: reason) }

    static func info(_ data: Data, limits: DecodingLimits = .default) throws -> ImageInfo {
        try checkDocument(data, limits: limits)
        var width = 0.0, height = 0.0
        var fromViewBox: Int32 = 0
        var why = ""
        let result = try callShim(data, format: .svg, messageSize: EASEL_SVG_MESSAGE_SIZE) { bytes, count, message in
            let result = easel_svg_size(bytes, count, &width, &height, &fromViewBox, message)
            if result < 0 { why = cMessage(message) }
            return result
        }
        if result < 0 { throw corrupt(why) }
        // Whole pixels, at least one a side (a size past the limits is refused by them).
        func side(_ value: Double) -> Int { max(1, Int(checked: value, rounding: .up)) }
        return ImageInfo(fileType: .svg, width: side(width), height: side(height), hasAlpha: true, isGrayscale: false, isProgressive: false)
    }

    /// Elements are counted by their opening `<` (comments and declarations included): cheap, and
    /// an upper bound, so that a document of a million elements is refused before librsvg builds
    /// its tree. Then every image embedded as a `data:` URL (librsvg decodes those at full size,
    /// with no limit of its own: a 1.5 MB document holding a 20000² PNG took 2.7 GB) must be one
    /// Easel can read the header of, each within the limits and all of them together within
    /// `maxPixels`.
    static func checkDocument(_ data: Data, limits: DecodingLimits) throws(CodecError) {
        let bytes = [UInt8](data)
        let count = bytes.reduce(0) { $0 + ($1 == 0x3C ? 1 : 0) }
        guard count <= limits.maxVectorElements else {
            throw corrupt("more than \(limits.maxVectorElements) elements (the limit)")
        }
        var pixels = 0
        for (payload, declaredImage) in embeddedData(bytes) {
            // (librsvg may sniff what it is given: a payload of another declared type is checked
            // too when its bytes are an image.)
            guard declaredImage || (try? ImageFileType.sniff(payload)) != nil else { continue }
            let info: ImageInfo
            do { info = try ImageDecoder.info(of: payload, limits: limits) } catch let error as CodecError {
                throw corrupt("an embedded image: \(error)")
            } catch {
                throw corrupt("an embedded image: \(error)")
            }
            pixels += info.isVector ? 0 : info.pixelCount
            guard pixels <= limits.maxPixels else {
                throw corrupt("embedded images of more than \(limits.maxPixels) pixels in all (the limit)")
            }
        }
    }

    /// The payloads of the document's `data:` URLs (from `data:` to the quote, or in CSS
    /// `url(…)` the parenthesis, that opened it; base64 or percent-encoded), each with whether it
    /// declares an image type (or none).
    static func embeddedData(_ bytes: [UInt8]) -> [(Data, declaredImage: Bool)] {
        let marker = Array("data:".utf8)
        var found: [(Data, declaredImage: Bool)] = []
        var index = 0
        while index + marker.count <= bytes.count {
            guard bytes[index] == 0x64, bytes[index..<(index + marker.count)].elementsEqual(marker) else { index += 1; continue }
            let opener = index > 0 ? bytes[index - 1] : 0
            let closers: Set<UInt8> = opener == 0x22 ? [0x22] : opener == 0x27 ? [0x27] : [0x22, 0x27, 0x29, 0x20, 0x3E]
            var end = index + marker.count
            while end < bytes.count, !closers.contains(bytes[end]) { end += 1 }
            let url = bytes[(index + marker.count)..<end]
            index = end
            guard let comma = url.firstIndex(of: 0x2C) else { continue }
            let header = String(decoding: url[url.startIndex..<comma], as: UTF8.self).lowercased()
            let body = url[(comma + 1)...]
            let declaredImage = header.hasPrefix("image/") || header.isEmpty || header.hasPrefix(";")
            if header.hasSuffix(";base64") {
                // Entities and white space may sit inside an attribute's base64.
                let text = String(decoding: body, as: UTF8.self).replacingOccurrences(of: "&#10;", with: "")
                    .replacingOccurrences(of: "&#13;", with: "")
                found.append((Data(base64Encoded: text, options: .ignoreUnknownCharacters) ?? Data(), declaredImage))
            } else {
                let text = String(decoding: body, as: UTF8.self)
                found.append((Data((text.removingPercentEncoding ?? text).utf8), declaredImage))
            }
        }
        return found
    }

    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)?, pixelFormat: Bitmap.PixelFormat,
                       limits: DecodingLimits) throws -> Bitmap {
        try checkDocument(data, limits: limits)
        let size = VectorRender.size(of: info, covering: minimumSize)
        try limits.check(width: size.width, height: size.height)
        var bitmap = Bitmap(width: size.width, height: size.height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        try bitmap.withUnsafeMutableBytes { pixels in
            _ = try callShim(data, format: .svg, messageSize: EASEL_SVG_MESSAGE_SIZE) { bytes, count, message in
                easel_svg_render(bytes, count, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                 Int32(size.width), Int32(size.height), message)
            }
        }
        return bitmap.converted(to: pixelFormat)
    }
}
