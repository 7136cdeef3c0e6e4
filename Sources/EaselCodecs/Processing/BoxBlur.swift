import EaselSupport

/// A Gaussian blur of any sigma in O(pixels): three box filters in a row approximate a Gaussian
/// closely (the central limit theorem; each pass is a running sum, so its cost does not grow with
/// its width). Used past `exactSigmaLimit`, where an exact kernel's 6σ taps per pixel per
/// direction would make a large sigma cost seconds; below it the exact kernel is as cheap.
///
/// Works in place on a plane of premultiplied `SIMD4<Float>` pixels, edges clamped, and checks
/// for cancellation every row (horizontal passes) and every strip of columns (vertical ones).
///
/// - Complexity: O(pixels + lines × radius): each line's first window is summed once.
enum BoxBlur {
    /// Sigmas above this use box passes; at or below it, an exact Gaussian kernel.
    static let exactSigmaLimit = 4.0

    /// The widths (odd) of three box filters whose sequence has a Gaussian's variance
    /// `sigma²` (each box of width w adds (w² − 1)/12).
    static func boxWidths(sigma: Double, passes: Int = 3) -> [Int] {
        let variance = 12 * sigma * sigma
        let ideal = (variance / Double(passes) + 1).squareRoot()
        var lower = max(1, Int(checked: ideal, rounding: .down))
        if lower % 2 == 0 { lower -= 1 }
        let upper = lower + 2
        let lowerCount = Int(checked: (variance - Double(passes * lower * lower + 4 * passes * lower + 3 * passes)) / Double(-4 * lower - 4),
                             rounding: .toNearestOrAwayFromZero)
        return (0..<passes).map { $0 < lowerCount ? lower : upper }
    }

    /// Blurs `plane` (`width × height`, row-major) in place.
    /// - Throws: `CodecError.cancelled` when the work is cancelled (the plane is then partly blurred).
    /// - Complexity: O(width × height) whatever `sigma`.
    static func blur(_ plane: UnsafeMutablePointer<SIMD4<Float>>, width: Int, height: Int, sigma: Double) throws(CodecError) {
        let radii = boxWidths(sigma: sigma).map { ($0 - 1) / 2 }
        // Horizontal: each row through the three boxes, through one scratch row.
        // Vertical strips are at most `strip` columns (fewer for a narrow image: a 1-pixel-wide
        // one needs no more than its own height twice).
        let strip = min(Self.strip, width)
        let scratch = UnsafeMutablePointer<SIMD4<Float>>.allocate(capacity: max(width, height * strip * 2))
        defer { scratch.deallocate() }
        for y in 0..<height {
            if WorkCancellation.isCancelled { throw .cancelled }
            let row = plane + y * width
            for radius in radii {
                Self.box(row, stride: 1, count: width, radius: radius, into: scratch, outputStride: 1)
                row.update(from: scratch, count: width)
            }
        }
        // Vertical: strips of columns copied out (cache-friendly), each column through the boxes.
        var a = scratch, b = scratch + height * strip
        var x0 = 0
        while x0 < width {
            if WorkCancellation.isCancelled { throw .cancelled }
            let columns = min(strip, width - x0)
            for y in 0..<height { (a + y * strip).update(from: plane + y * width + x0, count: columns) }
            for radius in radii {
                for column in 0..<columns {
                    Self.box(a + column, stride: strip, count: height, radius: radius, into: b + column, outputStride: strip)
                }
                swap(&a, &b)
            }
            for y in 0..<height { (plane + y * width + x0).update(from: a + y * strip, count: columns) }
            x0 += columns
        }
    }

    private static let strip = 16

    /// One box of `2 × radius + 1` over `count` values `stride` apart, edges clamped: a running
    /// sum that adds the value entering the window and removes the one leaving it.
    @inline(__always)
    private static func box(_ input: UnsafePointer<SIMD4<Float>>, stride: Int, count: Int, radius: Int,
                            into output: UnsafeMutablePointer<SIMD4<Float>>, outputStride: Int) {
        let last = count - 1
        let scale = 1 / Float(2 * radius + 1)
        var sum = SIMD4<Float>.zero
        for k in -radius...radius { sum += input[min(last, max(0, k)) * stride] }
        for i in 0..<count {
            output[i * outputStride] = sum * scale
            sum += input[min(last, i + radius + 1) * stride] - input[max(0, i - radius) * stride]
        }
    }
}
