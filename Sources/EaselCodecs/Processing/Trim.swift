/// Removes a uniform border: the largest frame of pixels within `tolerance` of a reference
/// pixel (the top-left one, or the bottom-right one). An image that is all border is left as
/// it is.
///
/// Two ways to measure "within": per channel (every channel, alpha included, differs by at
/// most `tolerance` levels, 0…255: the native and imgproxy meaning), or thumbor's Euclidean
/// distance between the colours as RGB(A) vectors (0…442; a gray image counts as RGB, so one
/// level of gray is √3 apart).
public struct Trim: ImageProcessor, Hashable {
    /// How a pixel's difference from the reference pixel is measured.
    public enum Metric: String, Sendable, Hashable {
        /// Largest difference on any one channel, 0…255.
        case perChannel
        /// Euclidean distance in RGB(A), 0…442 (thumbor's `trim`).
        case euclidean
    }

    /// The corner pixel whose colour is the border's.
    public enum Reference: String, Sendable, Hashable {
        /// The top-left pixel (the default).
        case topLeft
        /// The bottom-right pixel.
        case bottomRight
    }

    /// The largest difference from the reference that still counts as border, in `metric`'s units:
    /// 0…255 per channel, 0…442 Euclidean. Default 10.
    public var tolerance: Int
    /// How differences are measured; per channel by default.
    public var metric: Metric
    /// The pixel that gives the border colour; the top-left one by default.
    public var reference: Reference
    /// The border colour given outright (red, green, blue; opaque) instead of a corner pixel's
    /// (imgproxy's `trim` colour).
    public var colour: [UInt8]?
    /// Cut the same from the left and the right (the smaller of the two borders), and the same
    /// from the top and the bottom (imgproxy's `equal_hor`, `equal_ver`).
    public var equalHorizontal = false, equalVertical = false
    /// A region of the untrimmed image (left, top, right, bottom edges) kept of what the trim
    /// leaves: thumbor's manual crop beside `trim`, which names the same pixels of the original
    /// whatever the trim removed (the part of it inside the content; all of the content when
    /// none is). nil: the trim alone.
    public var thenCrop: [Int]?

    /// The largest meaningful tolerance of each metric (⌈255·√3⌉ for the Euclidean one:
    /// thumbor's 442).
    public static func maximumTolerance(_ metric: Metric) -> Int { metric == .perChannel ? 255 : 442 }

    /// A trim of the border within `tolerance` (in `metric`'s units) of the `reference` pixel.
    /// - Throws: `CodecError.invalidParameters` when the tolerance is outside
    ///   0…`maximumTolerance(metric)`.
    public init(tolerance: Int = 10, metric: Metric = .perChannel, reference: Reference = .topLeft) throws(CodecError) {
        guard tolerance >= 0, tolerance <= Self.maximumTolerance(metric) else {
            throw CodecError.invalidParameters("trim tolerance \(tolerance) outside 0...\(Self.maximumTolerance(metric))")
        }
        self.tolerance = tolerance
        self.metric = metric
        self.reference = reference
    }

    /// The same as `init(tolerance:metric:reference:)` (kept for callers written before it threw).
    /// - Throws: `CodecError.invalidParameters` when it is outside 0…255 (0…442 Euclidean).
    public static func validated(tolerance: Int = 10, metric: Metric = .perChannel,
                                 reference: Reference = .topLeft) throws(CodecError) -> Trim {
        try Trim(tolerance: tolerance, metric: metric, reference: reference)
    }

    /// The native spelling stays `trim(N)`, so existing cache keys do not move.
    public var identifier: String {
        var text = "trim(\(tolerance)"
        if metric == .euclidean { text += ",rgb" }
        if reference == .bottomRight { text += ",br" }
        if let colour { text += ",#" + colour.map { String(format: "%02x", $0) }.joined() }
        if equalHorizontal { text += ",eqh" }
        if equalVertical { text += ",eqv" }
        if let thenCrop { text += ",crop(" + thenCrop.map(String.init).joined(separator: ",") + ")" }
        return text + ")"
    }

    /// The rectangle left after removing the border, or nil when the image is all border. With a
    /// `colour` given, an image with transparency is read flattened onto that colour (as libvips'
    /// trim, imgproxy's, reads it): a transparent border counts as the colour.
    public func contentBounds(of bitmap: Bitmap) -> (x: Int, y: Int, width: Int, height: Int)? {
        if let colour, colour.count >= 3, bitmap.hasTransparentPixels, let flat = try? Flatten(red: colour[0], green: colour[1], blue: colour[2]).process(bitmap) {
            return opaqueBounds(of: flat)
        }
        return opaqueBounds(of: bitmap)
    }

    private func opaqueBounds(of bitmap: Bitmap) -> (x: Int, y: Int, width: Int, height: Int)? {
        let width = bitmap.width, height = bitmap.height, rowBytes = bitmap.rowBytes
        let bpp = bitmap.pixelFormat.bytesPerPixel
        let tolerance = self.tolerance, euclidean = metric == .euclidean
        // Squared, in the units the channels' squares are summed in (gray: three channels).
        let limit = tolerance * tolerance, grayWeight = bpp == 1 ? 3 : 1
        guard width > 0, height > 0 else { return nil }
        return bitmap.withUnsafeBytes { raw -> (x: Int, y: Int, width: Int, height: Int)? in
            let base = raw.baseAddress!
            let origin = reference == .topLeft ? 0 : (height - 1) * rowBytes + (width - 1) * bpp
            var reference = (0..<bpp).map { Int(base.load(fromByteOffset: origin + $0, as: UInt8.self)) }
            if let colour, colour.count >= 3 {
                reference = bpp == 1 ? [(Int(colour[0]) * 299 + Int(colour[1]) * 587 + Int(colour[2]) * 114 + 500) / 1000]
                    : [Int(colour[0]), Int(colour[1]), Int(colour[2]), 255]
            }
            func isBorder(_ row: UnsafeRawPointer, _ x: Int) -> Bool {
                if euclidean {
                    var sum = 0
                    for c in 0..<bpp {
                        let d = Int(row.load(fromByteOffset: x * bpp + c, as: UInt8.self)) - reference[c]
                        sum += d * d
                    }
                    return sum * grayWeight <= limit
                }
                for c in 0..<bpp where abs(Int(row.load(fromByteOffset: x * bpp + c, as: UInt8.self)) - reference[c]) > tolerance {
                    return false
                }
                return true
            }
            func rowIsBorder(_ y: Int) -> Bool {
                let row = base + y * rowBytes
                for x in 0..<width where !isBorder(row, x) { return false }
                return true
            }
            guard let top = (0..<height).first(where: { !rowIsBorder($0) }) else { return nil }
            let bottom = (top..<height).last(where: { !rowIsBorder($0) }) ?? top
            var left = width, right = -1
            for y in top...bottom {
                let row = base + y * rowBytes
                // Only columns outside the content found so far can widen it.
                var x = 0
                while x < left, isBorder(row, x) { x += 1 }
                if x < left { left = x }
                var r = width - 1
                while r > right, isBorder(row, r) { r -= 1 }
                if r > right { right = r }
            }
            var (x, y, w, h) = (left, top, right - left + 1, bottom - top + 1)
            if equalHorizontal {
                let cut = min(x, width - (x + w))
                (x, w) = (cut, width - 2 * cut)
            }
            if equalVertical {
                let cut = min(y, height - (y + h))
                (y, h) = (cut, height - 2 * cut)
            }
            return (x, y, w, h)
        }
    }

    /// Returns `bitmap` cropped to `contentBounds(of:)`, or `bitmap` itself when it has no border
    /// or is all border.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        var bounds = contentBounds(of: bitmap) ?? (0, 0, bitmap.width, bitmap.height)
        if let region = thenCrop, region.count == 4 {
            let left = max(region[0], bounds.x), top = max(region[1], bounds.y)
            let right = min(region[2], bounds.x + bounds.width), bottom = min(region[3], bounds.y + bounds.height)
            if left < right, top < bottom { bounds = (left, top, right - left, bottom - top) }
        }
        guard bounds.width != bitmap.width || bounds.height != bitmap.height else { return bitmap }
        return try Crop(x: bounds.x, y: bounds.y, width: bounds.width, height: bounds.height).process(bitmap)
    }
}
