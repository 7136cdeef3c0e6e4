import EaselSupport

/// The size a vector (SVG, a PDF page) is rendered at: vectors have no pixels of their own, so a
/// decode covering a size renders them there, up or down, rather than at their intrinsic size
/// and then resized.
enum VectorRender {
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
