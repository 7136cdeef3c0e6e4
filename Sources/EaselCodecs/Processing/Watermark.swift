import EaselSupport
import Foundation

/// Composites a mark (a logo, a signature) onto the image with straight-alpha "over".
///
/// ```swift
/// let mark = Watermark(mark: logo, markIdentifier: "logo-v2", opacity: 0.6,
///                      position: .southEast, offsetX: 10, offsetY: 10, scale: 0.2)
/// ```
///
/// The mark's alpha times `opacity` is its coverage; the result's alpha is right when the image
/// has alpha too, and an opaque image stays opaque. The mark clips at the image's edges. A
/// Gray8 image becomes RGBA8 (the mark may have colour); a Gray8 mark is used as opaque RGBA.
public struct Watermark: ImageProcessor {
    /// Where the mark goes.
    public enum Position: Sendable, Hashable, CustomStringConvertible {
        /// The centre, the middle of one edge, or one corner, `offsetX` and `offsetY` pixels from
        /// the edges the position names (a shift on an axis it centres).
        case center, north, south, east, west, northEast, northWest, southEast, southWest
        /// The mark's left edge `x` pixels from the image's left edge when `x ≥ 0`, else its right
        /// edge `−x` pixels from the image's right edge (−1: touching it… one pixel in); the same
        /// for `y` with top and bottom. `offsetX` and `offsetY` are not used.
        case offset(x: Int, y: Int)
        /// Repeated over the whole image from its top-left corner; `offsetX` and `offsetY` (when
        /// positive) are the gaps between copies.
        case tiled
        /// thumbor's `repeat`: as many whole copies as fit along each axis, spread evenly from
        /// edge to edge (the first at 0, the space left shared out between them); none on an
        /// axis the mark is larger than. `offsetX` and `offsetY` are not used.
        case spread

        /// Stable text for identifiers.
        public var description: String {
            switch self {
            case .center: "center"
            case .north: "north"
            case .south: "south"
            case .east: "east"
            case .west: "west"
            case .northEast: "northEast"
            case .northWest: "northWest"
            case .southEast: "southEast"
            case .southWest: "southWest"
            case .offset(let x, let y): "offset(\(x),\(y))"
            case .tiled: "tiled"
            case .spread: "spread"
            }
        }
    }

    /// The mark, RGBA8 straight alpha (Gray8 is converted).
    public var mark: Bitmap
    /// The caller's identity for `mark` (its checksum, or a name that changes when it does):
    /// part of `identifier`, which never looks at the pixels.
    public var markIdentifier: String
    /// 0 (invisible) … 1 (the mark's own alpha).
    public var opacity: Double
    /// Where the mark goes; `.southEast` by default.
    public var position: Position
    /// For the gravity positions: the margin in pixels from the edge the position names (west,
    /// east…); on an axis the position centres, a shift (positive right or down). For `.tiled`,
    /// the gap between copies. Unused by `.offset`.
    public var offsetX: Int
    /// `offsetX`'s vertical counterpart: the margin in pixels from the top or bottom edge, a shift
    /// (positive down) when the position centres vertically, the vertical gap between `.tiled`
    /// copies. Unused by `.offset`.
    public var offsetY: Int
    /// 0: the mark at its own size. Otherwise the mark's width as a fraction (0 < scale ≤ 1) of
    /// the image's width, its height following its aspect ratio (Lanczos-3).
    public var scale: Double
    /// 0: the height follows `scale`. Otherwise the mark fits inside `scale` × the image's
    /// width (when `scale` is not 0) and `heightScale` × its height, its aspect ratio kept
    /// (imgproxy's scale, thumbor's `w_ratio` and `h_ratio`).
    public var heightScale: Double

    /// A watermark drawing `mark` (named in `identifier` by `markIdentifier`) with the given
    /// `opacity`, `position`, offsets and scales (see the properties); an `opacity`, `scale` or
    /// `heightScale` outside 0…1 traps (`validated` throws instead).
    public init(mark: Bitmap, markIdentifier: String, opacity: Double = 1, position: Position = .southEast,
                offsetX: Int = 0, offsetY: Int = 0, scale: Double = 0, heightScale: Double = 0) {
        precondition(opacity >= 0 && opacity <= 1, "watermark opacity must be in 0...1")
        precondition(scale >= 0 && scale <= 1 && heightScale >= 0 && heightScale <= 1, "watermark scale must be in 0...1")
        self.mark = mark
        self.markIdentifier = markIdentifier
        self.opacity = opacity
        self.position = position
        self.offsetX = offsetX
        self.offsetY = offsetY
        self.scale = scale
        self.heightScale = heightScale
    }

    /// The same, for parameters from user input.
    /// - Throws: `CodecError.invalidParameters` for an opacity or scale out of range.
    public static func validated(mark: Bitmap, markIdentifier: String, opacity: Double = 1, position: Position = .southEast,
                                 offsetX: Int = 0, offsetY: Int = 0, scale: Double = 0,
                                 heightScale: Double = 0) throws(CodecError) -> Watermark {
        guard opacity >= 0, opacity <= 1 else { throw CodecError.invalidParameters("watermark opacity \(opacity) outside 0...1") }
        guard scale >= 0, scale <= 1, heightScale >= 0, heightScale <= 1 else {
            throw CodecError.invalidParameters("watermark scale \(scale)/\(heightScale) outside 0...1")
        }
        return Watermark(mark: mark, markIdentifier: markIdentifier, opacity: opacity, position: position,
                         offsetX: offsetX, offsetY: offsetY, scale: scale, heightScale: heightScale)
    }

    /// `watermark(markIdentifier,opacity,position,offsetX,offsetY,scale)`, with `,h` followed by
    /// `heightScale` after the scale when it is above 0; never reads the mark's pixels.
    public var identifier: String {
        "watermark(\(markIdentifier),\(opacity),\(position),\(offsetX),\(offsetY),\(scale)"
            + (heightScale > 0 ? ",h\(heightScale))" : ")")
    }

    /// Offsets are clamped to this magnitude before any arithmetic, so no sum can overflow.
    private static let offsetLimit = 1 << 30

    private static func clamped(_ value: Int) -> Int { min(offsetLimit, max(-offsetLimit, value)) }

    /// The mark as it will be drawn onto a `imageWidth × imageHeight` image.
    /// - Throws: `CodecError.invalidParameters` when scaling would make a mark of more than four
    ///   times the image's pixels (a very tall, narrow mark): it could only be clipped.
    func scaledMark(imageWidth: Int, imageHeight: Int) throws -> Bitmap {
        let rgba = mark.converted(to: .rgba8)
        guard scale > 0 || heightScale > 0 else { return rgba }
        // The factor the mark is scaled by: the smaller of the two boxes' (fit inside both).
        var factor = Double.infinity
        if scale > 0 { factor = Double(imageWidth) * scale / Double(rgba.width) }
        if heightScale > 0 { factor = min(factor, Double(imageHeight) * heightScale / Double(rgba.height)) }
        let width = max(1, Int(checked: min(Double(1 << 24), Double(rgba.width) * factor).rounded()))
        let exactHeight = Double(rgba.height) * Double(width) / Double(rgba.width)
        guard exactHeight * Double(width) <= Double(max(1 << 22, 4 * imageWidth * imageHeight)) else {
            throw CodecError.invalidParameters("a \(rgba.width)x\(rgba.height) watermark scaled to \(width) pixels wide is too large")
        }
        let height = max(1, Int(checked: exactHeight.rounded()))
        return try Resize(width: width, height: height, mode: .exact).process(rgba)
    }

    /// The top-left corner of the mark (`markWidth × markHeight`) in a `width × height` image,
    /// for every position except `.tiled`.
    func origin(width: Int, height: Int, markWidth: Int, markHeight: Int) -> (x: Int, y: Int) {
        let ox = Self.clamped(offsetX), oy = Self.clamped(offsetY)
        let left = ox, right = width - markWidth - ox, centreX = (width - markWidth) / 2 + ox
        let top = oy, bottom = height - markHeight - oy, centreY = (height - markHeight) / 2 + oy
        switch position {
        case .center: return (centreX, centreY)
        case .north: return (centreX, top)
        case .south: return (centreX, bottom)
        case .east: return (right, centreY)
        case .west: return (left, centreY)
        case .northEast: return (right, top)
        case .northWest: return (left, top)
        case .southEast: return (right, bottom)
        case .southWest: return (left, bottom)
        case .offset(let x, let y):
            let x = Self.clamped(x), y = Self.clamped(y)
            return (x >= 0 ? x : width + x - markWidth, y >= 0 ? y : height + y - markHeight)
        case .tiled, .spread: return (0, 0)
        }
    }

    /// Returns `bitmap` as RGBA8 with the mark drawn over it, clipped at its edges, or `bitmap`
    /// itself when `opacity` is 0.
    /// - Throws: `CodecError.invalidParameters` when the scaled mark would have more than four
    ///   times the image's pixels.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        if opacity == 0 { return bitmap }
        let stamp = try scaledMark(imageWidth: bitmap.width, imageHeight: bitmap.height)
        var result = bitmap.converted(to: .rgba8)
        let opaque = result.isKnownOpaque
        let width = result.width, height = result.height
        let markWidth = stamp.width, markHeight = stamp.height
        let opacity = Float(self.opacity)
        let rowBytes = result.rowBytes, markRowBytes = stamp.rowBytes
        let tiled = position == .tiled
        let stepX = markWidth + max(0, Self.clamped(offsetX)), stepY = markHeight + max(0, Self.clamped(offsetY))
        let single = origin(width: width, height: height, markWidth: markWidth, markHeight: markHeight)
        stamp.withUnsafeBytes { markBytes in
            let markBase = markBytes.baseAddress!
            result.withUnsafeMutableBytes { bytes in
                let base = bytes.baseAddress!
                /// Draws the part of the mark at (originX, originY) that lies inside the image.
                func draw(originX: Int, originY: Int) {
                    let x0 = max(0, originX), x1 = min(width, originX + markWidth)
                    let y0 = max(0, originY), y1 = min(height, originY + markHeight)
                    guard x0 < x1, y0 < y1 else { return }
                    for y in y0..<y1 {
                        let row = base + y * rowBytes
                        let markRow = markBase + (y - originY) * markRowBytes
                        for x in x0..<x1 {
                            let m = markRow.loadUnaligned(fromByteOffset: (x - originX) * 4, as: UInt32.self)
                            let a = Float(m >> 24) * opacity / 255
                            guard a > 0 else { continue }
                            let p = row.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self)
                            row.storeBytes(of: Self.over(mark: m, markAlpha: a, base: p, baseOpaque: opaque),
                                           toByteOffset: x * 4, as: UInt32.self)
                        }
                    }
                }
                if tiled {
                    for y in Swift.stride(from: 0, to: height, by: stepY) {
                        for x in Swift.stride(from: 0, to: width, by: stepX) { draw(originX: x, originY: y) }
                    }
                } else if position == .spread {
                    for y in Self.spread(height, markHeight) {
                        for x in Self.spread(width, markWidth) { draw(originX: x, originY: y) }
                    }
                } else {
                    draw(originX: single.x, originY: single.y)
                }
            }
        }
        if opaque { result.markOpaque() }
        return result
    }

    /// Where `.spread` puts copies of a mark `mark` long along a side `size` long.
    static func spread(_ size: Int, _ mark: Int) -> [Int] {
        let count = size / max(1, mark)
        guard count > 0 else { return [] }
        let gap = (size - count * mark) / max(1, count - 1)
        return (0..<count).map { $0 * (mark + gap) }
    }

    /// Straight-alpha "over": `mark` (coverage `markAlpha`, 0…1) over `base`.
    @inline(__always)
    static func over(mark: UInt32, markAlpha a: Float, base: UInt32, baseOpaque: Bool) -> UInt32 {
        @inline(__always) func channel(_ pixel: UInt32, _ c: UInt32) -> Float { Float((pixel >> (8 * c)) & 0xFF) }
        @inline(__always) func byte(_ v: Float) -> UInt32 {
            let v = v + 0.5
            return v <= 0 ? 0 : (v >= 255 ? 255 : UInt32(checked: v))
        }
        let baseAlpha: Float = baseOpaque ? 1 : Float(base >> 24) * (1 / 255)
        let keep = baseAlpha * (1 - a) // the base's share
        let outAlpha = a + keep
        guard outAlpha > 0 else { return 0 }
        let scale = 1 / outAlpha
        var packed = (baseOpaque ? 255 : byte(outAlpha * 255)) << 24
        for c in UInt32(0)..<3 {
            packed |= byte((channel(mark, c) * a + channel(base, c) * keep) * scale) << (8 * c)
        }
        return packed
    }
}
