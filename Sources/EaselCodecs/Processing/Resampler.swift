import Foundation

/// Separable Lanczos-3 resampling with `SIMD4<Float>` arithmetic.
///
/// RGBA is resampled premultiplied, so transparent pixels never bleed their colour into their
/// neighbours, then un-premultiplied. Each output pixel's taps and weights are computed once
/// per axis and reused for every row (or column).
enum Resampler {
    /// Taps for one output coordinate: the first input index and normalised weights.
    struct Kernel {
        var starts: [Int]
        var weights: [[Float]]
    }

    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        guard abs(x) < 3 else { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// Weights mapping `inputSize` samples onto `outputSize`.
    static func kernel(inputSize: Int, outputSize: Int) -> Kernel {
        let scale = Double(inputSize) / Double(outputSize)
        let filterScale = max(scale, 1) // widen the filter when shrinking, to avoid aliasing
        let support = 3 * filterScale
        var starts: [Int] = []
        var weights: [[Float]] = []
        starts.reserveCapacity(outputSize)
        weights.reserveCapacity(outputSize)
        for output in 0..<outputSize {
            let center = (Double(output) + 0.5) * scale - 0.5
            let first = max(0, Int((center - support).rounded(.up)))
            let last = min(inputSize - 1, Int((center + support).rounded(.down)))
            var taps = (first...max(first, last)).map { Float(lanczos3((Double($0) - center) / filterScale)) }
            let total = taps.reduce(0, +)
            if total != 0 { taps = taps.map { $0 / total } } else { taps = [1] }
            starts.append(first)
            weights.append(taps)
        }
        return Kernel(starts: starts, weights: weights)
    }

    /// `bitmap` resampled to `width × height`.
    static func resize(_ bitmap: Bitmap, width: Int, height: Int) -> Bitmap {
        if width == bitmap.width, height == bitmap.height { return bitmap }
        let horizontal = kernel(inputSize: bitmap.width, outputSize: width)
        let vertical = kernel(inputSize: bitmap.height, outputSize: height)
        let channels = bitmap.pixelFormat.bytesPerPixel
        // Pass 1: rows, into floats (premultiplied RGBA, or gray in lane 0).
        var intermediate = [SIMD4<Float>](repeating: .zero, count: width * bitmap.height)
        bitmap.withUnsafeBytes { source in
            intermediate.withUnsafeMutableBufferPointer { out in
                for y in 0..<bitmap.height {
                    let row = source.baseAddress! + y * bitmap.rowBytes
                    for x in 0..<width {
                        var sum = SIMD4<Float>.zero
                        let start = horizontal.starts[x]
                        for (tap, weight) in horizontal.weights[x].enumerated() {
                            sum += load(row, index: start + tap, channels: channels) * weight
                        }
                        out[y * width + x] = sum
                    }
                }
            }
        }
        // Pass 2: columns, into the result.
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let rowBytes = result.rowBytes
        result.withUnsafeMutableBytes { destination in
            intermediate.withUnsafeBufferPointer { rows in
                for y in 0..<height {
                    let start = vertical.starts[y]
                    let taps = vertical.weights[y]
                    let row = destination.baseAddress! + y * rowBytes
                    for x in 0..<width {
                        var sum = SIMD4<Float>.zero
                        for (tap, weight) in taps.enumerated() { sum += rows[(start + tap) * width + x] * weight }
                        store(sum, to: row, index: x, channels: channels)
                    }
                }
            }
        }
        return result
    }

    @inline(__always)
    static func load(_ row: UnsafeRawPointer, index: Int, channels: Int) -> SIMD4<Float> {
        if channels == 1 { return SIMD4(Float(row.load(fromByteOffset: index, as: UInt8.self)), 0, 0, 0) }
        let bytes = row.loadUnaligned(fromByteOffset: index * 4, as: SIMD4<UInt8>.self)
        let pixel = SIMD4<Float>(bytes)
        let alpha = pixel[3] / 255
        return SIMD4(pixel[0] * alpha, pixel[1] * alpha, pixel[2] * alpha, pixel[3])
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to row: UnsafeMutableRawPointer, index: Int, channels: Int) {
        if channels == 1 {
            row.storeBytes(of: UInt8(max(0, min(255, value[0].rounded()))), toByteOffset: index, as: UInt8.self)
            return
        }
        let alpha = max(0, min(255, value[3]))
        var color = value
        if alpha > 0 { color *= 255 / alpha } else { color = .zero }
        color[3] = alpha
        let clamped = color.rounded(.toNearestOrAwayFromZero).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 255))
        row.storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: SIMD4<Int32>(clamped)), toByteOffset: index * 4, as: SIMD4<UInt8>.self)
    }
}
