import EaselSupport
import Foundation

/// The size a vector (SVG, a PDF page) is rendered at: vectors have no pixels of their own, so a
/// decode covering a size renders them there, up or down, rather than at their intrinsic size
/// and then resized.
enum VectorRender {
    /// A vector's bitmap covering `minimumSize` (its render size checked against `limits` before
    /// any pixel memory), drawn by `job` (an SVG or PDF drawing job: its size and rows are set
    /// here) in a render worker or in process, as `RenderIsolation` says.
    static func render(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)?, limits: DecodingLimits,
                       job template: RenderJob) throws -> Bitmap {
        let size = size(of: info, covering: minimumSize)
        try limits.check(width: size.width, height: size.height)
        var bitmap = Bitmap(width: size.width, height: size.height, pixelFormat: .rgba8)
        var job = template
        job.width = Int32(size.width)
        job.height = Int32(size.height)
        job.rowBytes = bitmap.rowBytes
        let reply = try bitmap.withUnsafeMutableBytes { pixels throws(CodecError) in
            try RenderWorkers.perform(job, document: data, pixels: pixels.baseAddress)
        }
        try checkLibrary(reply.result, library: job.operation.format.lazyLibrary, message: reply.message)
        guard reply.result != 0 else {
            throw CodecError.corrupt(format: job.operation.format, reason: reply.message.isEmpty ? "empty or unreadable data" : reply.message)
        }
        return bitmap
    }

    /// The most pixels a render covering a size may have (4096²), and the longest side cairo draws.
    static let maxRenderPixels = 4096 * 4096, maxRenderSide = 32767

    /// The size a decode covering `minimumSize` renders at: the intrinsic size scaled (up or
    /// down) to cover it, keeping the aspect ratio. Scaling up stops at `maxRenderPixels` (a
    /// thin vector asked to cover a square would otherwise be rendered kilometres long, to be
    /// cropped), and no side passes `maxRenderSide`: a resize then makes the rest.
    static func size(of info: ImageInfo, covering minimumSize: (width: Int, height: Int)?) -> (width: Int, height: Int) {
        let (width, height) = (Double(info.width), Double(info.height))
        var scale = 1.0
        if let minimumSize {
            scale = max(Double(minimumSize.width) / width, Double(minimumSize.height) / height)
            if scale > 1 { scale = min(scale, max(1, (Double(maxRenderPixels) / (width * height)).squareRoot())) }
        }
        scale = min(scale, Double(maxRenderSide) / max(width, height))
        // Up to whole pixels, but not past a whole number that floating point overshot
        // (11 × 100/11 is 100.00000000000001), and never past cairo's side.
        func side(_ value: Double) -> Int { min(maxRenderSide, max(1, Int(checked: value * scale - 1e-6, rounding: .up))) }
        return (side(width), side(height))
    }
}
