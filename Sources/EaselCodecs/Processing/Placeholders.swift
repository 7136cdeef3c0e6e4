import EaselSupport
import Foundation

/// Tiny stand-ins for an image while it loads: a BlurHash string, a ThumbHash, or one colour.
///
/// ```swift
/// let small = try Resize(width: 64, height: 48, mode: .fit).process(bitmap)
/// let blur = try Placeholder.blurHash(small)            // "LEHV6nWB2yk8pyo0adR*.7kCMdnj"-like
/// let thumb = try Placeholder.thumbHashBase64(small)    // at most 100×100 pixels in
/// let (r, g, b) = Placeholder.dominantColor(small)
/// ```
///
/// Gray8 bitmaps are read as RGB with three equal channels and alpha 255. The arithmetic is
/// `Double` throughout and follows the Python ports operation for operation, so that the
/// results are byte for byte those of PyPI `blurhash` 1.1.5 and `thumbhash-python` 1.0.1 (the
/// tests compare against both packages at test time). All three are meant for small inputs
/// (shrink the image first): their cost grows with the pixel count.
public enum Placeholder {
    // MARK: BlurHash

    /// The BlurHash (woltapp/blurhash) of the bitmap's RGB, alpha ignored, with
    /// `componentsX × componentsY` DCT components (each 1...9): `4 + 2 × componentsX ×
    /// componentsY` characters of base 83.
    ///
    /// Identical to `blurhash.encode(rgb_rows, components_x:, components_y:)` of PyPI `blurhash`
    /// 1.1.5: the same sRGB→linear conversion, summation order, truncations and floors.
    /// - Throws: `CodecError.invalidParameters` when a component count is outside 1...9.
    public static func blurHash(_ bitmap: Bitmap, componentsX: Int = 4, componentsY: Int = 3) throws -> String {
        guard (1...9).contains(componentsX), (1...9).contains(componentsY) else {
            throw CodecError.invalidParameters(
                "BlurHash component counts must be 1...9, got \(componentsX)×\(componentsY)")
        }
        let width = bitmap.width, height = bitmap.height
        let widthF = Double(width), heightF = Double(height)
        // cos(π·i·x / width), in the reference's order of operations.
        var cosinesX = [Double](repeating: 0, count: componentsX * width)
        for i in 0..<componentsX {
            for x in 0..<width { cosinesX[i * width + x] = cos(Double.pi * Double(i) * Double(x) / widthF) }
        }
        var cosinesY = [Double](repeating: 0, count: componentsY * height)
        for j in 0..<componentsY {
            for y in 0..<height { cosinesY[j * height + y] = cos(Double.pi * Double(j) * Double(y) / heightF) }
        }
        let linear = srgbToLinear
        let count = componentsX * componentsY
        // Red, green, blue of each component, components in the order j (outer), i (inner).
        var factors = [Double](repeating: 0, count: count * 3)
        bitmap.withUnsafeBytes { raw in
            let pixels = PixelReader(bitmap, raw)
            for j in 0..<componentsY {
                for i in 0..<componentsX {
                    let normalisation: Double = i == 0 && j == 0 ? 1 : 2
                    var red = 0.0, green = 0.0, blue = 0.0
                    for y in 0..<height {
                        let cosineY = cosinesY[j * height + y]
                        for x in 0..<width {
                            let basis = normalisation * cosinesX[i * width + x] * cosineY
                            let pixel = pixels.rgba(x, y)
                            red += basis * linear[Int(pixel.0)]
                            green += basis * linear[Int(pixel.1)]
                            blue += basis * linear[Int(pixel.2)]
                        }
                    }
                    let area = widthF * heightF
                    let k = (j * componentsX + i) * 3
                    factors[k] = red / area
                    factors[k + 1] = green / area
                    factors[k + 2] = blue / area
                }
            }
        }
        var maximumAC = 0.0
        for k in 3..<(count * 3) { maximumAC = max(maximumAC, abs(factors[k])) }

        var hash = ""
        hash.reserveCapacity(4 + 2 * count)
        appendBase83((componentsX - 1) + (componentsY - 1) * 9, length: 1, to: &hash)
        let quantisedMaximum = Int(checked: max(0, min(82, (maximumAC * 166 - 0.5).rounded(.down))))
        appendBase83(quantisedMaximum, length: 1, to: &hash)
        let dc = (linearToSRGB(factors[0]) << 16) + (linearToSRGB(factors[1]) << 8) + linearToSRGB(factors[2])
        appendBase83(dc, length: 4, to: &hash)
        let acScale = Double(quantisedMaximum + 1) / 166.0
        func quantise(_ value: Double) -> Int {
            let root = Double(signOf: value / acScale, magnitudeOf: pow(abs(value / acScale), 0.5))
            return Int(checked: max(0, min(18, (root * 9 + 9.5).rounded(.down))))
        }
        for c in 1..<count {
            let value = quantise(factors[c * 3]) * 19 * 19 + quantise(factors[c * 3 + 1]) * 19
                + quantise(factors[c * 3 + 2])
            appendBase83(value, length: 2, to: &hash)
        }
        return hash
    }

    /// sRGB byte → linear light, as the BlurHash reference computes it.
    private static let srgbToLinear: [Double] = (0..<256).map { byte in
        let value = Double(byte) / 255.0
        return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// Linear light → sRGB byte: clamped, then truncated after adding ½ (as the reference does).
    private static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0.0, min(1.0, value))
        if v <= 0.0031308 { return Int(checked: v * 12.92 * 255 + 0.5) }
        return Int(checked: (1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    private static let base83Digits = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".unicodeScalars)

    /// `value` as `length` base-83 digits, most significant first.
    private static func appendBase83(_ value: Int, length: Int, to string: inout String) {
        var divisor = 1
        for _ in 1..<max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            string.unicodeScalars.append(base83Digits[(value / divisor) % 83])
            divisor /= 83
        }
    }

    // MARK: ThumbHash

    /// The ThumbHash (Evan Wallace, github.com/evanw/thumbhash, `rgbaToThumbHash`) of a bitmap of
    /// at most 100×100 pixels, alpha included (straight alpha, as the reference expects).
    ///
    /// Byte for byte the result of `thumbhash.encode.rgba_to_thumbhash` of PyPI
    /// `thumbhash-python` 1.0.1, a faithful port of the JavaScript reference except in one
    /// respect this function shares: values exactly halfway between two integers round to even
    /// (Python's `round`) where JavaScript's `Math.round` rounds them up. That only happens for a
    /// few aspect ratios (e.g. 100×50 or 50×100 with alpha, 9×14 or 13×14 without) and for
    /// exactly-halfway coefficients; there the JS, Rust, Swift and Java references give a
    /// different luminance count or quantised value (the hash still decodes to a near-identical
    /// image).
    /// - Throws: `CodecError.invalidParameters` when the bitmap is wider or taller than 100
    ///   pixels.
    public static func thumbHash(_ bitmap: Bitmap) throws -> [UInt8] {
        let width = bitmap.width, height = bitmap.height
        guard width <= 100, height <= 100 else {
            throw CodecError.invalidParameters(
                "ThumbHash takes at most 100×100 pixels, got \(width)×\(height): shrink the image first")
        }
        let planes = ThumbHashPlanes(bitmap)
        let hasAlpha = planes.averageAlpha < Double(width * height)
        let luminanceLimit: Double = hasAlpha ? 5 : 7
        let longest = Double(max(width, height))
        let lx = max(1, roundHalfEven(luminanceLimit * Double(width) / longest))
        let ly = max(1, roundHalfEven(luminanceLimit * Double(height) / longest))

        var cosinesX = [Double](repeating: 0, count: width)
        let l = planes.encode(plane: 0, nx: max(lx, 3), ny: max(ly, 3), cosinesX: &cosinesX)
        let p = planes.encode(plane: 1, nx: 3, ny: 3, cosinesX: &cosinesX)
        let q = planes.encode(plane: 2, nx: 3, ny: 3, cosinesX: &cosinesX)
        let a = hasAlpha
            ? planes.encode(plane: 3, nx: 5, ny: 5, cosinesX: &cosinesX) : ThumbHashChannel(dc: 1.0, ac: [], scale: 1.0)

        let isLandscape = width > height
        var header24 = roundHalfEven(63 * l.dc)
        header24 |= roundHalfEven(31.5 + 31.5 * p.dc) << 6
        header24 |= roundHalfEven(31.5 + 31.5 * q.dc) << 12
        header24 |= roundHalfEven(31 * l.scale) << 18
        if hasAlpha { header24 |= 1 << 23 }
        var header16 = isLandscape ? ly : lx
        header16 |= roundHalfEven(63 * p.scale) << 3
        header16 |= roundHalfEven(63 * q.scale) << 9
        if isLandscape { header16 |= 1 << 15 }
        return thumbHashBytes(header24: header24, header16: header16, alpha: hasAlpha ? a : nil,
                              acs: hasAlpha ? [l.ac, p.ac, q.ac, a.ac] : [l.ac, p.ac, q.ac])
    }

    /// The hash's bytes: the two little-endian headers, the alpha plane's DC and scale when the
    /// image has alpha, then every AC (`acs`, plane by plane) as a nibble, low nibble first.
    private static func thumbHashBytes(header24: Int, header16: Int, alpha: ThumbHashChannel?, acs: [[Double]]) -> [UInt8] {
        let acStart = alpha != nil ? 6 : 5
        let acCount = acs.reduce(0) { $0 + $1.count }
        var hash = [UInt8](repeating: 0, count: acStart + (acCount + 1) / 2)
        hash[0] = UInt8(truncatingIfNeeded: header24)
        hash[1] = UInt8(truncatingIfNeeded: header24 >> 8)
        hash[2] = UInt8(truncatingIfNeeded: header24 >> 16)
        hash[3] = UInt8(truncatingIfNeeded: header16)
        hash[4] = UInt8(truncatingIfNeeded: header16 >> 8)
        if let a = alpha {
            hash[5] = UInt8(truncatingIfNeeded: roundHalfEven(15 * a.dc) | roundHalfEven(15 * a.scale) << 4)
        }
        var index = 0
        for ac in acs {
            for f in ac {
                hash[acStart + (index >> 1)] |= UInt8(truncatingIfNeeded: roundHalfEven(15 * f) << ((index & 1) * 4))
                index += 1
            }
        }
        return hash
    }

    /// `thumbHash(_:)` as standard base64 (RFC 4648 alphabet with `+` and `/`) *with* `=`
    /// padding, as `thumbhash-python`'s `image_to_thumbhash` prints it (Python's `b64encode`).
    /// Strip the trailing `=` for the unpadded form some clients use; both decode the same.
    public static func thumbHashBase64(_ bitmap: Bitmap) throws -> String {
        Data(try thumbHash(bitmap)).base64EncodedString()
    }

    /// Python's `round(x)` for floats: to the nearest integer, ties to even.
    private static func roundHalfEven(_ value: Double) -> Int { Int(checked: value.rounded(.toNearestOrEven)) }

    // MARK: Dominant colour

    /// The most common colour, deterministically:
    ///
    /// 1. The candidates are the pixels with alpha ≥ 128; if there are none, those with
    ///    alpha ≥ 1 (fully transparent pixels never count). Gray8 pixels are all opaque.
    /// 2. Each candidate falls in one of 4096 buckets by the top 4 bits of red, green and blue.
    ///    The bucket with the most candidates wins; a tie goes to the lowest bucket number
    ///    (`r >> 4 << 8 | g >> 4 << 4 | b >> 4`).
    /// 3. The result is the mean colour of the winning bucket's candidates, each channel
    ///    rounded half up.
    ///
    /// A fully transparent image gives the mean colour of all its pixels (straight RGB, which is
    /// often black). Colours are compared as stored (sRGB, not premultiplied).
    public static func dominantColor(_ bitmap: Bitmap) -> (red: UInt8, green: UInt8, blue: UInt8) {
        let width = bitmap.width, height = bitmap.height
        return bitmap.withUnsafeBytes { raw -> (red: UInt8, green: UInt8, blue: UInt8) in
            let pixels = PixelReader(bitmap, raw)
            var counts = [Int](repeating: 0, count: 4096)
            func bucket(_ pixel: (UInt8, UInt8, UInt8, UInt8)) -> Int {
                Int(pixel.0 >> 4) << 8 | Int(pixel.1 >> 4) << 4 | Int(pixel.2 >> 4)
            }
            func histogram(minimumAlpha: UInt8) -> Int {
                var candidates = 0
                for y in 0..<height {
                    for x in 0..<width {
                        let pixel = pixels.rgba(x, y)
                        guard pixel.3 >= minimumAlpha else { continue }
                        counts[bucket(pixel)] += 1
                        candidates += 1
                    }
                }
                return candidates
            }
            var minimumAlpha: UInt8 = 128
            if histogram(minimumAlpha: minimumAlpha) == 0 {
                minimumAlpha = 1
                if histogram(minimumAlpha: minimumAlpha) == 0 {
                    // Nothing visible: the mean of every pixel.
                    var sums = (0, 0, 0)
                    for y in 0..<height {
                        for x in 0..<width {
                            let pixel = pixels.rgba(x, y)
                            sums.0 += Int(pixel.0); sums.1 += Int(pixel.1); sums.2 += Int(pixel.2)
                        }
                    }
                    return mean(sums, count: width * height)
                }
            }
            var winner = 0
            for b in 1..<4096 where counts[b] > counts[winner] { winner = b }
            var sums = (0, 0, 0)
            for y in 0..<height {
                for x in 0..<width {
                    let pixel = pixels.rgba(x, y)
                    guard pixel.3 >= minimumAlpha, bucket(pixel) == winner else { continue }
                    sums.0 += Int(pixel.0); sums.1 += Int(pixel.1); sums.2 += Int(pixel.2)
                }
            }
            return mean(sums, count: counts[winner])
        }
    }

    private static func mean(_ sums: (Int, Int, Int), count: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
        (UInt8((sums.0 + count / 2) / count), UInt8((sums.1 + count / 2) / count), UInt8((sums.2 + count / 2) / count))
    }
}

/// Reads RGBA pixels from a bitmap's bytes, whatever its format and row padding (Gray8 as
/// three equal channels and alpha 255). Valid only inside `withUnsafeBytes`.
private struct PixelReader {
    let base: UnsafePointer<UInt8>
    let rowBytes: Int
    let isGray: Bool

    init(_ bitmap: Bitmap, _ raw: UnsafeRawBufferPointer) {
        base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
        rowBytes = bitmap.rowBytes
        isGray = bitmap.pixelFormat == .gray8
    }

    @inline(__always)
    func rgba(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        if isGray {
            let v = base[y * rowBytes + x]
            return (v, v, v, 255)
        }
        let p = base + y * rowBytes + x * 4
        return (p[0], p[1], p[2], p[3])
    }
}

/// One ThumbHash plane transformed: its DC, its ACs normalised to 0...1 and their scale.
private struct ThumbHashChannel {
    let dc: Double
    let ac: [Double]
    let scale: Double
}

/// The four planes a ThumbHash transforms, built as the reference builds them: every pixel
/// composited over the image's average colour, then RGB → LPQ, alpha beside.
private struct ThumbHashPlanes {
    let width: Int, height: Int
    /// Four planes of `width × height` values, row by row: luminance, yellow−blue, red−green, alpha.
    let values: [Double]
    /// The sum of every pixel's alpha, 0...1 each (the reference's `avg_a`, never divided).
    let averageAlpha: Double

    init(_ bitmap: Bitmap) {
        let width = bitmap.width, height = bitmap.height
        var values = [Double](repeating: 0, count: width * height * 4)
        var averageAlpha = 0.0
        bitmap.withUnsafeBytes { raw in
            let pixels = PixelReader(bitmap, raw)
            let average = Self.averageColor(pixels, width: width, height: height)
            averageAlpha = average.alpha
            values.withUnsafeMutableBufferPointer { planes in
                Self.composite(pixels, over: average, width: width, height: height, into: planes)
            }
        }
        self.width = width
        self.height = height
        self.values = values
        self.averageAlpha = averageAlpha
    }

    /// The alpha-weighted average colour, 0...1 a channel (black when no pixel is visible),
    /// and the sum of alpha.
    private static func averageColor(_ pixels: PixelReader, width: Int, height: Int)
        -> (red: Double, green: Double, blue: Double, alpha: Double) {
        var averageRed = 0.0, averageGreen = 0.0, averageBlue = 0.0, averageAlpha = 0.0
        for y in 0..<height {
            for x in 0..<width {
                let pixel = pixels.rgba(x, y)
                let alpha = Double(pixel.3) / 255.0
                averageRed += alpha / 255.0 * Double(pixel.0)
                averageGreen += alpha / 255.0 * Double(pixel.1)
                averageBlue += alpha / 255.0 * Double(pixel.2)
                averageAlpha += alpha
            }
        }
        if averageAlpha > 0 {
            averageRed /= averageAlpha
            averageGreen /= averageAlpha
            averageBlue /= averageAlpha
        }
        return (averageRed, averageGreen, averageBlue, averageAlpha)
    }

    /// Composites each pixel over `average`, then writes its RGB as LPQ, and its alpha, into
    /// the four planes of `planes`.
    private static func composite(_ pixels: PixelReader, over average: (red: Double, green: Double, blue: Double, alpha: Double),
                                  width: Int, height: Int, into planes: UnsafeMutableBufferPointer<Double>) {
        let count = width * height
        let averageRed = average.red, averageGreen = average.green, averageBlue = average.blue
        for y in 0..<height {
            for x in 0..<width {
                let pixel = pixels.rgba(x, y)
                let alpha = Double(pixel.3) / 255.0
                let red = averageRed * (1.0 - alpha) + alpha / 255.0 * Double(pixel.0)
                let green = averageGreen * (1.0 - alpha) + alpha / 255.0 * Double(pixel.1)
                let blue = averageBlue * (1.0 - alpha) + alpha / 255.0 * Double(pixel.2)
                let i = x + y * width
                planes[i] = (red + green + blue) / 3.0
                planes[count + i] = (red + green) / 2.0 - blue
                planes[2 * count + i] = red - green
                planes[3 * count + i] = alpha
            }
        }
    }

    /// DC, normalised ACs (0...1) and AC scale of plane `plane`, the ACs in the reference's
    /// triangular order (cy outer, cx inner, cx·ny < nx·(ny − cy)). `cosinesX`: scratch of
    /// `width` values, reused from plane to plane.
    func encode(plane: Int, nx: Int, ny: Int, cosinesX: inout [Double]) -> ThumbHashChannel {
        let width = self.width, height = self.height, count = width * height
        var dc = 0.0, scale = 0.0
        var ac: [Double] = []
        ac.reserveCapacity(nx * ny)
        values.withUnsafeBufferPointer { planes in
            let channel = UnsafeBufferPointer(rebasing: planes[(plane * count)..<((plane + 1) * count)])
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    for x in 0..<width {
                        cosinesX[x] = cos(Double.pi / Double(width) * Double(cx) * (Double(x) + 0.5))
                    }
                    var f = 0.0
                    for y in 0..<height {
                        let cosineY = cos(Double.pi / Double(height) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<width { f += channel[x + y * width] * cosinesX[x] * cosineY }
                    }
                    f /= Double(count)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
        }
        if scale > 0 {
            for i in ac.indices { ac[i] = 0.5 + 0.5 / scale * ac[i] }
        }
        return ThumbHashChannel(dc: dc, ac: ac, scale: scale)
    }
}
