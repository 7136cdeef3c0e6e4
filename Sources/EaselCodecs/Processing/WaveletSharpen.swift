import EaselSupport
import Foundation

/// Sharpening by wavelet detail boost, with thumbor's `sharpen(amount, radius, luminance_only)`
/// meaning: each channel is split by an "à trous" wavelet transform (a 1-2-1 hat kernel whose
/// taps spread 1, 2, 4, 8, 16 pixels apart) into five detail layers and a residue, and layer
/// `n` is multiplied by `1 + amount × exp(−(n − radius)² / 1.5)` before the layers are summed
/// again. So `amount` is the strength (0 changes nothing) and `radius` picks the scale that is
/// boosted most: 0 the finest detail (one pixel), 1 two-pixel detail, 2 four-pixel detail.
///
/// `luminanceOnly` boosts only luma (BT.601 Y of full-range YCbCr) and leaves the chroma as it
/// was, so coloured edges gain no colour fringes. Alpha is kept as it is; gray images have one
/// channel. Edges are mirrored. Memory: seven `Float` planes of the image's size (five for gray; two
/// more for an image with transparency, whose alpha weighs every smoothing as `Sharpen`'s does).
public struct WaveletSharpen: ImageProcessor, Hashable {
    /// Strength: 0 (no change) … 100. thumbor's typical values are 0…10.
    public var amount: Double
    /// The boosted scale, in wavelet levels: 0…8 (thumbor's typical values are 0…2).
    public var radius: Double
    /// Whether to boost only luma and leave the chroma as it was (thumbor's `luminance_only`); no
    /// effect on gray images.
    public var luminanceOnly: Bool
    /// Colours sharpened as they are stored, whatever their alpha (thumbor's C filter: the colour
    /// under a transparent pixel takes part); false weighs every smoothing by alpha (no halo from
    /// hidden colours).
    public var ignoresAlpha = false

    /// The allowed values of `amount`: 0…100.
    public static let amountRange = 0.0...100.0
    /// The allowed values of `radius`, in wavelet levels: 0…8.
    public static let radiusRange = 0.0...8.0
    /// Levels of the transform (detail up to 16 pixels apart).
    static let levels = 5

    /// - Throws: `CodecError.invalidParameters` naming the parameter out of range.
    public init(amount: Double, radius: Double, luminanceOnly: Bool = false) throws(CodecError) {
        guard Self.amountRange.contains(amount) else {
            throw CodecError.invalidParameters("sharpen amount \(amount) outside 0...100")
        }
        guard Self.radiusRange.contains(radius) else {
            throw CodecError.invalidParameters("sharpen radius \(radius) outside 0...8")
        }
        self.amount = amount
        self.radius = radius
        self.luminanceOnly = luminanceOnly
    }

    /// `wsharpen(amount,radius)`, with `,luma` before the parenthesis when `luminanceOnly`.
    public var identifier: String { "wsharpen(\(amount),\(radius)\(luminanceOnly ? ",luma" : "")\(ignoresAlpha ? ",straight" : ""))" }

    /// The factor detail layer `level` is multiplied by.
    func gain(level: Int) -> Float {
        let distance = Double(level) - radius
        return Float(1 + amount * exp(-distance * distance / 1.5))
    }

    /// - Throws: `CodecError.cancelled` when the work is cancelled (checked every level).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        if amount == 0 || (bitmap.width < 2 && bitmap.height < 2) { return bitmap }
        let isGray = bitmap.pixelFormat == .gray8
        var planes = colorPlanes(of: bitmap)
        // Alpha as weights, unless the image is opaque (then every weight is 1).
        let alpha = !isGray && !bitmap.isKnownOpaque && !ignoresAlpha ? Self.alphaWeights(of: bitmap) : nil
        let gains = (0..<Self.levels).map { gain(level: $0) }
        for c in 0..<(luminanceOnly || isGray ? 1 : planes.count) {
            try Self.boost(&planes[c], alpha: alpha, width: bitmap.width, height: bitmap.height, gains: gains)
        }
        var result = image(from: planes, like: bitmap)
        if bitmap.isKnownOpaque { result.markOpaque() }
        return result
    }

    /// One plane per colour channel, 0…255 as `Float`: gray, RGB, or YCbCr when only luma is
    /// boosted.
    private func colorPlanes(of bitmap: Bitmap) -> [[Float]] {
        let width = bitmap.width, height = bitmap.height, count = width * height
        let isGray = bitmap.pixelFormat == .gray8
        let channels = isGray ? 1 : 3
        var planes = [[Float]](repeating: [Float](repeating: 0, count: count), count: channels)
        let sourceRowBytes = bitmap.rowBytes
        bitmap.withUnsafeBytes { raw in
            let base = raw.baseAddress!
            for y in 0..<height {
                let row = base + y * sourceRowBytes
                for x in 0..<width {
                    let i = y * width + x
                    if isGray {
                        planes[0][i] = Float(row.load(fromByteOffset: x, as: UInt8.self))
                        continue
                    }
                    let r = Float(row.load(fromByteOffset: x * 4, as: UInt8.self))
                    let g = Float(row.load(fromByteOffset: x * 4 + 1, as: UInt8.self))
                    let b = Float(row.load(fromByteOffset: x * 4 + 2, as: UInt8.self))
                    if luminanceOnly {
                        planes[0][i] = 0.299 * r + 0.587 * g + 0.114 * b
                        planes[1][i] = -0.168736 * r - 0.331264 * g + 0.5 * b
                        planes[2][i] = 0.5 * r - 0.418688 * g - 0.081312 * b
                    } else {
                        planes[0][i] = r
                        planes[1][i] = g
                        planes[2][i] = b
                    }
                }
            }
        }
        return planes
    }

    /// The alpha of an RGBA `bitmap` as weights (0…1 per pixel), or nil when every pixel is opaque.
    private static func alphaWeights(of bitmap: Bitmap) -> [Float]? {
        let width = bitmap.width, height = bitmap.height, sourceRowBytes = bitmap.rowBytes
        var weights = [Float](repeating: 1, count: width * height)
        var opaque = true
        bitmap.withUnsafeBytes { raw in
            for y in 0..<height {
                let row = raw.baseAddress! + y * sourceRowBytes
                for x in 0..<width {
                    let a = row.load(fromByteOffset: x * 4 + 3, as: UInt8.self)
                    if a != 255 { opaque = false }
                    weights[y * width + x] = Float(a) / 255
                }
            }
        }
        return opaque ? nil : weights
    }

    /// A bitmap of `bitmap`'s size and format made of `planes` (converted back to RGB when only
    /// luma was boosted), each value rounded and clamped to a byte, alpha copied from `bitmap`.
    private func image(from planes: [[Float]], like bitmap: Bitmap) -> Bitmap {
        let width = bitmap.width, height = bitmap.height
        let isGray = bitmap.pixelFormat == .gray8
        let sourceRowBytes = bitmap.rowBytes
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let rowBytes = result.rowBytes
        bitmap.withUnsafeBytes { raw in
            let source = raw.baseAddress!
            result.withUnsafeMutableBytes { destination in
                let base = destination.baseAddress!
                @inline(__always) func byte(_ value: Float) -> UInt8 {
                    let v = value + 0.5
                    return v <= 0 ? 0 : (v >= 255 ? 255 : UInt8(v))
                }
                for y in 0..<height {
                    let row = base + y * rowBytes, inRow = source + y * sourceRowBytes
                    for x in 0..<width {
                        let i = y * width + x
                        if isGray {
                            row.storeBytes(of: byte(planes[0][i]), toByteOffset: x, as: UInt8.self)
                            continue
                        }
                        var r = planes[0][i], g = planes[1][i], b = planes[2][i]
                        if luminanceOnly {
                            let luma = r, cb = g, cr = b
                            r = luma + 1.402 * cr
                            g = luma - 0.344136 * cb - 0.714136 * cr
                            b = luma + 1.772 * cb
                        }
                        row.storeBytes(of: byte(r), toByteOffset: x * 4, as: UInt8.self)
                        row.storeBytes(of: byte(g), toByteOffset: x * 4 + 1, as: UInt8.self)
                        row.storeBytes(of: byte(b), toByteOffset: x * 4 + 2, as: UInt8.self)
                        row.storeBytes(of: inRow.load(fromByteOffset: x * 4 + 3, as: UInt8.self), toByteOffset: x * 4 + 3, as: UInt8.self)
                    }
                }
            }
        }
        return result
    }

    /// Replaces `plane` (straight values) by the sum of its detail layers, each times its gain,
    /// and the residue. With `alpha` (0…1 per pixel, for an image that is not opaque) every
    /// smoothing weighs the values by alpha, so the colour hidden under transparent pixels never
    /// reaches a visible one: the smoothed layers are the smoothed premultiplied values over the
    /// smoothed alpha.
    static func boost(_ plane: inout [Float], alpha: [Float]?, width: Int, height: Int, gains: [Float]) throws {
        let count = width * height
        var previous = plane // the straight layer being split
        var low = alpha.map { a in (0..<count).map { plane[$0] * a[$0] } } ?? plane
        var lowAlpha = alpha ?? []
        var smooth = [Float](repeating: 0, count: count), smoothAlpha = alpha == nil ? [] : smooth
        var scratch = [Float](repeating: 0, count: count)
        for i in 0..<count { plane[i] = 0 } // the accumulator of boosted detail
        for (level, gain) in gains.enumerated() {
            if WorkCancellation.isCancelled { throw CodecError.cancelled }
            let step = 1 << level
            hat(low, into: &smooth, scratch: &scratch, width: width, height: height, step: step)
            if alpha != nil {
                hat(lowAlpha, into: &smoothAlpha, scratch: &scratch, width: width, height: height, step: step)
                for i in 0..<count {
                    // Where the whole neighbourhood is transparent, nothing is smoothed.
                    let straight = smoothAlpha[i] > 1e-6 ? smooth[i] / smoothAlpha[i] : previous[i]
                    plane[i] += (previous[i] - straight) * gain
                    previous[i] = straight
                }
                swap(&lowAlpha, &smoothAlpha)
            } else {
                for i in 0..<count {
                    plane[i] += (previous[i] - smooth[i]) * gain
                    previous[i] = smooth[i]
                }
            }
            swap(&low, &smooth)
        }
        for i in 0..<count { plane[i] += previous[i] }
    }

    /// One smoothing: `output` = `input` through the 1-2-1 hat kernel with taps `step` apart,
    /// rows then columns, edges mirrored. Both passes run along rows (the vertical one combines
    /// three whole rows), so memory is read in order.
    static func hat(_ input: [Float], into output: inout [Float], scratch: inout [Float], width: Int, height: Int, step: Int) {
        input.withUnsafeBufferPointer { source in
            scratch.withUnsafeMutableBufferPointer { middle in
                for y in 0..<height {
                    let row = source.baseAddress! + y * width, out = middle.baseAddress! + y * width
                    // The interior needs no mirroring; the edges (all of a narrow row) do.
                    let first = min(step, width), last = max(first, width - step)
                    for x in first..<last {
                        out[x] = 0.25 * (2 * row[x] + row[x - step] + row[x + step])
                    }
                    for edge in [0..<first, last..<width] {
                        for x in edge { out[x] = 0.25 * (2 * row[x] + row[mirror(x - step, width)] + row[mirror(x + step, width)]) }
                    }
                }
            }
        }
        scratch.withUnsafeBufferPointer { middle in
            output.withUnsafeMutableBufferPointer { destination in
                for y in 0..<height {
                    let above = middle.baseAddress! + mirror(y - step, height) * width
                    let here = middle.baseAddress! + y * width
                    let below = middle.baseAddress! + mirror(y + step, height) * width
                    let out = destination.baseAddress! + y * width
                    for x in 0..<width { out[x] = 0.25 * (2 * here[x] + above[x] + below[x]) }
                }
            }
        }
    }

    /// An index reflected into 0..<size (about 0 and about size − 1, as often as needed).
    @inline(__always)
    static func mirror(_ index: Int, _ size: Int) -> Int {
        guard size > 1 else { return 0 }
        let period = 2 * (size - 1)
        var i = index % period
        if i < 0 { i += period }
        return i < size ? i : period - i
    }
}
