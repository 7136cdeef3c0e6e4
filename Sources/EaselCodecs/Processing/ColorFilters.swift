import EaselSupport
import Foundation

/// A colour adjustment of each channel on its own: a table of 256 values for red, green and blue
/// (alpha is kept), each entry clamped to 0…255. thumbor's `brightness`, `contrast`, `rgb`,
/// `colorize` and `curve` filters are tables, built here from their definitions; the cost is one
/// lookup a channel, whatever the parameters.
public struct ChannelCurves: ImageProcessor, Hashable {
    /// The filter and its parameters, as written in a URL.
    public let identifier: String
    let red: [UInt8], green: [UInt8], blue: [UInt8]

    /// A table per channel (256 entries each, clamped); `identifier` names what made them.
    /// - Throws: `CodecError.invalidParameters` for a table of another length.
    public init(identifier: String, red: [Int], green: [Int], blue: [Int]) throws(CodecError) {
        guard red.count == 256, green.count == 256, blue.count == 256 else { throw .invalidParameters("a curve table has 256 entries") }
        self.init(tables: identifier, red: red, green: green, blue: blue)
    }

    /// (Tables of 256 entries, made here.)
    private init(tables identifier: String, red: [Int], green: [Int], blue: [Int]) {
        func clamp(_ table: [Int]) -> [UInt8] { table.map { UInt8(min(255, max(0, $0))) } }
        self.identifier = identifier
        (self.red, self.green, self.blue) = (clamp(red), clamp(green), clamp(blue))
    }

    /// The same table for the three channels.
    init(identifier: String, all: (Int) -> Int) {
        let table = (0...255).map(all)
        self.init(tables: identifier, red: table, green: table, blue: table)
    }

    /// thumbor's `brightness(percent)`: `255 × percent / 100` (whole numbers) added to each channel.
    public static func brightness(_ percent: Int) -> ChannelCurves {
        let delta = 255 * percent / 100
        return ChannelCurves(identifier: "brightness(\(percent))") { $0 + delta }
    }

    /// thumbor's `contrast(percent)`: with `factor = (percent + 100)² / 100` (whole numbers), each
    /// channel becomes `factor × (value − 128) / 100 + 128`: 0 leaves it, 100 doubles the distance
    /// from the middle, −100 makes everything 128.
    public static func contrast(_ percent: Int) -> ChannelCurves {
        let factor = (percent + 100) * (percent + 100) / 100
        return ChannelCurves(identifier: "contrast(\(percent))") { factor * ($0 - 128) / 100 + 128 }
    }

    /// thumbor's `rgb(r, g, b)`: `255 × percent / 100` added to each channel, its own percent.
    public static func rgb(red: Int, green: Int, blue: Int) -> ChannelCurves {
        func table(_ percent: Int) -> [Int] { (0...255).map { $0 + 255 * percent / 100 } }
        return ChannelCurves(tables: "rgb(\(red),\(green),\(blue))", red: table(red), green: table(green), blue: table(blue))
    }

    /// thumbor's `colorize(r%, g%, b%, fill)`: each channel blended towards the fill colour's by
    /// its percent, `(value × (100 − p) + fill × p) / 100`, truncated.
    public static func colorize(red: Int, green: Int, blue: Int, fill: (red: UInt8, green: UInt8, blue: UInt8)) -> ChannelCurves {
        func table(_ percent: Int, _ target: UInt8) -> [Int] {
            (0...255).map { Int((Double($0) * Double(100 - percent) + Double(target) * Double(percent)) / 100) }
        }
        let hex = String(format: "%02x%02x%02x", fill.red, fill.green, fill.blue)
        return ChannelCurves(tables: "colorize(\(red),\(green),\(blue),\(hex))", red: table(red, fill.red),
                             green: table(green, fill.green), blue: table(blue, fill.blue))
    }

    /// thumbor's `curve(all, r, g, b)`: each list of (input, output) points (0…255, at least two,
    /// inputs increasing) is a natural cubic spline through them; a channel goes through its own
    /// curve, then through `all`'s. Before the first point a curve keeps the first output, from
    /// the last point on the last output.
    /// - Throws: `CodecError.invalidParameters` for fewer than two points, inputs that do not
    ///   increase, or values outside 0…255.
    public static func curve(all: [(Int, Int)], red: [(Int, Int)], green: [(Int, Int)], blue: [(Int, Int)]) throws -> ChannelCurves {
        let a = try spline(all), r = try spline(red), g = try spline(green), b = try spline(blue)
        func text(_ points: [(Int, Int)]) -> String { "[" + points.map { "(\($0.0),\($0.1))" }.joined(separator: ",") + "]" }
        return ChannelCurves(tables: "curve(\(text(all)),\(text(red)),\(text(green)),\(text(blue)))",
                             red: r.map { a[$0] }, green: g.map { a[$0] }, blue: b.map { a[$0] })
    }

    /// The natural cubic spline (second derivative 0 at both ends) through `points`, at 0…255,
    /// rounded and clamped.
    static func spline(_ points: [(Int, Int)]) throws(CodecError) -> [Int] {
        guard points.count >= 2, points.count <= 256 else { throw .invalidParameters("a curve has 2 to 256 points") }
        guard points.allSatisfy({ (0...255).contains($0.0) && (0...255).contains($0.1) }) else {
            throw .invalidParameters("curve points are (0–255, 0–255)")
        }
        guard zip(points, points.dropFirst()).allSatisfy({ $0.0 < $1.0 }) else { throw .invalidParameters("curve inputs increase") }
        let n = points.count
        let x = points.map { Double($0.0) }, y = points.map { Double($0.1) }
        // The tridiagonal system for the second derivatives (Thomas algorithm).
        var second = [Double](repeating: 0, count: n)
        if n > 2 {
            var diagonal = [Double](repeating: 0, count: n), right = [Double](repeating: 0, count: n)
            var upper = [Double](repeating: 0, count: n)
            for i in 1..<(n - 1) {
                let lower = (x[i] - x[i - 1]) / 6
                diagonal[i] = (x[i + 1] - x[i - 1]) / 3
                upper[i] = (x[i + 1] - x[i]) / 6
                right[i] = (y[i + 1] - y[i]) / (x[i + 1] - x[i]) - (y[i] - y[i - 1]) / (x[i] - x[i - 1])
                if i > 1 {
                    let m = lower / diagonal[i - 1]
                    diagonal[i] -= m * upper[i - 1]
                    right[i] -= m * right[i - 1]
                }
            }
            for i in stride(from: n - 2, through: 1, by: -1) {
                second[i] = (right[i] - (i + 1 < n - 1 ? upper[i] * second[i + 1] : 0)) / diagonal[i]
            }
        }
        var table = [Int](repeating: 0, count: 256)
        var segment = 0
        for value in 0...255 {
            let v = Double(value)
            if v <= x[0] { table[value] = Int(y[0].rounded()); continue }
            if v >= x[n - 1] { table[value] = Int(y[n - 1].rounded()); continue }
            while x[segment + 1] < v { segment += 1 }
            let h = x[segment + 1] - x[segment]
            let t = (v - x[segment]) / h, s = 1 - t
            let result = s * y[segment] + t * y[segment + 1]
                + ((s * s * s - s) * second[segment] + (t * t * t - t) * second[segment + 1]) * h * h / 6
            table[value] = Int(result.rounded())
        }
        return table
    }

    /// The bitmap with each pixel's red, green and blue looked up (alpha kept); a Gray8 bitmap
    /// through the red table when the three are the same, else as RGBA8.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        if bitmap.pixelFormat == .gray8, red == green, green == blue {
            return try ColorFilter.map(bitmap) { pixel in pixel[0] = red[Int(pixel[0])] }
        }
        return try ColorFilter.map(bitmap.converted(to: .rgba8)) { pixel in
            pixel[0] = red[Int(pixel[0])]
            pixel[1] = green[Int(pixel[1])]
            pixel[2] = blue[Int(pixel[2])]
        }
    }
}

/// Shared loops of the colour filters: every pixel in place, the work checked for cancellation a
/// row at a time, a bitmap's opacity kept (no filter here changes alpha but `Convolution`).
enum ColorFilter {
    /// `body` on every pixel (1 byte for Gray8, 4 for RGBA8) of a copy of `bitmap`.
    static func map(_ bitmap: Bitmap, _ body: (UnsafeMutablePointer<UInt8>) -> Void) throws -> Bitmap {
        var result = bitmap
        let opaque = bitmap.isKnownOpaque
        let step = bitmap.pixelFormat.bytesPerPixel, rowBytes = bitmap.rowBytes, width = bitmap.width
        try result.withUnsafeMutableBytes { bytes in
            let start = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for y in 0..<bitmap.height {
                if WorkCancellation.isCancelled { throw CodecError.cancelled }
                var pixel = start + y * rowBytes
                for _ in 0..<width {
                    body(pixel)
                    pixel += step
                }
            }
        }
        if opaque { result.markOpaque() }
        return result
    }
}

/// thumbor's `saturation(change)`: each pixel moved away from (above 1) or towards (below 1) its
/// perceived brightness `p = √(0.299 r² + 0.587 g² + 0.114 b²)`: `p + (value − p) × change`,
/// truncated and clamped; 0 is gray, 1 leaves the image.
public struct Saturation: ImageProcessor, Hashable {
    /// The factor, −10…10.
    public let change: Double

    /// A saturation step by `change`.
    /// - Throws: `CodecError.invalidParameters` outside −10…10.
    public init(change: Double) throws {
        guard change.isFinite, (-10...10).contains(change) else { throw CodecError.invalidParameters("saturation is −10–10") }
        self.change = change
    }

    /// `saturation(change)`.
    public var identifier: String { "saturation(\(change))" }

    /// Each pixel's red, green and blue moved as the type says (alpha kept); Gray8 unchanged.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard bitmap.pixelFormat == .rgba8 else { return bitmap }
        let change = Float(change)
        // The weighted squares, looked up.
        let red = (0...255).map { Float($0 * $0) * 0.299 }, green = (0...255).map { Float($0 * $0) * 0.587 }
        let blue = (0...255).map { Float($0 * $0) * 0.114 }
        return try ColorFilter.map(bitmap) { pixel in
            let r = Float(pixel[0]), g = Float(pixel[1]), b = Float(pixel[2])
            let p = (red[Int(pixel[0])] + green[Int(pixel[1])] + blue[Int(pixel[2])]).squareRoot()
            func adjusted(_ value: Float) -> UInt8 { UInt8(min(255, max(0, Int(p + (value - p) * change)))) }
            pixel[0] = adjusted(r)
            pixel[1] = adjusted(g)
            pixel[2] = adjusted(b)
        }
    }
}

/// thumbor's `equalize()`: histogram equalisation of each channel on its own, over every pixel:
/// `value' = round((cdf(value) − cdfₘᵢₙ) / (pixels − cdfₘᵢₙ) × 255)`, with cdfₘᵢₙ the count of the
/// channel's darkest value (a channel of one value is kept). Alpha is kept.
public struct Equalize: ImageProcessor, Hashable {
    /// The equalisation step; it has no parameters.
    public init() {}

    /// Always `equalize`.
    public var identifier: String { "equalize" }

    /// The equalised bitmap (Gray8: its one channel).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let channels = bitmap.pixelFormat == .gray8 ? 1 : 3
        let step = bitmap.pixelFormat.bytesPerPixel
        // One flat table of counts (channel c's at c × 256…).
        var counts = [Int](repeating: 0, count: 256 * channels)
        try counts.withUnsafeMutableBufferPointer { counts in
            try bitmap.withUnsafeBytes { bytes in
                for y in 0..<bitmap.height {
                    if WorkCancellation.isCancelled { throw CodecError.cancelled }
                    var offset = y * bitmap.rowBytes
                    for _ in 0..<bitmap.width {
                        for c in 0..<channels { counts[c * 256 + Int(bytes[offset + c])] += 1 }
                        offset += step
                    }
                }
            }
        }
        let histograms = (0..<channels).map { Array(counts[($0 * 256)..<($0 * 256 + 256)]) }
        let pixels = bitmap.width * bitmap.height
        let tables: [[UInt8]] = histograms.map { histogram in
            var cumulative = 0, table = [UInt8](repeating: 0, count: 256)
            let minimum = histogram.first { $0 > 0 } ?? 0
            for value in 0..<256 {
                cumulative += histogram[value]
                table[value] = pixels == minimum ? UInt8(value)
                    : UInt8(min(255, max(0, (Double(cumulative - minimum) / Double(pixels - minimum) * 255).rounded())))
            }
            return table
        }
        return try ColorFilter.map(bitmap) { pixel in
            for c in 0..<channels { pixel[c] = tables[c][Int(pixel[c])] }
        }
    }
}

/// thumbor's `noise(amount[, seed])`: the same offset, uniform in
/// `−⌊amount/2⌋ … amount − 1 − ⌊amount/2⌋`, added to the three channels of each pixel (alpha
/// kept). The offsets come from a generator seeded with `seed` (0 when the URL gives none), so
/// one URL always makes the same pixels (it is a cache key).
public struct Noise: ImageProcessor, Hashable {
    /// The spread of the offsets, 0…255 (0: none).
    public let amount: Int
    /// The generator's seed.
    public let seed: UInt64

    /// Noise of `amount` from `seed`.
    /// - Throws: `CodecError.invalidParameters` for an amount outside 0…255.
    public init(amount: Int, seed: UInt64 = 0) throws {
        guard (0...255).contains(amount) else { throw CodecError.invalidParameters("noise is 0–255") }
        self.amount = amount
        self.seed = seed
    }

    /// `noise(amount,seed)`.
    public var identifier: String { "noise(\(amount),\(seed))" }

    /// The bitmap with its noise (Gray8: on its one channel).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard amount > 0 else { return bitmap }
        // SplitMix64: small, fast, and the same sequence on every machine.
        var state = seed &+ 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let amount = UInt64(self.amount), half = self.amount >> 1
        let channels = bitmap.pixelFormat == .gray8 ? 1 : 3
        return try ColorFilter.map(bitmap) { pixel in
            let offset = Int(next() % amount) - half
            for c in 0..<channels { pixel[c] = UInt8(min(255, max(0, Int(pixel[c]) + offset))) }
        }
    }
}

/// thumbor's `convolution(matrix, columns, normalize)`: each channel, alpha included, becomes the
/// kernel's weighted sum of its neighbourhood (edges repeated), truncated and clamped; with
/// `normalize` the weights are divided by their sum (when it is not 0). Kernels have odd sides,
/// at most 11×11: the cost per pixel is the kernel's size.
public struct Convolution: ImageProcessor, Hashable {
    /// The weights, row by row.
    public let weights: [Double]
    /// The kernel's width.
    public let columns: Int
    /// Whether the weights are divided by their sum.
    public let normalize: Bool

    /// The largest side a kernel may have.
    public static let maximumSide = 11
    /// The largest weight's size (no sum of 121 of them times 255 comes near overflowing).
    public static let maximumWeight = 1_000_000.0

    /// A convolution with `weights` in rows of `columns`.
    /// - Throws: `CodecError.invalidParameters` for sides that are not odd, or over `maximumSide`,
    ///   or weights that are not finite.
    public init(weights: [Double], columns: Int, normalize: Bool) throws {
        guard columns >= 1, columns % 2 == 1, columns <= Self.maximumSide, !weights.isEmpty, weights.count % columns == 0 else {
            throw CodecError.invalidParameters("a convolution kernel has odd sides of at most \(Self.maximumSide)")
        }
        let rows = weights.count / columns
        guard rows % 2 == 1, rows <= Self.maximumSide else {
            throw CodecError.invalidParameters("a convolution kernel has odd sides of at most \(Self.maximumSide)")
        }
        guard weights.allSatisfy({ $0.isFinite && $0.magnitude <= Self.maximumWeight }) else {
            throw CodecError.invalidParameters("convolution weights are at most \(Int(Self.maximumWeight)) in size")
        }
        self.weights = weights
        self.columns = columns
        self.normalize = normalize
    }

    /// `convolution(w;w;…,columns,normalize)`.
    public var identifier: String {
        "convolution(" + weights.map { "\($0)" }.joined(separator: ";") + ",\(columns),\(normalize))"
    }

    /// The convolved bitmap (RGBA8; a Gray8 bitmap as its one channel).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let sum = weights.reduce(0, +)
        // (A sum too near 0 to divide by leaves the weights as they are.)
        let kernel = normalize && sum.magnitude >= 1e-6 ? weights.map { $0 / sum } : weights
        let rows = weights.count / columns, midX = columns / 2, midY = rows / 2
        let width = bitmap.width, height = bitmap.height, step = bitmap.pixelFormat.bytesPerPixel, rowBytes = bitmap.rowBytes
        // An image without transparent pixels keeps its alpha (thumbor convolves alpha only in an
        // image that has it: a zero-sum kernel makes an edge map, not a transparent image).
        let opaque = !bitmap.hasTransparentPixels
        let channels = opaque && step == 4 ? 3 : step
        var result = bitmap
        try bitmap.withUnsafeBytes { source in
            try result.withUnsafeMutableBytes { destination in
                for y in 0..<height {
                    if WorkCancellation.isCancelled { throw CodecError.cancelled }
                    for x in 0..<width {
                        var total = SIMD4<Double>.zero
                        for ky in 0..<rows {
                            let sy = min(height - 1, max(0, y + ky - midY))
                            for kx in 0..<columns {
                                let sx = min(width - 1, max(0, x + kx - midX))
                                let at = sy * rowBytes + sx * step
                                let weight = kernel[ky * columns + kx]
                                if step == 4 {
                                    total += SIMD4(Double(source[at]), Double(source[at + 1]), Double(source[at + 2]), Double(source[at + 3])) * weight
                                } else {
                                    total[0] += Double(source[at]) * weight
                                }
                            }
                        }
                        let at = y * rowBytes + x * step
                        // Clamped as a Double first: a weight normalised by a sum near 0 can be huge.
                        for c in 0..<channels {
                            let value = total[c].isNaN ? 0 : min(255, max(0, total[c]))
                            destination[at + c] = UInt8(value)
                        }
                    }
                }
            }
        }
        if opaque { result.markOpaque() }
        return result
    }
}
