import Foundation

/// How different an encoded answer looks from the bitmap it was made of, after the `dssim` tool
/// (its scale weights and its `1 / SSIM − 1` form, not its exact computation, so its numbers
/// are its own): a multi-scale SSIM in CIE L\*a\*b\*, given as a distance `1 / SSIM − 1`
/// (0: identical; the larger, the more visible the loss). Autoquality searches the lowest
/// quality whose answer stays within a distance, measuring images over `largestSide` on a copy
/// that size (`comparable(_:)`).
///
/// Exactly (so that another implementation can recompute it: the tests do, with scikit-image):
/// - Both images are put on white by their alpha, then converted from sRGB to L\*a\*b\* (D65
///   white 0.95047, 1, 1.08883; the sRGB curve with its linear part below 0.04045).
/// - At each scale, for each plane, the mean SSIM (Wang et al. 2004) over the pixels whose
///   window lies inside the image: a Gaussian window of σ 1.5 cut at 11 × 11 (the weights
///   summing to 1), population variances, K1 = 0.01 and K2 = 0.03 of a data range of 100 for
///   L\* and 255 for a\* and b\*. (scikit-image's `structural_similarity` with
///   `gaussian_weights=True, sigma=1.5, use_sample_covariance=False` and that `data_range`.)
/// - A scale's SSIM is L\* × 0.8 + a\* × 0.1 + b\* × 0.1; the next scale is each plane's 2 × 2
///   mean (an odd last row or column dropped). Up to five scales, while both sides reach 11,
///   weighted 0.028, 0.197, 0.322, 0.298, 0.155 (dssim's), the weights of the scales used
///   scaled to sum 1. An image under 11 pixels a side is compared over its whole area at once.
public enum PerceptualDistance {
    /// The scales' weights, finest first.
    static let scaleWeights: [Float] = [0.028, 0.197, 0.322, 0.298, 0.155]
    static let planeWeights: [Float] = [0.8, 0.1, 0.1]
    static let ranges: [Float] = [100, 255, 255]
    static let window = 11
    static let kernel: [Float] = {
        let weights = (-5...5).map { exp(-Float($0 * $0) / (2 * 1.5 * 1.5)) }
        let sum = weights.reduce(0, +)
        return weights.map { $0 / sum }
    }()

    /// One plane of one scale.
    struct Plane: Sendable {
        var width: Int
        var height: Int
        var values: [Float]
    }

    /// A bitmap's planes at every scale, with the filtered means and squares SSIM needs,
    /// computed once and compared with any number of candidates.
    public struct Reference: Sendable {
        let scales: [[Plane]]
        /// Per scale and plane: the windowed mean and windowed mean of squares.
        let means: [[[Float]]]
        let squares: [[[Float]]]
        /// The width compared.
        public let width: Int
        /// The height compared.
        public let height: Int
    }

    /// The longest side compared by `comparable(_:)`: a larger image is measured on a copy this
    /// size, so that a measure costs at most about 90 MB and a fraction of a second.
    public static let largestSide = 1024

    /// `bitmap`, or a copy of at most `largestSide` pixels on its long side (the same size for
    /// two images of one size): what autoquality measures.
    public static func comparable(_ bitmap: Bitmap) throws -> Bitmap {
        guard max(bitmap.width, bitmap.height) > largestSide else { return bitmap }
        return try Resize(width: largestSide, height: largestSide, mode: .fit).process(bitmap)
    }

    /// `bitmap`'s planes and their windowed statistics.
    public static func reference(_ bitmap: Bitmap) -> Reference {
        let scales = pyramid(bitmap)
        var means: [[[Float]]] = [], squares: [[[Float]]] = []
        for planes in scales {
            means.append(planes.map { filtered($0, $0.values) })
            squares.append(planes.map { plane in filtered(plane, plane.values.map { $0 * $0 }) })
        }
        return Reference(scales: scales, means: means, squares: squares, width: bitmap.width, height: bitmap.height)
    }

    /// The multi-scale SSIM of `candidate` against `reference` (1: identical); 0 for a candidate of
    /// another size (nothing alike).
    public static func similarity(_ reference: Reference, _ candidate: Bitmap) -> Double {
        guard candidate.width == reference.width, candidate.height == reference.height else { return 0 }
        let scales = pyramid(candidate)
        var total: Float = 0, weights: Float = 0
        for (index, planes) in scales.enumerated() {
            var scale: Float = 0
            for (p, plane) in planes.enumerated() {
                let x = reference.scales[index][p]
                let c1 = (0.01 * ranges[p]) * (0.01 * ranges[p]), c2 = (0.03 * ranges[p]) * (0.03 * ranges[p])
                let muX = reference.means[index][p], xx = reference.squares[index][p]
                let muY = filtered(plane, plane.values)
                let yy = filtered(plane, plane.values.map { $0 * $0 })
                let xy = filtered(plane, zip(x.values, plane.values).map { $0 * $1 })
                // Summed in Double: Float sums of a million values near 1 lose the loss.
                var sum = 0.0
                for i in 0..<muX.count {
                    let mx = muX[i], my = muY[i]
                    let vx = xx[i] - mx * mx, vy = yy[i] - my * my, cov = xy[i] - mx * my
                    sum += Double(((2 * mx * my + c1) * (2 * cov + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2)))
                }
                scale += planeWeights[p] * Float(sum / Double(max(1, muX.count)))
            }
            total += scaleWeights[index] * scale
            weights += scaleWeights[index]
        }
        return Double(total / weights)
    }

    /// `1 / similarity − 1`: 0 for identical images, larger the more they differ.
    public static func distance(_ reference: Reference, _ candidate: Bitmap) -> Double {
        let ssim = similarity(reference, candidate)
        return ssim > 0 ? 1 / ssim - 1 : .infinity
    }

    /// The distance between two images of one size.
    public static func distance(_ a: Bitmap, _ b: Bitmap) -> Double { distance(reference(a), b) }

    /// The L\*a\*b\* planes at every scale compared.
    static func pyramid(_ bitmap: Bitmap) -> [[Plane]] {
        var planes = lab(bitmap)
        var scales = [planes]
        while scales.count < scaleWeights.count, planes[0].width / 2 >= window, planes[0].height / 2 >= window {
            planes = planes.map(halved)
            scales.append(planes)
        }
        return scales
    }

    /// Each side halved by 2 × 2 means (an odd last row or column dropped).
    static func halved(_ plane: Plane) -> Plane {
        let width = plane.width / 2, height = plane.height / 2
        var values = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            let top = 2 * y * plane.width, bottom = top + plane.width
            for x in 0..<width {
                values[y * width + x] = (plane.values[top + 2 * x] + plane.values[top + 2 * x + 1]
                    + plane.values[bottom + 2 * x] + plane.values[bottom + 2 * x + 1]) * 0.25
            }
        }
        return Plane(width: width, height: height, values: values)
    }

    /// The windowed means of `values` (laid out as `plane`) at every pixel whose window lies
    /// inside it (the whole image's mean when it is smaller than the window).
    static func filtered(_ plane: Plane, _ values: [Float]) -> [Float] {
        let (width, height) = (plane.width, plane.height)
        guard width >= window, height >= window else { return [values.reduce(0, +) / Float(max(1, values.count))] }
        let outWidth = width - window + 1, outHeight = height - window + 1
        // Across (every row), then down (the rows' results).
        var across = [Float](repeating: 0, count: outWidth * height)
        values.withUnsafeBufferPointer { input in
            across.withUnsafeMutableBufferPointer { output in
                kernel.withUnsafeBufferPointer { k in
                    for y in 0..<height {
                        let row = y * width, out = y * outWidth
                        for x in 0..<outWidth {
                            var sum: Float = 0
                            for i in 0..<11 { sum += k[i] * input[row + x + i] }
                            output[out + x] = sum
                        }
                    }
                }
            }
        }
        var result = [Float](repeating: 0, count: outWidth * outHeight)
        across.withUnsafeBufferPointer { input in
            result.withUnsafeMutableBufferPointer { output in
                kernel.withUnsafeBufferPointer { k in
                    for y in 0..<outHeight {
                        for i in 0..<11 {
                            let weight = k[i], row = (y + i) * outWidth, out = y * outWidth
                            for x in 0..<outWidth { output[out + x] += weight * input[row + x] }
                        }
                    }
                }
            }
        }
        return result
    }

    /// sRGB's curve as a table (8-bit values to linear light).
    static let linear: [Float] = (0..<256).map { value in
        let c = Float(value) / 255
        return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
    }

    /// The image on white, in L\*, a\*, b\* planes.
    static func lab(_ bitmap: Bitmap) -> [Plane] {
        let rgba = bitmap.converted(to: .rgba8)
        let (width, height) = (rgba.width, rgba.height)
        var l = [Float](repeating: 0, count: width * height), a = l, b = l
        func f(_ t: Float) -> Float { t > 0.008856 ? cbrt(t) : 7.787 * t + 16 / 116 }
        rgba.withUnsafeBytes { bytes in
            for y in 0..<height {
                let row = y * rgba.rowBytes
                for x in 0..<width {
                    let o = row + 4 * x
                    let alpha = Float(bytes[o + 3]) / 255
                    // On white, in floating point.
                    func channel(_ value: UInt8) -> Float {
                        guard alpha < 1 else { return linear[Int(value)] }
                        let over = (Float(value) * alpha + 255 * (1 - alpha)) / 255
                        return over <= 0.04045 ? over / 12.92 : pow((over + 0.055) / 1.055, 2.4)
                    }
                    let r = channel(bytes[o]), g = channel(bytes[o + 1]), bl = channel(bytes[o + 2])
                    let X = (0.412453 * r + 0.357580 * g + 0.180423 * bl) / 0.95047
                    let Y = 0.212671 * r + 0.715160 * g + 0.072169 * bl
                    let Z = (0.019334 * r + 0.119193 * g + 0.950227 * bl) / 1.08883
                    let fx = f(X), fy = f(Y), fz = f(Z)
                    let i = y * width + x
                    l[i] = Y > 0.008856 ? 116 * fy - 16 : 903.3 * Y
                    a[i] = 500 * (fx - fy)
                    b[i] = 200 * (fy - fz)
                }
            }
        }
        return [Plane(width: width, height: height, values: l), Plane(width: width, height: height, values: a),
                Plane(width: width, height: height, values: b)]
    }
}
