import CPDF
import EaselSupport
import Foundation

/// PDF through poppler-glib: a page rendered **at the size asked for** on white paper, as
/// `pdftoppm` renders it (the first page unless another is asked for; `info` counts the pages). The page's size is read in
/// points at 72 dpi (one point, one pixel), and a decode covering a size renders the page there,
/// as SVGs are. poppler runs no JavaScript and fetches nothing; an encrypted document is refused
/// (`unsupportedFormat`: it needs a password), and one of more than `DecodingLimits.maxPages`
/// pages is refused before any page is read. Every document is held to `PDFBudget` before
/// poppler reads it (`RenderJob`).
enum PDFCodec {
    static func corrupt(_ reason: String) -> CodecError { .corrupt(format: .pdf, reason: reason) }

    static func info(_ data: Data, limits: DecodingLimits = .default, page: Int = 0) throws -> ImageInfo {
        let reply = try RenderWorkers.perform(RenderJob(operation: .pdfInfo, page: Int32(clamping: page)), document: data, pixels: nil)
        let (result, pages, width, height, why) = (reply.result, reply.integer, reply.width, reply.height, reply.message)
        try checkLibrary(result, library: "poppler", message: why)
        if result == 0 { throw corrupt(why.isEmpty ? "empty or unreadable data" : why) }
        if result == -1 { throw CodecError.unsupportedFormat("encrypted PDF (a password is needed)") }
        if result < 0, result != -2 { throw corrupt(why) }
        guard Int(pages) <= limits.maxPages else { throw corrupt("\(pages) pages (the limit is \(limits.maxPages))") }
        if result == -2 { throw CodecError.noSuchPage(page: page, pages: Int(pages)) }
        func side(_ value: Double) -> Int { max(1, Int(checked: value, rounding: .up)) }
        var info = ImageInfo(fileType: .pdf, width: side(width), height: side(height), hasAlpha: false, isGrayscale: false, isProgressive: false)
        info.frameCount = Int(pages)
        return info
    }

    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)?, pixelFormat: Bitmap.PixelFormat,
                       limits: DecodingLimits) throws -> Bitmap {
        var bitmap = try VectorRender.render(data, info: info, covering: minimumSize, limits: limits,
                                             job: RenderJob(operation: .pdfRender, page: Int32(clamping: info.page)))
        bitmap.markOpaque()
        return bitmap.converted(to: pixelFormat)
    }
}
