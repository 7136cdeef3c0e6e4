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
        let reply = try RenderWorkers.perform(RenderJob(operation: .svgSize), document: data, pixels: nil)
        try checkLibrary(reply.result, library: "librsvg", message: reply.message)
        if reply.result == 0 { throw corrupt(reply.message.isEmpty ? "empty or unreadable data" : reply.message) }
        if reply.result < 0 { throw corrupt(reply.message) }
        let (width, height) = (reply.width, reply.height)
        // Whole pixels, at least one a side (a size past the limits is refused by them).
        func side(_ value: Double) -> Int { max(1, Int(checked: value, rounding: .up)) }
        return ImageInfo(fileType: .svg, width: side(width), height: side(height), hasAlpha: true, isGrayscale: false, isProgressive: false)
    }

    /// Elements are counted by their opening `<` (comments and declarations included): cheap, and
    /// an upper bound, so that a document of a million elements is refused before librsvg builds
    /// its tree. Then every image embedded as a `data:` URL must be one Easel can read the header
    /// of, each within the limits and all of them together within `maxPixels`
    /// (`SVGEmbeddedImages`), and the document must keep within `SVGBudget`.
    static func checkDocument(_ data: Data, limits: DecodingLimits) throws(CodecError) {
        let bytes = [UInt8](data)
        let count = bytes.reduce(0) { $0 + ($1 == 0x3C ? 1 : 0) }
        guard count <= limits.maxVectorElements else {
            throw corrupt("more than \(limits.maxVectorElements) elements (the limit)")
        }
        try SVGBudget.default.check(bytes)
        try SVGEmbeddedImages.check(bytes, limits: limits)
    }

    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)?, pixelFormat: Bitmap.PixelFormat,
                       limits: DecodingLimits) throws -> Bitmap {
        try checkDocument(data, limits: limits)
        return try VectorRender.render(data, info: info, covering: minimumSize, limits: limits,
                                       job: RenderJob(operation: .svgRender)).converted(to: pixelFormat)
    }
}
