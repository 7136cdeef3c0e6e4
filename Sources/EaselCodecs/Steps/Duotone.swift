import EaselSupport

/// imgproxy Pro's `duotone:%intensity:%color1:%color2`: each pixel's luma (BT.601) picks a colour
/// on the line from `dark` (black pixels) to `light` (white ones), and the result is mixed with
/// the pixel by `intensity` (0 leaves the image, 1 is the duotone alone). Alpha is kept; a gray
/// image becomes RGBA.
public struct Duotone: ImageProcessor, Hashable {
    /// 0–1: how much of the duotone is mixed into the image.
    public let intensity: Double
    /// The colours of black and of white pixels.
    public let dark: RGBColour, light: RGBColour

    /// - Throws: `CodecError.invalidParameters` for an intensity outside 0–1.
    public init(intensity: Double, dark: RGBColour = .black, light: RGBColour = .white) throws {
        self.intensity = try TonePalette.checked(intensity, "duotone")
        self.dark = dark
        self.light = light
    }

    /// `duotone(0.5,000000,ffffff)`.
    public var identifier: String { "duotone(\(intensity),\(dark.hex),\(light.hex))" }

    /// The image in the two colours, mixed by `intensity`.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let palette = (0...255).map { luma in
            let t = Double(luma) / 255
            func channel(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8((Double(a) + (Double(b) - Double(a)) * t).rounded()) }
            return RGBColour(red: channel(dark.red, light.red), green: channel(dark.green, light.green), blue: channel(dark.blue, light.blue))
        }
        return try TonePalette.apply(palette, to: bitmap, intensity: intensity)
    }
}

/// A colour as three bytes (sRGB), for the steps that take one.
public struct RGBColour: Sendable, Hashable {
    /// The channels, 0–255.
    public var red: UInt8, green: UInt8, blue: UInt8
    /// A colour of these channels.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }
    /// `000000`.
    public static let black = RGBColour(red: 0, green: 0, blue: 0)
    /// `ffffff`.
    public static let white = RGBColour(red: 255, green: 255, blue: 255)
    /// `rrggbb`, lower case.
    public var hex: String {
        [red, green, blue].map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
    /// BT.601 luma, 0–255.
    var luma: Int { (299 * Int(red) + 587 * Int(green) + 114 * Int(blue) + 500) / 1000 }
}

/// The tone steps' shared part: a colour per luma, mixed into the image by an intensity.
enum TonePalette {
    static func checked(_ intensity: Double, _ name: String) throws -> Double {
        guard intensity.isFinite, (0...1).contains(intensity) else { throw CodecError.invalidParameters("\(name): intensity is 0–1") }
        return intensity
    }

    /// Each pixel replaced by `palette[luma]` mixed with it by `intensity`; alpha kept.
    static func apply(_ palette: [RGBColour], to bitmap: Bitmap, intensity: Double) throws -> Bitmap {
        guard intensity > 0 else { return bitmap }
        let source = bitmap.pixelFormat == .rgba8 ? bitmap : bitmap.converted(to: .rgba8)
        let keep = Int((1 - intensity) * 256), mix = 256 - keep
        return try ColorFilter.map(source) { pixel in
            let luma = (299 * Int(pixel[0]) + 587 * Int(pixel[1]) + 114 * Int(pixel[2]) + 500) / 1000
            let tone = palette[luma]
            pixel[0] = UInt8((Int(pixel[0]) * keep + Int(tone.red) * mix + 128) >> 8)
            pixel[1] = UInt8((Int(pixel[1]) * keep + Int(tone.green) * mix + 128) >> 8)
            pixel[2] = UInt8((Int(pixel[2]) * keep + Int(tone.blue) * mix + 128) >> 8)
        }
    }
}
