import EaselSupport
import CResample
import Foundation
import Synchronization

/// How the Lanczos sums of a resize are computed.
public enum ResampleArithmetic: String, Sendable, Hashable {
    /// Opaque images (gray, and RGBA known to be opaque) in 16-bit fixed point with SIMD (as
    /// Pillow-SIMD does, but with 16-bit samples between the passes, so Lanczos' overshoot is not
    /// clipped before the second pass); images with alpha in floats
    /// (they are resampled premultiplied). The default; `EASEL_RESAMPLE=float` in the
    /// environment makes it `float` (for side-by-side comparisons).
    case automatic
    /// `SIMD4<Float>` sums and a float intermediate for every image: the reference the fixed-point
    /// path is measured against (`ResamplerTests`: PSNR within 0.1 dB of it).
    case float

    /// `automatic`, unless the environment says `EASEL_RESAMPLE=float`.
    static let standard: ResampleArithmetic = {
        guard let setting = ProcessInfo.processInfo.environment["EASEL_RESAMPLE"] else { return .automatic }
        return setting.lowercased() == "float" ? .float : .automatic
    }()
}

extension Bitmap {
    /// This bitmap resampled to `width × height` with Lanczos-3 (reductions by more than 3× first
    /// average whole blocks), as `Resize` does after it has decided the size.
    public func resampled(width: Int, height: Int, arithmetic: ResampleArithmetic = .automatic) -> Bitmap {
        // (A side below 1 is taken as 1.)
        Resampler.resize(self, width: width, height: height, arithmetic: arithmetic)
    }
}

/// Separable Lanczos-3 resampling, in 16-bit fixed point (opaque images) or `SIMD4<Float>`.
///
/// RGBA with alpha is resampled premultiplied in floats, so transparent pixels never bleed their
/// colour into their neighbours, then un-premultiplied. Each axis gets a kernel computed once:
/// for every output coordinate a first input index and a fixed number of weights (zero-padded),
/// stored flat, so the inner loops are plain multiply-adds over contiguous memory. The float
/// path converts each source row once and accumulates whole rows in the vertical pass; the
/// fixed-point path is C (Sources/CResample) built on SSE2's 16-bit multiply-add.
enum Resampler {
    struct Kernel {
        /// First input index for each output coordinate; `starts[i] + taps <= inputSize`.
        var starts: [Int]
        /// `taps` weights per output coordinate, row after row.
        var weights: [Float]
        var taps: Int
        /// The same kernel in fixed point: `weights` × 2^`precision`, rounded so that each
        /// output's weights sum to exactly 2^`precision` (a flat area keeps its value, opaque
        /// alpha stays 255).
        var fixedStarts: [Int32]
        var fixedWeights: [Int16]
        var precision: Int32
    }

    /// Where the pixels of an image end inside its bitmap, when a decoder shrank it on load by a
    /// factor that did not divide its size: 853 rows decoded at 1/4 fill 214 rows, of which
    /// 213.25 are image. Resampling maps that extent onto the output, not the whole last pixel.
    struct Extent: Hashable {
        var width: Double
        var height: Double
    }

    static func lanczos3(_ x: Double) -> Double {
        if x == 0 { return 1 }
        guard abs(x) < 3 else { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    private struct KernelKey: Hashable {
        var inputSize: Int, outputSize: Int, extent: Double
    }

    /// Recently used kernels by (input size, output size, extent): a batch of same-sized images
    /// (the usual thumbnail job) computes its kernels once.
    private static let cache = Locked<[KernelKey: Kernel]>([:])

    /// Weights mapping `extent` (at most `inputSize`, by default all of it) of `inputSize`
    /// samples onto `outputSize` (cached).
    static func kernel(inputSize: Int, outputSize: Int, extent: Double? = nil) -> Kernel {
        let extent = min(Double(inputSize), max(extent ?? Double(inputSize), Double(inputSize) - 1))
        let key = KernelKey(inputSize: inputSize, outputSize: outputSize, extent: extent)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let kernel = makeKernel(inputSize: inputSize, outputSize: outputSize, extent: extent)
        guard kernel.weights.count <= 1 << 18 else { return kernel } // big ones are not kept
        cache.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }
            cache[key] = kernel
        }
        return kernel
    }

    static func makeKernel(inputSize: Int, outputSize: Int, extent: Double? = nil) -> Kernel {
        let scale = (extent ?? Double(inputSize)) / Double(outputSize)
        let filterScale = max(scale, 1) // widen the filter when shrinking, to avoid aliasing
        let support = 3 * filterScale
        let needed = Int(checked: (2 * support).rounded(.up)) + 1
        // A multiple of 4 when the input allows, so the horizontal loop runs four independent sums.
        let taps = min(inputSize, (needed + 3) / 4 * 4)
        var starts = [Int](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * taps)
        var raw = [Double](repeating: 0, count: taps)
        for output in 0..<outputSize {
            let center = (Double(output) + 0.5) * scale - 0.5
            let first = max(0, Int(checked: (center - support).rounded(.up)))
            let last = min(inputSize - 1, Int(checked: (center + support).rounded(.down)))
            let start = min(first, inputSize - taps) // keep start + taps inside the input
            for tap in 0..<taps { raw[tap] = 0 }
            for index in first...max(first, last) where index - start < taps {
                raw[index - start] = lanczos3((Double(index) - center) / filterScale)
            }
            let total = raw.reduce(0, +)
            starts[output] = start
            for tap in 0..<taps {
                weights[output * taps + tap] = total != 0 ? Float(raw[tap] / total) : (start + tap == Int(checked: center.rounded()) ? 1 : 0)
            }
        }
        let fixed = fixedPoint(weights, outputs: outputSize, taps: taps)
        return Kernel(starts: starts, weights: weights, taps: taps, fixedStarts: starts.map { Int32($0) },
                      fixedWeights: fixed.weights, precision: fixed.precision)
    }

    /// `weights` (`taps` per output, each output's summing to 1) as 16-bit integers scaled by
    /// 2^precision: the largest precision (at most 14) at which every weight fits in 16 bits and
    /// every output's absolute weights sum below 2^16 (so the C passes' 32-bit sums cannot
    /// overflow), each output's rounding error given to its largest weight so the sum is exact.
    static func fixedPoint(_ weights: [Float], outputs: Int, taps: Int) -> (weights: [Int16], precision: Int32) {
        var largest = 0.0, largestSum = 0.0
        for output in 0..<outputs {
            var sum = 0.0
            for tap in 0..<taps {
                let weight = abs(Double(weights[output * taps + tap]))
                largest = max(largest, weight)
                sum += weight
            }
            largestSum = max(largestSum, sum)
        }
        var precision = 14
        while precision > 7, largest * Double(1 << precision) > 32_000 || largestSum * Double(1 << precision) > 60_000 {
            precision -= 1
        }
        let one = 1 << precision
        var fixed = [Int16](repeating: 0, count: weights.count)
        for output in 0..<outputs {
            var sum = 0, peak = output * taps
            for tap in 0..<taps {
                let index = output * taps + tap
                let value = Int(checked: (Double(weights[index]) * Double(one)).rounded())
                fixed[index] = Int16(clamping: value)
                sum += Int(fixed[index])
                if abs(weights[index]) > abs(weights[peak]) { peak = index }
            }
            fixed[peak] = Int16(clamping: Int(fixed[peak]) + one - sum)
        }
        return (fixed, Int32(precision))
    }

    /// `bitmap` resampled to `width × height`. Reductions by more than 3× on an axis first
    /// average whole blocks of pixels (premultiplied), leaving Lanczos at most a 3× reduction:
    /// this bounds its kernels to a few taps whatever the ratio (a 50000 × 1 strip included).
    /// `extent`: how much of the bitmap is image (see `Extent`); nil for all of it.
    static func resize(_ bitmap: Bitmap, width: Int, height: Int, extent: Extent? = nil,
                       arithmetic: ResampleArithmetic = .standard) -> Bitmap {
        // Never a side of 0 (and never a division by it below), whatever a caller computed.
        let width = max(1, width), height = max(1, height)
        if width == bitmap.width, height == bitmap.height { return bitmap }
        let factorX = bitmap.width / width >= 4 ? bitmap.width / width / 2 : 1
        let factorY = bitmap.height / height >= 4 ? bitmap.height / height / 2 : 1
        if factorX > 1 || factorY > 1 {
            let shrunk = extent.map { Extent(width: $0.width / Double(factorX), height: $0.height / Double(factorY)) }
            return lanczos(boxShrink(bitmap, factorX: factorX, factorY: factorY), width: width, height: height,
                           extent: shrunk, arithmetic: arithmetic)
        }
        return lanczos(bitmap, width: width, height: height, extent: extent, arithmetic: arithmetic)
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

    /// Lanczos-3 from `bitmap` (or its `extent`) to `width × height`.
    static func lanczos(_ bitmap: Bitmap, width: Int, height: Int, extent: Extent? = nil,
                        arithmetic: ResampleArithmetic = .standard) -> Bitmap {
        if width == bitmap.width, height == bitmap.height, extent == nil { return bitmap }
        let horizontal = kernel(inputSize: bitmap.width, outputSize: width, extent: extent?.width)
        let vertical = kernel(inputSize: bitmap.height, outputSize: height, extent: extent?.height)
        // Opaque RGBA needs no premultiplication: the alpha lane simply stays 255.
        let channels = bitmap.pixelFormat == .rgba8 && bitmap.isKnownOpaque ? 3 : bitmap.pixelFormat.bytesPerPixel
        if arithmetic == .automatic, channels != 4 {
            return fixedLanczos(bitmap, width: width, height: height, horizontal: horizontal, vertical: vertical)
        }
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

    /// The fixed-point passes (opaque RGBA or gray): rows first, into 16-bit samples with 6
    /// fractional bits (Lanczos' overshoot kept for the second pass), then columns.
    static func fixedLanczos(_ bitmap: Bitmap, width: Int, height: Int, horizontal: Kernel, vertical: Kernel) -> Bitmap {
        let bytesPerPixel = bitmap.pixelFormat.bytesPerPixel
        let sourceHeight = bitmap.height
        let middleStride = (width * bytesPerPixel + 31) / 32 * 32 // samples
        // Every sample is written by the row pass before the column pass reads it: no zeroing.
        let middle = UnsafeMutablePointer<Int16>.allocate(capacity: middleStride * sourceHeight)
        defer { middle.deallocate() }
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let rowBytes = result.rowBytes
        bitmap.withUnsafeBytes { source in
            let pixels = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
            horizontal.fixedStarts.withUnsafeBufferPointer { starts in
                horizontal.fixedWeights.withUnsafeBufferPointer { weights in
                    if bytesPerPixel == 4 {
                        easel_resample_rows4(pixels, bitmap.rowBytes, middle, middleStride, Int32(sourceHeight), Int32(width),
                                             starts.baseAddress!, weights.baseAddress!, Int32(horizontal.taps), horizontal.precision)
                    } else {
                        easel_resample_rows1(pixels, bitmap.rowBytes, middle, middleStride, Int32(sourceHeight), Int32(width),
                                             starts.baseAddress!, weights.baseAddress!, Int32(horizontal.taps), horizontal.precision)
                    }
                }
            }
        }
        result.withUnsafeMutableBytes { destination in
            vertical.fixedStarts.withUnsafeBufferPointer { starts in
                vertical.fixedWeights.withUnsafeBufferPointer { weights in
                    easel_resample_columns(middle, middleStride,
                                           destination.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                           Int32(width * bytesPerPixel), Int32(height), starts.baseAddress!,
                                           weights.baseAddress!, Int32(vertical.taps), vertical.precision)
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
        return v <= 0 ? 0 : (v >= 255 ? 255 : UInt32(checked: v))
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
