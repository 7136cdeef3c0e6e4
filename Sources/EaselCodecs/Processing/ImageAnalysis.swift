import EaselSupport
import Foundation

/// Facts computed from an image's pixels, for `/info`: a palette and perceptual hashes.
///
/// ```swift
/// let colours = try ImageAnalysis.palette(photo, colors: 5)   // most pixels first
/// let near = ImageAnalysis.hammingDistance(ImageAnalysis.perceptualHash(a),
///                                          ImageAnalysis.perceptualHash(b)) <= 10
/// ```
///
/// The hashes follow the definitions of the `imagehash` Python library, so their hex strings
/// can be compared with hashes made elsewhere: the image in gray (BT.601 weights), resized with
/// Lanczos-3, then for the difference hash (dHash) one bit a pixel of a 9 × 8 image, set where
/// the pixel is brighter than its left neighbour, and for the perceptual hash (pHash) the 8 × 8
/// lowest frequencies of the 32 × 32 image's two-dimensional DCT-II, a bit set where the
/// coefficient is above their median. The first bit is the most significant.
public enum ImageAnalysis {
    /// One colour of a palette.
    public struct PaletteColor: Sendable, Hashable {
        /// The colour's red, 0…255 (sRGB).
        public var red: UInt8
        /// Its green.
        public var green: UInt8
        /// Its blue.
        public var blue: UInt8
        /// The share of the image's visible pixels (alpha ≥ 128) this colour stands for, 0…1.
        public var share: Double
    }

    /// The most colours `palette(_:colors:)` makes.
    public static let maxPaletteColors = 256

    /// At most `colors` colours (2…256) that stand for the image: median cut over its visible
    /// pixels (alpha ≥ 128), each colour the mean of the pixels it stands for, the colour of
    /// most pixels first. An image with fewer distinct colours gets fewer; one with no visible
    /// pixel, none.
    /// - Throws: `CodecError.invalidParameters` for a count outside 2…256.
    /// - Complexity: O(pixels), plus O(colours × distinct 15-bit colours) for the cuts.
    public static func palette(_ bitmap: Bitmap, colors: Int) throws(CodecError) -> [PaletteColor] {
        guard (2...maxPaletteColors).contains(colors) else {
            throw .invalidParameters("a palette has 2–\(maxPaletteColors) colours, not \(colors)")
        }
        let quantized = Quantizer.quantize(bitmap.converted(to: .rgba8), maxColors: colors)
        let visible = quantized.populations.reduce(0, +)
        guard visible > 0 else { return [] }
        var result: [PaletteColor] = []
        for (index, population) in quantized.populations.enumerated() where population > 0 {
            result.append(PaletteColor(red: quantized.palette[index * 3], green: quantized.palette[index * 3 + 1],
                                       blue: quantized.palette[index * 3 + 2], share: Double(population) / Double(visible)))
        }
        return result.sorted { $0.share != $1.share ? $0.share > $1.share : ($0.red, $0.green, $0.blue) < ($1.red, $1.green, $1.blue) }
    }

    /// The difference hash (dHash): 64 bits from a 9 × 8 gray copy, a bit set where a pixel is
    /// brighter than the one to its left. Robust to resizing, recompression and small colour
    /// changes; sensitive to crops and flips.
    public static func differenceHash(_ bitmap: Bitmap) throws -> UInt64 {
        let gray = try grayCopy(bitmap, width: 9, height: 8)
        var hash: UInt64 = 0
        for y in 0..<8 {
            for x in 0..<8 { hash = hash << 1 | (gray[y * 9 + x + 1] > gray[y * 9 + x] ? 1 : 0) }
        }
        return hash
    }

    /// The perceptual hash (pHash): 64 bits from the 8 × 8 lowest frequencies of a 32 × 32 gray
    /// copy's DCT-II, a bit set where the coefficient is above their median.
    public static func perceptualHash(_ bitmap: Bitmap) throws -> UInt64 {
        let side = 32, kept = 8
        let gray = try grayCopy(bitmap, width: side, height: side).map(Double.init)
        // cos(π k (2n + 1) / 2N) for the kept frequencies k and every sample n.
        var cosines = [Double](repeating: 0, count: kept * side)
        for k in 0..<kept {
            for n in 0..<side { cosines[k * side + n] = cos(Double.pi * Double(k) * Double(2 * n + 1) / Double(2 * side)) }
        }
        // Down the columns first (only the kept rows of frequencies), then along the rows.
        var columns = [Double](repeating: 0, count: kept * side)
        for k in 0..<kept {
            for x in 0..<side {
                var sum = 0.0
                for y in 0..<side { sum += gray[y * side + x] * cosines[k * side + y] }
                columns[k * side + x] = sum
            }
        }
        var coefficients = [Double](repeating: 0, count: kept * kept)
        for ky in 0..<kept {
            for kx in 0..<kept {
                var sum = 0.0
                for x in 0..<side { sum += columns[ky * side + x] * cosines[kx * side + x] }
                coefficients[ky * kept + kx] = sum
            }
        }
        let sorted = coefficients.sorted()
        let median = (sorted[31] + sorted[32]) / 2
        return coefficients.reduce(UInt64(0)) { $0 << 1 | ($1 > median ? 1 : 0) }
    }

    /// The number of bits in which two hashes differ (0: alike … 64).
    public static func hammingDistance(_ a: UInt64, _ b: UInt64) -> Int { (a ^ b).nonzeroBitCount }

    /// A hash as 16 lowercase hex digits (the `imagehash` library's form).
    public static func hex(_ hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The image in gray, resized to exactly `width × height` with Lanczos-3, row by row.
    static func grayCopy(_ bitmap: Bitmap, width: Int, height: Int) throws -> [UInt8] {
        let small = try Resize(width: width, height: height, mode: .exact).process(bitmap.converted(to: .gray8)).converted(to: .gray8)
        var values = [UInt8](repeating: 0, count: width * height)
        small.withUnsafeBytes { bytes in
            for y in 0..<height {
                for x in 0..<width { values[y * width + x] = bytes[y * small.rowBytes + x] }
            }
        }
        return values
    }
}
