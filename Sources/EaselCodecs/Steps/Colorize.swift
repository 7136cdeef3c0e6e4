import EaselSupport

/// imgproxy Pro's `colorize:%opacity:%color:%keep_alpha`: a layer of one colour at `opacity`
/// over the image. With `keepAlpha`, only the colours change (transparent stays transparent);
/// without, the layer covers transparent pixels too (their alpha rises to the layer's).
public struct Colorize: ImageProcessor, Hashable {
    /// The layer's opacity, 0–1 (0: no layer).
    public let opacity: Double
    /// The layer's colour.
    public let colour: RGBColour
    /// Whether the image's alpha is kept (only colours change).
    public let keepAlpha: Bool

    /// - Throws: `CodecError.invalidParameters` for an opacity outside 0–1.
    public init(opacity: Double, colour: RGBColour = .black, keepAlpha: Bool = false) throws {
        guard opacity.isFinite, (0...1).contains(opacity) else { throw CodecError.invalidParameters("colorize: opacity is 0–1") }
        self.opacity = opacity
        self.colour = colour
        self.keepAlpha = keepAlpha
    }

    /// `colorize(0.5,ff0000)`, `,keep` with `keepAlpha`.
    public var identifier: String { "colorize(\(opacity),\(colour.hex)\(keepAlpha ? ",keep" : ""))" }

    /// The image under the layer (a gray image becomes RGBA).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard opacity > 0 else { return bitmap }
        let source = bitmap.pixelFormat == .rgba8 ? bitmap : bitmap.converted(to: .rgba8)
        let layer = [Double(colour.red), Double(colour.green), Double(colour.blue)]
        let opacity = self.opacity, keepAlpha = self.keepAlpha
        return try ColorFilter.map(source) { pixel in
            let alpha = Double(pixel[3]) / 255
            // The layer over the pixel ("over", straight alpha); with `keepAlpha`, over an opaque
            // pixel of the same colour, its alpha put back.
            let below = keepAlpha ? 1 : alpha
            let out = opacity + below * (1 - opacity)
            for c in 0..<3 {
                let value = (layer[c] * opacity + Double(pixel[c]) * below * (1 - opacity)) / max(out, 1e-9)
                pixel[c] = UInt8(min(255, max(0, value.rounded())))
            }
            if !keepAlpha { pixel[3] = UInt8(min(255, (out * 255).rounded())) }
        }
    }
}
