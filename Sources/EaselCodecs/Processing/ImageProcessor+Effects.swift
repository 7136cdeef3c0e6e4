import EaselSupport
import Foundation

/// Gaussian blur with standard deviation `sigma` pixels (separable, premultiplied, edges clamped).
/// The kernel reaches 3 × sigma pixels each way, or `radius` pixels when that is less
/// (thumbor's `blur(radius, sigma)`: a Gaussian cut at the radius, renormalised).
public struct GaussianBlur: ImageProcessor, Hashable {
    /// Standard deviation of the Gaussian, in pixels: 0 < sigma ≤ 250.
    public var sigma: Double
    /// nil: 3 × sigma (rounded up).
    public var radius: Int?

    /// A blur of `sigma` pixels (0 < sigma ≤ 250), its kernel cut at `radius` pixels each way
    /// (1…1000) when given; a radius that cuts nothing (⌈3 × sigma⌉ or more) is dropped.
    /// - Throws: `CodecError.invalidParameters` naming a value out of its range.
    public init(sigma: Double, radius: Int? = nil) throws(CodecError) {
        guard sigma > 0, sigma <= 250 else { throw .invalidParameters("blur sigma \(sigma) outside (0, 250]") }
        guard radius.map({ $0 >= 1 && $0 <= 1_000 }) ?? true else { throw .invalidParameters("blur radius outside 1...1000") }
        self.sigma = sigma
        // A radius that cuts nothing is no radius (equal values, equal identifiers).
        self.radius = radius.flatMap { $0 < Self.fullRadius(sigma) ? $0 : nil }
    }

    static func fullRadius(_ sigma: Double) -> Int { max(1, Int(checked: (3 * sigma).rounded(.up))) }

    /// The kernel's reach each way, in pixels.
    var kernelRadius: Int { min(radius ?? .max, Self.fullRadius(sigma)) }

    /// The standard deviation of the kernel as cut: what box passes approximate when the cut
    /// kernel is too wide to run exactly.
    var effectiveSigma: Double {
        guard let radius else { return sigma }
        var weight = 0.0, variance = 0.0
        for k in -radius...radius {
            let w = exp(-Double(k * k) / (2 * sigma * sigma))
            weight += w
            variance += w * Double(k * k)
        }
        return (variance / weight).squareRoot()
    }

    /// Kernels wider than this each way run as box passes (O(pixels) whatever the width).
    static let exactRadiusLimit = 3 * Int(BoxBlur.exactSigmaLimit.rounded(.up))

    /// `blur(sigma)`, or `blur(sigma,rN)` with a radius that cuts the kernel.
    public var identifier: String { radius.map { "blur(\(sigma),r\($0))" } ?? "blur(\(sigma))" }

    /// - Throws: `CodecError.cancelled` when the work is cancelled (checked every row).
    /// - Complexity: O(pixels × sigma) up to `BoxBlur.exactSigmaLimit` (an exact kernel), O(pixels)
    ///   past it (three box passes; for a cut kernel, past `exactRadiusLimit` taps each way), so
    ///   no sigma or radius costs more than a small one.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let width = bitmap.width, height = bitmap.height
        let channels = bitmap.pixelFormat == .rgba8 && bitmap.isKnownOpaque ? 3 : bitmap.pixelFormat.bytesPerPixel
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let rowBytes = result.rowBytes
        // One plane of premultiplied pixels: blurred in place by box passes, or the exact
        // kernel's horizontal pass (whose vertical pass writes the result directly).
        var plane = [SIMD4<Float>](repeating: .zero, count: width * height)
        // Box passes approximate a wide Gaussian (a cut one by the cut kernel's own deviation,
        // when it is still too wide to run exactly).
        let boxSigma = radius == nil ? sigma : effectiveSigma
        if radius == nil ? sigma > BoxBlur.exactSigmaLimit : kernelRadius > Self.exactRadiusLimit && boxSigma > BoxBlur.exactSigmaLimit {
            try plane.withUnsafeMutableBufferPointer { plane in
                bitmap.withUnsafeBytes { source in
                    for y in 0..<height {
                        let row = source.baseAddress! + y * bitmap.rowBytes
                        for x in 0..<width { plane[y * width + x] = Resampler.load(row, index: x, channels: channels) }
                    }
                }
                try BoxBlur.blur(plane.baseAddress!, width: width, height: height, sigma: boxSigma)
            }
            result.withUnsafeMutableBytes { destination in
                for y in 0..<height {
                    let row = destination.baseAddress! + y * rowBytes
                    for x in 0..<width { Resampler.store(plane[y * width + x], to: row, index: x, channels: channels) }
                }
            }
        } else {
            let radius = kernelRadius
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

/// Makes the corners transparent: rounded with `radius` pixels (or elliptical, `radiusX`
/// across and `radiusY` down, as thumbor's `round_corner(a|b, …)`), or the largest circle (an
/// ellipse for non-square images) when no radius is given. Each radius is at most half the
/// image's side. The edge is antialiased. Output is RGBA.
///
/// With a `fill` colour the corners are painted with it instead (thumbor's
/// `round_corner(…, r, g, b)`): the image's own alpha is kept.
public struct RoundedCorners: ImageProcessor, Hashable {
    /// nil: the inscribed circle or ellipse.
    public var radius: Double? { radii.map { $0.x } }
    private var radii: (x: Double, y: Double)?
    /// The corners' colour; nil: transparent corners.
    public private(set) var fill: (red: UInt8, green: UInt8, blue: UInt8)?

    /// Corners rounded with `radius` pixels.
    /// - Throws: `CodecError.invalidParameters` for a negative or infinite radius.
    public init(radius: Double) throws(CodecError) {
        try self.init(radiusX: radius, radiusY: radius)
    }

    /// Elliptical corners: `radiusX` pixels across, `radiusY` down.
    /// - Throws: `CodecError.invalidParameters` for a negative or infinite radius.
    public init(radiusX: Double, radiusY: Double, fill: (red: UInt8, green: UInt8, blue: UInt8)? = nil) throws(CodecError) {
        guard radiusX >= 0, radiusY >= 0, radiusX.isFinite, radiusY.isFinite else {
            throw .invalidParameters("corner radii \(radiusX), \(radiusY): 0 or more")
        }
        radii = (radiusX, radiusY)
        self.fill = fill
    }

    private init() { radii = nil }

    /// A circle (or ellipse) inscribed in the image.
    public static let circle = RoundedCorners()

    public static func == (a: RoundedCorners, b: RoundedCorners) -> Bool { a.identifier == b.identifier }
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    /// `circle`, `rounded(r)` or `rounded(rx,ry)`, followed by `+fill(r,g,b)` when the corners are
    /// painted.
    public var identifier: String {
        guard let radii else { return "circle" }
        let shape = radii.x == radii.y ? "rounded(\(radii.x))" : "rounded(\(radii.x),\(radii.y))"
        return fill.map { shape + "+fill(\($0.red),\($0.green),\($0.blue))" } ?? shape
    }

    /// Returns `bitmap` as RGBA8 with its corners cut: their alpha scaled by the shape's coverage,
    /// or with a `fill`, their colour blended towards it and alpha kept.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        var result = bitmap.converted(to: .rgba8)
        let opaque = result.isKnownOpaque
        let width = Double(result.width), height = Double(result.height), rowBytes = result.rowBytes
        let w = result.width, h = result.height
        result.withUnsafeMutableBytes { bytes in
            for y in 0..<h {
                for x in 0..<w {
                    let coverage = self.coverage(x: Double(x) + 0.5, y: Double(y) + 0.5, width: width, height: height)
                    guard coverage < 1 else { continue }
                    let o = y * rowBytes + x * 4
                    if let fill {
                        // Straight alpha: the colour channels move towards the fill, alpha stays.
                        for (c, value) in [fill.red, fill.green, fill.blue].enumerated() {
                            bytes[o + c] = UInt8(checked: (Double(bytes[o + c]) * coverage + Double(value) * (1 - coverage)).rounded())
                        }
                    } else {
                        bytes[o + 3] = UInt8(checked: (Double(bytes[o + 3]) * coverage).rounded())
                    }
                }
            }
        }
        // Painted corners leave alpha as it was.
        if fill != nil, opaque { result.markOpaque() }
        return result
    }

    /// How much of the pixel centred at (x, y) lies inside the shape, 0…1 (a one-pixel ramp).
    private func coverage(x: Double, y: Double, width: Double, height: Double) -> Double {
        guard let radii else {
            let rx = width / 2, ry = height / 2
            let dx = (x - rx) / rx, dy = (y - ry) / ry
            let distance = (dx * dx + dy * dy).squareRoot() // 1 on the ellipse
            let edge = (1 - distance) * min(rx, ry) // in pixels, positive inside
            return max(0, min(1, edge + 0.5))
        }
        let rx = min(radii.x, width / 2), ry = min(radii.y, height / 2)
        guard rx > 0, ry > 0 else { return 1 }
        let cx = x < rx ? rx : (x > width - rx ? width - rx : x)
        let cy = y < ry ? ry : (y > height - ry ? height - ry : y)
        guard cx != x || cy != y else { return 1 } // not in a corner box
        let dx = x - cx, dy = y - cy
        if rx == ry {
            let distance = (dx * dx + dy * dy).squareRoot()
            return max(0, min(1, rx - distance + 0.5))
        }
        // The ellipse's implicit function over its gradient: the signed distance to the edge in
        // pixels (first order), positive inside.
        let f = (dx * dx) / (rx * rx) + (dy * dy) / (ry * ry) - 1
        let gx = dx / (rx * rx), gy = dy / (ry * ry)
        let gradient = 2 * (gx * gx + gy * gy).squareRoot()
        guard gradient > 0 else { return 1 }
        return max(0, min(1, -f / gradient + 0.5))
    }
}
