import Foundation
import Synchronization

/// Separable Lanczos-3 resampling with `SIMD4<Float>` arithmetic.
///
/// RGBA is resampled premultiplied, so transparent pixels never bleed their colour into their
/// neighbours, then un-premultiplied. Each axis gets a kernel computed once: for every output
/// coordinate a first input index and a fixed number of weights (zero-padded), stored flat, so
/// the inner loops are plain multiply-adds over contiguous memory. Each source row is converted
/// to floats once; the vertical pass accumulates whole rows, which vectorises.
enum Resampler {
    struct Kernel {
        /// First input index for each output coordinate; `starts[i] + taps <= inputSize`.
        var starts: [Int]
        /// `taps` weights per output coordinate, row after row.
        var weights: [Float]
        var taps: Int
    }

    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        guard abs(x) < 3 else { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// Recently used kernels by (input size, output size): a batch of same-sized images (the
    /// usual thumbnail job) computes its kernels once.
    private static let cache = Mutex<[SIMD2<Int>: Kernel]>([:])

    /// Weights mapping `inputSize` samples onto `outputSize` (cached).
    static func kernel(inputSize: Int, outputSize: Int) -> Kernel {
        let key = SIMD2(inputSize, outputSize)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let kernel = makeKernel(inputSize: inputSize, outputSize: outputSize)
        guard kernel.weights.count <= 1 << 18 else { return kernel } // big ones are not kept
        cache.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }
            cache[key] = kernel
        }
        return kernel
    }

    static func makeKernel(inputSize: Int, outputSize: Int) -> Kernel {
        let scale = Double(inputSize) / Double(outputSize)
        let filterScale = max(scale, 1) // widen the filter when shrinking, to avoid aliasing
        let support = 3 * filterScale
        let needed = Int((2 * support).rounded(.up)) + 1
        // A multiple of 4 when the input allows, so the horizontal loop runs four independent sums.
        let taps = min(inputSize, (needed + 3) / 4 * 4)
        var starts = [Int](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * taps)
        var raw = [Double](repeating: 0, count: taps)
        for output in 0..<outputSize {
            let center = (Double(output) + 0.5) * scale - 0.5
            let first = max(0, Int((center - support).rounded(.up)))
            let last = min(inputSize - 1, Int((center + support).rounded(.down)))
            let start = min(first, inputSize - taps) // keep start + taps inside the input
            for tap in 0..<taps { raw[tap] = 0 }
            for index in first...max(first, last) where index - start < taps {
                raw[index - start] = lanczos3((Double(index) - center) / filterScale)
            }
            let total = raw.reduce(0, +)
            starts[output] = start
            for tap in 0..<taps {
                weights[output * taps + tap] = total != 0 ? Float(raw[tap] / total) : (start + tap == Int(center.rounded()) ? 1 : 0)
            }
        }
        return Kernel(starts: starts, weights: weights, taps: taps)
    }

    /// `bitmap` resampled to `width × height`. Reductions by more than 3× on an axis first
    /// average whole blocks of pixels (premultiplied), leaving Lanczos at most a 3× reduction:
    /// this bounds its kernels to a few taps whatever the ratio (a 50000 × 1 strip included).
    static func resize(_ bitmap: Bitmap, width: Int, height: Int) -> Bitmap {
        if width == bitmap.width, height == bitmap.height { return bitmap }
        let factorX = bitmap.width / width >= 4 ? bitmap.width / width / 2 : 1
        let factorY = bitmap.height / height >= 4 ? bitmap.height / height / 2 : 1
        if factorX > 1 || factorY > 1 {
            return lanczos(boxShrink(bitmap, factorX: factorX, factorY: factorY), width: width, height: height)
        }
        return lanczos(bitmap, width: width, height: height)
    }

    /// Averages `factorX × factorY` blocks (a partial last block averages what it has).
    static func boxShrink(_ bitmap: Bitmap, factorX: Int, factorY: Int) -> Bitmap {
        let width = (bitmap.width + factorX - 1) / factorX, height = (bitmap.height + factorY - 1) / factorY
        let channels = bitmap.pixelFormat == .rgba8 && bitmap.isKnownOpaque ? 3 : bitmap.pixelFormat.bytesPerPixel
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let rowBytes = result.rowBytes
        var sums = [SIMD4<Float>](repeating: .zero, count: width)
        var counts = [Float](repeating: 0, count: width)
        bitmap.withUnsafeBytes { source in
            result.withUnsafeMutableBytes { destination in
                for y in 0..<height {
                    for x in 0..<width { sums[x] = .zero; counts[x] = 0 }
                    for sy in (y * factorY)..<min(bitmap.height, (y + 1) * factorY) {
                        let row = source.baseAddress! + sy * bitmap.rowBytes
                        for sx in 0..<bitmap.width {
                            sums[sx / factorX] += load(row, index: sx, channels: channels)
                            counts[sx / factorX] += 1
                        }
                    }
                    let row = destination.baseAddress! + y * rowBytes
                    for x in 0..<width { store(sums[x] / counts[x], to: row, index: x, channels: channels) }
                }
            }
        }
        if bitmap.isKnownOpaque { result.markOpaque() }
        return result
    }

    /// Lanczos-3 from `bitmap` to `width × height`.
    static func lanczos(_ bitmap: Bitmap, width: Int, height: Int) -> Bitmap {
        if width == bitmap.width, height == bitmap.height { return bitmap }
        let horizontal = kernel(inputSize: bitmap.width, outputSize: width)
        let vertical = kernel(inputSize: bitmap.height, outputSize: height)
        // Opaque RGBA needs no premultiplication: the alpha lane simply stays 255.
        let channels = bitmap.pixelFormat == .rgba8 && bitmap.isKnownOpaque ? 3 : bitmap.pixelFormat.bytesPerPixel
        let sourceWidth = bitmap.width, sourceHeight = bitmap.height
        // Pass 1: rows, into floats (premultiplied RGBA, or gray in lane 0).
        var intermediate = [SIMD4<Float>](repeating: .zero, count: width * sourceHeight)
        var line = [SIMD4<Float>](repeating: .zero, count: sourceWidth)
        bitmap.withUnsafeBytes { source in
            intermediate.withUnsafeMutableBufferPointer { out in
                line.withUnsafeMutableBufferPointer { line in
                    horizontal.weights.withUnsafeBufferPointer { weights in
                        horizontal.starts.withUnsafeBufferPointer { starts in
                            let taps = horizontal.taps
                            for y in 0..<sourceHeight {
                                let row = source.baseAddress! + y * bitmap.rowBytes
                                for x in 0..<sourceWidth { line[x] = load(row, index: x, channels: channels) }
                                let target = out.baseAddress! + y * width
                                for x in 0..<width {
                                    let first = line.baseAddress! + starts[x]
                                    let w = weights.baseAddress! + x * taps
                                    // Four independent sums: one running sum would wait on the
                                    // latency of every add (measured 3x slower).
                                    var s0 = SIMD4<Float>.zero, s1 = s0, s2 = s0, s3 = s0
                                    var tap = 0
                                    while tap + 4 <= taps {
                                        s0 += first[tap] * w[tap]
                                        s1 += first[tap + 1] * w[tap + 1]
                                        s2 += first[tap + 2] * w[tap + 2]
                                        s3 += first[tap + 3] * w[tap + 3]
                                        tap += 4
                                    }
                                    while tap < taps {
                                        s0 += first[tap] * w[tap]
                                        tap += 1
                                    }
                                    target[x] = (s0 + s1) + (s2 + s3)
                                }
                            }
                        }
                    }
                }
            }
        }
        // Pass 2: columns, accumulating whole rows, into the result.
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let rowBytes = result.rowBytes
        var accumulator = [SIMD4<Float>](repeating: .zero, count: width)
        result.withUnsafeMutableBytes { destination in
            intermediate.withUnsafeBufferPointer { rows in
                accumulator.withUnsafeMutableBufferPointer { accumulator in
                    let taps = vertical.taps
                    for y in 0..<height {
                        for x in 0..<width { accumulator[x] = .zero }
                        let start = vertical.starts[y]
                        for tap in 0..<taps {
                            let weight = vertical.weights[y * taps + tap]
                            if weight == 0 { continue }
                            let source = rows.baseAddress! + (start + tap) * width
                            for x in 0..<width { accumulator[x] += source[x] * weight }
                        }
                        let row = destination.baseAddress! + y * rowBytes
                        for x in 0..<width { store(accumulator[x], to: row, index: x, channels: channels) }
                    }
                }
            }
        }
        if bitmap.isKnownOpaque { result.markOpaque() }
        return result
    }

    // Conversions are written lane by lane with concrete types: the generic SIMD conversion
    // initialisers and `rounded`/`clamped` compiled to slow per-lane generic code here
    // (CodecBenchmarks "Lanczos resize").

    /// `channels`: 1 gray, 3 opaque RGBA (no premultiplication), 4 RGBA.
    @inline(__always)
    static func load(_ row: UnsafeRawPointer, index: Int, channels: Int) -> SIMD4<Float> {
        if channels == 1 { return SIMD4(Float(row.load(fromByteOffset: index, as: UInt8.self)), 0, 0, 0) }
        if channels == 3 {
            let bytes = row.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)
            return SIMD4(Float(bytes & 0xFF), Float((bytes >> 8) & 0xFF), Float((bytes >> 16) & 0xFF), 255)
        }
        let bytes = row.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)
        let a = Float(bytes >> 24)
        let scale = a * (1 / 255)
        return SIMD4(Float(bytes & 0xFF) * scale, Float((bytes >> 8) & 0xFF) * scale, Float((bytes >> 16) & 0xFF) * scale, a)
    }

    @inline(__always)
    static func clampToByte(_ value: Float) -> UInt32 {
        let v = value + 0.5
        return v <= 0 ? 0 : (v >= 255 ? 255 : UInt32(v))
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to row: UnsafeMutableRawPointer, index: Int, channels: Int) {
        if channels == 1 {
            row.storeBytes(of: UInt8(clampToByte(value[0])), toByteOffset: index, as: UInt8.self)
            return
        }
        if channels == 3 {
            let packed = clampToByte(value[0]) | clampToByte(value[1]) << 8 | clampToByte(value[2]) << 16 | 0xFF00_0000
            row.storeBytes(of: packed, toByteOffset: index * 4, as: UInt32.self)
            return
        }
        let alpha = value[3] <= 0 ? 0 : min(value[3], 255)
        let scale: Float = alpha > 0 ? 255 / alpha : 0
        let packed = clampToByte(value[0] * scale) | clampToByte(value[1] * scale) << 8
            | clampToByte(value[2] * scale) << 16 | clampToByte(alpha) << 24
        row.storeBytes(of: packed, toByteOffset: index * 4, as: UInt32.self)
    }
}
