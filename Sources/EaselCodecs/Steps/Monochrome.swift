import EaselSupport

/// imgproxy Pro's `monochrome:%intensity:%color`: the image in shades of one colour. Each pixel's
/// luma (BT.601) scales `colour` so that a pixel as bright as `colour` becomes `colour`, darker
/// ones darker, brighter ones brighter (each channel at most 255); the default `b3b3b3` is a
/// plain grayscale. Mixed with the pixel by `intensity` (0 leaves the image). Alpha is kept.
public struct Monochrome: ImageProcessor, Hashable {
    /// 0–1: how much of the monochrome is mixed into the image.
    public let intensity: Double
    /// The palette's colour.
    public let colour: RGBColour

    /// imgproxy's default palette colour.
    public static let defaultColour = RGBColour(red: 0xB3, green: 0xB3, blue: 0xB3)

    /// - Throws: `CodecError.invalidParameters` for an intensity outside 0–1.
    public init(intensity: Double, colour: RGBColour = Monochrome.defaultColour) throws {
        self.intensity = try TonePalette.checked(intensity, "monochrome")
        self.colour = colour
    }

    /// `monochrome(1.0,b3b3b3)`.
    public var identifier: String { "monochrome(\(intensity),\(colour.hex))" }

    /// The image in shades of `colour`, mixed by `intensity`.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let base = Double(max(1, colour.luma))
        let palette = (0...255).map { luma in
            func channel(_ value: UInt8) -> UInt8 { UInt8(min(255, (Double(value) * Double(luma) / base).rounded())) }
            return RGBColour(red: channel(colour.red), green: channel(colour.green), blue: channel(colour.blue))
        }
        return try TonePalette.apply(palette, to: bitmap, intensity: intensity)
    }
}
