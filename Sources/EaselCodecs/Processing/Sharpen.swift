import EaselSupport
import Foundation

/// Unsharp mask: each colour channel moves away from its Gaussian-blurred value,
/// `out = in + amount × (in − blurred)`, clamped to 0…255. Alpha is kept as it is.
///
/// The defaults (sigma 0.5, amount 1.0, threshold 0) suit restoring the crispness a Lanczos
/// downscale softens: a 3-pixel-wide kernel that touches only the finest detail. Larger sigmas
/// (1–3) with smaller amounts enhance local contrast instead.
///
/// The blur weighs colour by alpha, so transparent pixels lend no colour to their neighbours;
/// it works in floating point and is never rounded before the difference is taken, so a flat
/// area is left exactly as it was. Gray stays gray (the one channel is sharpened).
public struct Sharpen: ImageProcessor, Hashable {
    /// Standard deviation of the blur, in pixels: 0 < sigma ≤ 100.
    public var sigma: Double
    /// Strength: 0 (no change) … 10.
    public var amount: Double
    /// Channel differences from the blur smaller than this many levels (0…255) are left alone,
    /// so flat areas' noise is not amplified. 0 sharpens everything.
    public var threshold: Int

    /// The bounds of `sigma`, in pixels; the lower one is excluded (sigma > 0).
    public static let sigmaRange = 0.0...100.0
    /// The allowed values of `amount`: 0…10.
    public static let amountRange = 0.0...10.0
    /// The allowed values of `threshold`, in levels: 0…255.
    public static let thresholdRange = 0...255

    /// An unsharp mask with the given `sigma`, `amount` and `threshold` (the defaults suit a
    /// downscale).
    /// - Throws: `CodecError.invalidParameters` naming the parameter out of range.
    public init(sigma: Double = 0.5, amount: Double = 1.0, threshold: Int = 0) throws(CodecError) {
        guard sigma > 0, sigma <= Self.sigmaRange.upperBound else {
            throw CodecError.invalidParameters("sharpen sigma \(sigma) outside (0, 100]")
        }
        guard Self.amountRange.contains(amount) else {
            throw CodecError.invalidParameters("sharpen amount \(amount) outside 0...10")
        }
        guard Self.thresholdRange.contains(threshold) else {
            throw CodecError.invalidParameters("sharpen threshold \(threshold) outside 0...255")
        }
        self.sigma = sigma
        self.amount = amount
        self.threshold = threshold
    }

    /// The same as `init(sigma:amount:threshold:)` (kept for callers written before it threw).
    /// - Throws: `CodecError.invalidParameters` naming the parameter out of range.
    public static func validated(sigma: Double = 0.5, amount: Double = 1.0, threshold: Int = 0) throws(CodecError) -> Sharpen {
        try Sharpen(sigma: sigma, amount: amount, threshold: threshold)
    }

    /// `sharpen(sigma,amount,threshold)`.
    public var identifier: String { "sharpen(\(sigma),\(amount),\(threshold))" }

    /// Returns `bitmap` sharpened (same pixel format, alpha kept), or `bitmap` itself when `amount`
    /// is 0.
    /// - Throws: `CodecError.cancelled` when the work is cancelled.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        if amount == 0 { return bitmap }
        let weights = kernel()
        let isGray = bitmap.pixelFormat == .gray8
        let pass = Pass(isGray: isGray, weighAlpha: !isGray && !bitmap.isKnownOpaque,
                        amount: Float(self.amount), threshold: Float(self.threshold))
        var result = Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: bitmap.pixelFormat)
        if sigma > BoxBlur.exactSigmaLimit {
            // Past the exact kernel's sweet spot: the whole blurred plane from box passes (O(pixels)).
            try sharpenFromBoxBlur(bitmap, into: &result, pass: pass)
        } else {
            try sharpenFromKernel(bitmap, into: &result, weights: weights, pass: pass)
        }
        if bitmap.isKnownOpaque { result.markOpaque() }
        return result
    }

    /// What every output row of one sharpening is made with.
    private struct Pass {
        /// Gray8 (one channel, lane 0) rather than RGBA8.
        let isGray: Bool
        /// Whether the blur weighs colour by alpha (RGBA8 not known to be opaque).
        let weighAlpha: Bool
        /// `Sharpen.amount`, as the rows use it.
        let amount: Float
        /// `Sharpen.threshold`, in levels, as the rows use it.
        let threshold: Float
    }

    /// The Gaussian's taps −radius…radius (radius ⌈3σ⌉, at least 1), normalised to sum to 1.
    private func kernel() -> [Float] {
        let radius = max(1, Int(checked: (3 * sigma).rounded(.up)))
        let weights = (-radius...radius).map { Float(exp(-Double($0 * $0) / (2 * sigma * sigma))) }
        let total = weights.reduce(0, +)
        return weights.map { $0 / total }
    }

    /// Sharpens `bitmap` into `result` against the whole blurred plane, made by box passes.
    private func sharpenFromBoxBlur(_ bitmap: Bitmap, into result: inout Bitmap, pass: Pass) throws {
        let width = bitmap.width, height = bitmap.height, sourceRowBytes = bitmap.rowBytes, rowBytes = result.rowBytes
        let isGray = pass.isGray, weighAlpha = pass.weighAlpha, amount = pass.amount, threshold = pass.threshold
        let plane = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: width * height)
        defer { plane.deallocate() }
        try bitmap.withUnsafeBytes { raw in
            let base = raw.baseAddress!
            for y in 0..<height {
                for x in 0..<width { (plane + y * width + x).initialize(to: Self.load(base + y * sourceRowBytes, x, isGray: isGray, weighAlpha: weighAlpha)) }
            }
            try BoxBlur.blur(plane, width: width, height: height, sigma: sigma)
            result.withUnsafeMutableBytes { destination in
                for y in 0..<height {
                    Self.emit(plane + y * width, source: base + y * sourceRowBytes, to: destination.baseAddress! + y * rowBytes,
                              width: width, isGray: isGray, amount: amount, threshold: threshold)
                }
            }
        }
    }

    /// Sharpens `bitmap` into `result` row by row against the exact kernel `weights` (separable:
    /// a horizontal pass per source row, then a vertical pass per output row).
    private func sharpenFromKernel(_ bitmap: Bitmap, into result: inout Bitmap, weights: [Float], pass: Pass) throws {
        let width = bitmap.width, height = bitmap.height, sourceRowBytes = bitmap.rowBytes, rowBytes = result.rowBytes
        let isGray = pass.isGray, weighAlpha = pass.weighAlpha, amount = pass.amount, threshold = pass.threshold
        let taps = weights.count, radius = taps / 2
        // The horizontal pass's rows, kept in a ring of `taps` rows (the vertical pass needs rows
        // y − radius … y + radius): memory stays a few rows whatever the image's height.
        // Each pixel is (r·a, g·a, b·a, a), a in 0…1 (1 when opaque; gray uses lane 0 only).
        // Then one source row as loaded, and one fully blurred row.
        let scratch = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: (taps + 2) * width)
        defer { scratch.deallocate() }
        let ring = scratch, source = scratch + taps * width, blurredRow = scratch + (taps + 1) * width
        var computed = 0 // source rows whose horizontal pass is in the ring

        try bitmap.withUnsafeBytes { raw in
            let base = raw.baseAddress!
            try result.withUnsafeMutableBytes { destination in
                let output = destination.baseAddress!
                try weights.withUnsafeBufferPointer { weights in
                    func horizontal(_ y: Int) {
                        let row = base + y * sourceRowBytes
                        for x in 0..<width { source[x] = Self.load(row, x, isGray: isGray, weighAlpha: weighAlpha) }
                        let slot = ring + (y % taps) * width
                        for x in 0..<width {
                            var sum = SIMD4<Float>.zero
                            if x >= radius, x + radius < width {
                                for k in 0..<taps { sum += source[x + k - radius] * weights[k] }
                            } else {
                                for k in 0..<taps { sum += source[min(width - 1, max(0, x + k - radius))] * weights[k] }
                            }
                            slot[x] = sum
                        }
                    }
                    for y in 0..<height {
                        if WorkCancellation.isCancelled { throw CodecError.cancelled }
                        while computed < min(height, y + radius + 1) {
                            horizontal(computed)
                            computed += 1
                        }
                        // The vertical pass for the whole row, one tap at a time (vectorises).
                        for k in 0..<taps {
                            let sy = min(height - 1, max(0, y + k - radius))
                            let slot = ring + (sy % taps) * width, weight = weights[k]
                            if k == 0 {
                                for x in 0..<width { blurredRow[x] = slot[x] * weight }
                            } else {
                                for x in 0..<width { blurredRow[x] += slot[x] * weight }
                            }
                        }
                        Self.emit(blurredRow, source: base + y * sourceRowBytes, to: output + y * rowBytes, width: width,
                                  isGray: isGray, amount: amount, threshold: threshold)
                    }
                }
            }
        }
    }

    /// One output row from its source row and its blurred row.
    @inline(__always)
    static func emit(_ blurredRow: UnsafePointer<SIMD4<Float>>, source inRow: UnsafeRawPointer, to outRow: UnsafeMutableRawPointer,
                     width: Int, isGray: Bool, amount: Float, threshold: Float) {
        for x in 0..<width {
            let blurred = blurredRow[x]
            if isGray {
                let value = Float(inRow.load(fromByteOffset: x, as: UInt8.self))
                let sharpened = Self.sharpen(value, blurred: blurred[0], amount: amount, threshold: threshold)
                outRow.storeBytes(of: UInt8(truncatingIfNeeded: sharpened), toByteOffset: x, as: UInt8.self)
                continue
            }
            let pixel = inRow.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
            // Un-weigh the blurred colour; where the whole neighbourhood is
            // transparent there is nothing to sharpen against.
            let scale: Float = blurred[3] > 1e-6 ? 1 / blurred[3] : 0
            var packed = pixel & 0xFF00_0000 // alpha unchanged
            for c in 0..<3 {
                let value = Float((pixel >> UInt32(8 * c)) & 0xFF)
                let sharpened = scale == 0 ? UInt32(checked: value)
                    : Self.sharpen(value, blurred: blurred[c] * scale, amount: amount, threshold: threshold)
                packed |= sharpened << UInt32(8 * c)
            }
            outRow.storeBytes(of: packed, toByteOffset: x * 4, as: UInt32.self)
        }
    }

    @inline(__always)
    static func load(_ row: UnsafeRawPointer, _ x: Int, isGray: Bool, weighAlpha: Bool) -> SIMD4<Float> {
        if isGray { return SIMD4(Float(row.load(fromByteOffset: x, as: UInt8.self)), 0, 0, 1) }
        let p = row.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
        let a: Float = weighAlpha ? Float(p >> 24) * (1 / 255) : 1
        return SIMD4(Float(p & 0xFF) * a, Float((p >> 8) & 0xFF) * a, Float((p >> 16) & 0xFF) * a, a)
    }

    /// One channel, rounded and clamped to a byte.
    @inline(__always)
    static func sharpen(_ value: Float, blurred: Float, amount: Float, threshold: Float) -> UInt32 {
        let difference = value - blurred
        guard abs(difference) >= threshold else { return UInt32(checked: value) }
        let v = value + amount * difference + 0.5
        return v <= 0 ? 0 : (v >= 255 ? 255 : UInt32(checked: v))
    }
}
