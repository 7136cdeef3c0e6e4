import CSVG
import Foundation

/// An SVG served as SVG (`f=svg`, imgproxy's `@svg`): the source document cleaned so that a
/// browser opening it runs nothing and loads nothing. What stays is what draws — SVG elements and
/// their attributes, styles, gradients, filters, references inside the document and raster
/// images embedded as `data:` URLs. What goes: `<script>`, event handlers (`on…`),
/// `<foreignObject>` and everything outside the SVG namespace, comments, processing
/// instructions, the DTD (its internal entities expanded first, within libxml2's limits),
/// `xml:base`, every `href` and CSS `url()` that leaves the document (files, http, `javascript:`,
/// SVG and HTML `data:` URLs), `@import`, CSS escapes, and animations that would set a link or a
/// handler. libxml2 loads no external entity, DTD or file while parsing (a loader that refuses
/// everything is installed first).
public enum SVGSanitizer {
    /// The cleaned document (UTF-8).
    /// - Throws: `CodecError.corrupt` (not well-formed, not an SVG, more than
    ///   `limits.maxVectorElements` elements, a result larger than four times the input or
    ///   `limits.maxInputBytes`), `CodecError.inputTooLarge`.
    public static func sanitize(_ data: Data, limits: DecodingLimits = .default) throws -> Data {
        guard data.count <= limits.maxInputBytes else { throw CodecError.inputTooLarge(bytes: data.count, limit: limits.maxInputBytes) }
        // Elements counted before libxml2 builds its tree (as for rendering).
        let opening = data.reduce(0) { $0 + ($1 == 0x3C ? 1 : 0) }
        guard opening <= limits.maxVectorElements else {
            throw SVGCodec.corrupt("more than \(limits.maxVectorElements) elements (the limit)")
        }
        let maxOutput = min(limits.maxInputBytes, max(data.count, 1 << 16) * 4)
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        _ = try callShim(data, format: .svg, library: "libxml2", messageSize: EASEL_SVG_MESSAGE_SIZE) { bytes, count, message in
            easel_svg_sanitize(bytes, count, Int32(clamping: limits.maxVectorElements), maxOutput, &output, &size, message)
        }
        guard let output else { throw SVGCodec.corrupt("the cleaned document is empty") }
        defer { easel_svg_free(output) }
        return Data(bytes: output, count: size)
    }
}
