import EaselSupport
import Foundation

/// Gaussian blur with standard deviation `sigma` pixels (separable, premultiplied, edges clamped).
public struct GaussianBlur: ImageProcessor, Hashable {
    public var sigma: Double

    public init(sigma: Double) {
        precondition(sigma > 0 && sigma <= 250, "blur sigma must be in (0, 250]")
        self.sigma = sigma
    }

    public var identifier: String { "blur(\(sigma))" }

    /// - Throws: `CodecError.cancelled` when the work is cancelled (checked every row).
    /// - Complexity: O(pixels × sigma) up to `BoxBlur.exactSigmaLimit` (an exact kernel), O(pixels)
    ///   past it (three box passes), so no sigma costs more than a small one.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let width = bitmap.width, height = bitmap.height
        let channels = bitmap.pixelFormat == .rgba8 && bitmap.isKnownOpaque ? 3 : bitmap.pixelFormat.bytesPerPixel
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let rowBytes = result.rowBytes
        // One plane of premultiplied pixels: blurred in place by box passes, or the exact
        // kernel's horizontal pass (whose vertical pass writes the result directly).
        var plane = [SIMD4<Float>](repeating: .zero, count: width * height)
        if sigma > BoxBlur.exactSigmaLimit {
            try plane.withUnsafeMutableBufferPointer { plane in
                bitmap.withUnsafeBytes { source in
                    for y in 0..<height {
                        let row = source.baseAddress! + y * bitmap.rowBytes
                        for x in 0..<width { plane[y * width + x] = Resampler.load(row, index: x, channels: channels) }
                    }
                }
                try BoxBlur.blur(plane.baseAddress!, width: width, height: height, sigma: sigma)
            }
            result.withUnsafeMutableBytes { destination in
                for y in 0..<height {
                    let row = destination.baseAddress! + y * rowBytes
                    for x in 0..<width { Resampler.store(plane[y * width + x], to: row, index: x, channels: channels) }
                }
            }
        } else {
            let radius = max(1, Int(checked: (3 * sigma).rounded(.up)))
            var weights = (-radius...radius).map { Float(exp(-Double($0 * $0) / (2 * sigma * sigma))) }
            let total = weights.reduce(0, +)
            weights = weights.map { $0 / total }
            try bitmap.withUnsafeBytes { source in
                for y in 0..<height {
                    if WorkCancellation.isCancelled { throw CodecError.cancelled }
                    let row = source.baseAddress! + y * bitmap.rowBytes
                    for x in 0..<width {
                        var sum = SIMD4<Float>.zero
                        for (k, weight) in weights.enumerated() {
                            let sx = min(width - 1, max(0, x + k - radius))
                            sum += Resampler.load(row, index: sx, channels: channels) * weight
                        }
                        plane[y * width + x] = sum
                    }
                }
            }
            try result.withUnsafeMutableBytes { destination in
                for y in 0..<height {
                    if WorkCancellation.isCancelled { throw CodecError.cancelled }
                    let row = destination.baseAddress! + y * rowBytes
                    for x in 0..<width {
                        var sum = SIMD4<Float>.zero
                        for (k, weight) in weights.enumerated() {
                            let sy = min(height - 1, max(0, y + k - radius))
                            sum += plane[sy * width + x] * weight
                        }
                        Resampler.store(sum, to: row, index: x, channels: channels)
                    }
                }
            }
        }
        if bitmap.isKnownOpaque { result.markOpaque() }
        return result
    }
}

/// Makes the corners transparent: rounded with `radius` pixels, or the largest circle (an
/// ellipse for non-square images) when `radius` is nil. The edge is antialiased. Output is RGBA.
public struct RoundedCorners: ImageProcessor, Hashable {
    public var radius: Double?

    /// Corners rounded with `radius` pixels.
    public init(radius: Double) {
        precondition(radius >= 0, "radius must not be negative")
        self.radius = radius
    }

    private init() { radius = nil }

    /// A circle (or ellipse) inscribed in the image.
    public static let circle = RoundedCorners()

    public var identifier: String { radius.map { "rounded(\($0))" } ?? "circle" }

    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        var result = bitmap.converted(to: .rgba8)
        let width = Double(result.width), height = Double(result.height), rowBytes = result.rowBytes
        let w = result.width, h = result.height
        result.withUnsafeMutableBytes { bytes in
            for y in 0..<h {
                for x in 0..<w {
                    let coverage = self.coverage(x: Double(x) + 0.5, y: Double(y) + 0.5, width: width, height: height)
                    guard coverage < 1 else { continue }
                    let o = y * rowBytes + x * 4 + 3
                    bytes[o] = UInt8(checked: (Double(bytes[o]) * coverage).rounded())
                }
            }
        }
        return result
    }

    /// How much of the pixel centred at (x, y) lies inside the shape, 0…1 (a one-pixel ramp).
    private func coverage(x: Double, y: Double, width: Double, height: Double) -> Double {
        guard let radius else {
            let rx = width / 2, ry = height / 2
            let dx = (x - rx) / rx, dy = (y - ry) / ry
            let distance = (dx * dx + dy * dy).squareRoot() // 1 on the ellipse
            let edge = (1 - distance) * min(rx, ry) // in pixels, positive inside
            return max(0, min(1, edge + 0.5))
        }
        let r = min(radius, width / 2, height / 2)
        let cx = x < r ? r : (x > width - r ? width - r : x)
        let cy = y < r ? r : (y > height - r ? height - r : y)
        guard cx != x || cy != y else { return 1 } // not in a corner square
        let distance = ((x - cx) * (x - cx) + (y - cy) * (y - cy)).squareRoot()
        return max(0, min(1, r - distance + 0.5))
    }
}
