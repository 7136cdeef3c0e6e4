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
    /// When `scale` and `heightScale` are 0: the mark fitted into this box in pixels, enlarged
    /// if need be, its aspect ratio kept; a side of 0 follows the other (imgproxy's
    /// `watermark_size`). Nil: the mark at its own size.
    public var box: (width: Int, height: Int)?
    /// When set, `offsetX` is this fraction of the image's width instead, rounded to the nearest
    /// pixel (halves up), worked out on the image the mark is drawn on (thumbor's `20p`: 20 % of
    /// the width). 0–100 (past 1 the mark lies outside the image).
    public var relativeOffsetX: Double?
    /// `relativeOffsetX`'s vertical counterpart, a fraction of the image's height.
    public var relativeOffsetY: Double?

    /// 0: no shadow. Otherwise a soft black shadow under the mark (imgproxy's
    /// `watermark_shadow`): the mark's coverage blurred with this Gaussian sigma (at most
    /// `maxShadowSigma`), at 60 % opacity, moved down and right by half the sigma.
    public var shadowSigma: Double = 0

    /// 0: the mark upright. Otherwise the mark, after its scaling, turned by this many degrees
    /// clockwise about its centre (imgproxy's `watermark_rotate`), on a transparent canvas just
    /// large enough to hold it; quarter turns are exact, other angles bilinear (premultiplied,
    /// so no dark fringe). Positions and offsets then place the turned mark.
    public var rotation: Double = 0
    /// A centred mark placed as imgproxy's `calc_position` places it (half of the free space plus
    /// one, half to even: one pixel further in half the sizes) instead of the free space halved
    /// down (thumbor's and the native rule).
    public var centresAsImgproxy = false

    /// The largest shadow blur.
    public static let maxShadowSigma = 50.0

    /// A watermark drawing `mark` (named in `identifier` by `markIdentifier`) with the given
    /// `opacity`, `position`, offsets and scales (see the properties).
    /// - Throws: `CodecError.invalidParameters` for an opacity or scale outside 0…1.
    public init(mark: Bitmap, markIdentifier: String, opacity: Double = 1, position: Position = .southEast,
                offsetX: Int = 0, offsetY: Int = 0, scale: Double = 0, heightScale: Double = 0) throws(CodecError) {
        guard opacity >= 0, opacity <= 1 else { throw CodecError.invalidParameters("watermark opacity \(opacity) outside 0...1") }
        guard scale >= 0, scale <= 1, heightScale >= 0, heightScale <= 1 else {
            throw CodecError.invalidParameters("watermark scale \(scale)/\(heightScale) outside 0...1")
        }
        self.mark = mark
        self.markIdentifier = markIdentifier
        self.opacity = opacity
        self.position = position
        self.offsetX = offsetX
        self.offsetY = offsetY
        self.scale = scale
        self.heightScale = heightScale
    }

    /// `watermark(markIdentifier,opacity,position,offsetX,offsetY,scale)`, with `,h` followed by
    /// `heightScale` after the scale when it is above 0; never reads the mark's pixels.
    public var identifier: String {
        "watermark(\(markIdentifier),\(opacity),\(position),\(offsetX),\(offsetY),\(scale)"
            + (heightScale > 0 ? ",h\(heightScale)" : "") + (fittedBox.map { ",box\($0.width)x\($0.height)" } ?? "")
            + (shadowSigma > 0 ? ",sh\(shadowSigma)" : "")
            + (relativeOffsetX.map { ",rx\($0)" } ?? "") + (relativeOffsetY.map { ",ry\($0)" } ?? "")
            + (centresAsImgproxy ? ",cimg2" : "") + (turn != 0 ? ",rot\(turn))" : ")")
    }

    /// `rotation` in [0, 360): what is drawn (and what the identity names: -90 and 270 are one).
    var turn: Double {
        guard rotation.isFinite else { return 0 }
        let turn = rotation.truncatingRemainder(dividingBy: 360)
        return turn < 0 ? turn + 360 : turn
    }

    /// Offsets are clamped to this magnitude before any arithmetic, so no sum can overflow.
    private static let offsetLimit = 1 << 30

    private static func clamped(_ value: Int) -> Int { min(offsetLimit, max(-offsetLimit, value)) }

    /// The mark as it will be drawn onto a `imageWidth × imageHeight` image.
    /// - Throws: `CodecError.invalidParameters` when scaling would make a mark of more than four
    ///   times the image's pixels (a very tall, narrow mark, or a box far larger than the
    ///   image): it could only be clipped.
    /// The box the mark is fitted into, when it is (`box` with a side above 0, no scale).
    var fittedBox: (width: Int, height: Int)? {
        guard scale == 0, heightScale == 0, let box, box.width > 0 || box.height > 0 else { return nil }
        return (max(0, box.width), max(0, box.height))
    }

    func scaledMark(imageWidth: Int, imageHeight: Int) throws -> Bitmap {
        let rgba = mark.converted(to: .rgba8)
        // The factor the mark is scaled by: the smaller of the two boxes' (fit inside both).
        var factor = Double.infinity
        if let box = fittedBox {
            if box.width > 0 { factor = Double(box.width) / Double(rgba.width) }
            if box.height > 0 { factor = min(factor, Double(box.height) / Double(rgba.height)) }
        } else {
            guard scale > 0 || heightScale > 0 else { return rgba }
            if scale > 0 { factor = Double(imageWidth) * scale / Double(rgba.width) }
            if heightScale > 0 { factor = min(factor, Double(imageHeight) * heightScale / Double(rgba.height)) }
        }
        let width = max(1, Int(checked: min(Double(1 << 24), Double(rgba.width) * factor).rounded()))
        let exactHeight = Double(rgba.height) * Double(width) / Double(rgba.width)
        guard exactHeight * Double(width) <= Double(max(1 << 22, 4 * imageWidth * imageHeight)) else {
            throw CodecError.invalidParameters("a \(rgba.width)x\(rgba.height) watermark scaled to \(width) pixels wide is too large")
        }
        let height = max(1, Int(checked: exactHeight.rounded()))
        return try Resize(width: width, height: height, mode: .exact).process(rgba)
    }

    /// `fraction` (0–100) of `length` pixels, to the nearest pixel, halves up.
    static func fractionOf(_ length: Int, _ fraction: Double) -> Int {
        clamped(Int(checked: (Double(length) * min(100, max(0, fraction)) + 1e-5).rounded(.toNearestOrAwayFromZero)))
    }

    /// The top-left corner of the mark (`markWidth × markHeight`) in a `width × height` image,
    /// for every position except `.tiled`.
    func origin(width: Int, height: Int, markWidth: Int, markHeight: Int) -> (x: Int, y: Int) {
        let ox = relativeOffsetX.map { Self.fractionOf(width, $0) } ?? Self.clamped(offsetX)
        let oy = relativeOffsetY.map { Self.fractionOf(height, $0) } ?? Self.clamped(offsetY)
        func centred(_ free: Int) -> Int {
            centresAsImgproxy ? Int(checked: (Double(free + 1) / 2).rounded(.toNearestOrEven)) : free / 2
        }
        let left = ox, right = width - markWidth - ox, centreX = centred(width - markWidth) + ox
        let top = oy, bottom = height - markHeight - oy, centreY = centred(height - markHeight) + oy
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
        var mark = try scaledMark(imageWidth: bitmap.width, imageHeight: bitmap.height)
        // (Bounded as the scaling is: a turned mark past four times the image could only be
        // clipped.)
        if turn != 0 { mark = try Self.turned(mark, degrees: turn, maxPixels: max(1 << 22, 4 * bitmap.width * bitmap.height)) }
        guard shadowSigma > 0 else { return draw(mark, over: bitmap, inner: (mark.width, mark.height), shift: (0, 0)) }
        // The shadow: the mark's coverage in black, on a canvas grown by the blur's reach, then
        // the mark drawn over it; placed so that the mark itself lands where it would alone.
        let sigma = min(shadowSigma, Self.maxShadowSigma)
        let reach = Int((3 * sigma).rounded(.up))
        let drop = Int((sigma / 2).rounded())
        var shadow = Bitmap(width: mark.width + 2 * reach + drop, height: mark.height + 2 * reach + drop, pixelFormat: .rgba8)
        let markRowBytes = mark.rowBytes, shadowRowBytes = shadow.rowBytes
        mark.withUnsafeBytes { source in
            shadow.withUnsafeMutableBytes { target in
                for y in 0..<mark.height {
                    for x in 0..<mark.width {
                        target[(y + reach + drop) * shadowRowBytes + (x + reach + drop) * 4 + 3] = UInt8(Int(source[y * markRowBytes + x * 4 + 3]) * 6 / 10)
                    }
                }
            }
        }
        var stamp = try GaussianBlur(sigma: sigma).process(shadow).converted(to: .rgba8)
        stamp = try Watermark(mark: mark, markIdentifier: "", position: .offset(x: reach, y: reach)).process(stamp)
        return draw(stamp, over: bitmap, inner: (mark.width, mark.height), shift: (reach, reach))
    }

    /// `mark` (RGBA8) turned `degrees` clockwise (0 < degrees < 360) about its centre, on a
    /// transparent canvas that just holds it: quarter turns move pixels, other angles sample the
    /// mark bilinearly in premultiplied alpha.
    /// - Throws: `CodecError.invalidParameters` when the turned mark would pass `maxPixels`
    ///   (2²⁶ by default).
    public static func turned(_ mark: Bitmap, degrees: Double, maxPixels: Int = 1 << 26) throws(CodecError) -> Bitmap {
        // EXIF's orientations 6, 3 and 8 are the clockwise quarter turns.
        switch degrees {
        case 90: return Orientation.apply(6, to: mark).converted(to: .rgba8)
        case 180: return Orientation.apply(3, to: mark).converted(to: .rgba8)
        case 270: return Orientation.apply(8, to: mark).converted(to: .rgba8)
        default: break
        }
        let radians = degrees * .pi / 180
        let cosine = cos(radians), sine = sin(radians)
        let sourceWidth = mark.width, sourceHeight = mark.height
        let exactWidth = abs(Double(sourceWidth) * cosine) + abs(Double(sourceHeight) * sine)
        let exactHeight = abs(Double(sourceWidth) * sine) + abs(Double(sourceHeight) * cosine)
        // (Rounded first: float noise on a whole side must not add a column of nothing.)
        let width = max(1, Int(checked: (exactWidth - 1e-6).rounded(.up)))
        let height = max(1, Int(checked: (exactHeight - 1e-6).rounded(.up)))
        guard width * height <= maxPixels else {
            throw .invalidParameters("a \(sourceWidth)x\(sourceHeight) watermark turned by \(degrees)° is too large")
        }
        let source = mark.converted(to: .rgba8)
        var result = Bitmap(width: width, height: height, pixelFormat: .rgba8)
        let sourceRowBytes = source.rowBytes, rowBytes = result.rowBytes
        let centreX = Double(sourceWidth) / 2, centreY = Double(sourceHeight) / 2
        let resultCentreX = Double(width) / 2, resultCentreY = Double(height) / 2
        source.withUnsafeBytes { pixels in
            result.withUnsafeMutableBytes { bytes in
                /// The source pixel at (x, y), premultiplied; transparent outside the mark.
                func texel(_ x: Int, _ y: Int) -> (Float, Float, Float, Float) {
                    guard x >= 0, y >= 0, x < sourceWidth, y < sourceHeight else { return (0, 0, 0, 0) }
                    let offset = y * sourceRowBytes + x * 4
                    let alpha = Float(pixels[offset + 3]) / 255
                    return (Float(pixels[offset]) * alpha, Float(pixels[offset + 1]) * alpha, Float(pixels[offset + 2]) * alpha, alpha)
                }
                for y in 0..<height {
                    let dy = Double(y) + 0.5 - resultCentreY
                    for x in 0..<width {
                        let dx = Double(x) + 0.5 - resultCentreX
                        // The inverse turn (y points down: clockwise on screen), into pixel centres.
                        let sx = dx * cosine + dy * sine + centreX - 0.5
                        let sy = -dx * sine + dy * cosine + centreY - 0.5
                        guard sx > -1, sy > -1, sx < Double(sourceWidth), sy < Double(sourceHeight) else { continue }
                        let x0 = Int(sx.rounded(.down)), y0 = Int(sy.rounded(.down))
                        let fx = Float(sx - Double(x0)), fy = Float(sy - Double(y0))
                        let a = texel(x0, y0), b = texel(x0 + 1, y0), c = texel(x0, y0 + 1), d = texel(x0 + 1, y0 + 1)
                        func mix(_ p: Float, _ q: Float, _ r: Float, _ s: Float) -> Float {
                            (p * (1 - fx) + q * fx) * (1 - fy) + (r * (1 - fx) + s * fx) * fy
                        }
                        let alpha = mix(a.3, b.3, c.3, d.3)
                        guard alpha > 0.5 / 255 else { continue }
                        let offset = y * rowBytes + x * 4
                        func byte(_ v: Float) -> UInt8 { UInt8(max(0, min(255, v + 0.5))) }
                        bytes[offset] = byte(mix(a.0, b.0, c.0, d.0) / alpha)
                        bytes[offset + 1] = byte(mix(a.1, b.1, c.1, d.1) / alpha)
                        bytes[offset + 2] = byte(mix(a.2, b.2, c.2, d.2) / alpha)
                        bytes[offset + 3] = byte(alpha * 255)
                    }
                }
            }
        }
        return result
    }

    /// `bitmap` with `stamp` drawn over it: placed as a mark of the `inner` size would be,
    /// moved up and left by `shift` (where that mark sits inside `stamp`).
    private func draw(_ stamp: Bitmap, over bitmap: Bitmap, inner: (width: Int, height: Int), shift: (x: Int, y: Int)) -> Bitmap {
        var result = bitmap.converted(to: .rgba8)
        let opaque = result.isKnownOpaque
        let width = result.width, height = result.height
        let markWidth = stamp.width, markHeight = stamp.height
        let opacity = Float(self.opacity)
        let rowBytes = result.rowBytes, markRowBytes = stamp.rowBytes
        let tiled = position == .tiled
        // imgproxy's composite is worked in floating point and cast back, which truncates.
        let truncates = centresAsImgproxy
        // Copies are laid out by the mark's own size (a shadow's margin overlaps the next copy).
        let stepX = inner.width + max(0, Self.clamped(offsetX)), stepY = inner.height + max(0, Self.clamped(offsetY))
        var single = origin(width: width, height: height, markWidth: inner.width, markHeight: inner.height)
        single = (single.x - shift.x, single.y - shift.y)
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
                            row.storeBytes(of: Self.over(mark: m, markAlpha: a, base: p, baseOpaque: opaque, truncates: truncates),
                                           toByteOffset: x * 4, as: UInt32.self)
                        }
                    }
                }
                if tiled, centresAsImgproxy {
                    for y in Self.centredTiles(height, mark: inner.height, gap: gapY(height)) {
                        for x in Self.centredTiles(width, mark: inner.width, gap: gapX(width)) { draw(originX: x - shift.x, originY: y - shift.y) }
                    }
                } else if tiled {
                    for y in Swift.stride(from: 0, to: height, by: stepY) {
                        for x in Swift.stride(from: 0, to: width, by: stepX) { draw(originX: x - shift.x, originY: y - shift.y) }
                    }
                } else if position == .spread {
                    for y in Self.spread(height, inner.height) {
                        for x in Self.spread(width, inner.width) { draw(originX: x - shift.x, originY: y - shift.y) }
                    }
                } else {
                    draw(originX: single.x, originY: single.y)
                }
            }
        }
        if opaque { result.markOpaque() }
        return result
    }

    /// The gap between `.tiled` copies across an image `width` wide: the offset in pixels, or
    /// its fraction of the width when relative.
    private func gapX(_ width: Int) -> Int { max(0, relativeOffsetX.map { Self.fractionOf(width, $0) } ?? Self.clamped(offsetX)) }
    /// `gapX`'s vertical counterpart.
    private func gapY(_ height: Int) -> Int { max(0, relativeOffsetY.map { Self.fractionOf(height, $0) } ?? Self.clamped(offsetY)) }

    /// Where imgproxy's replicated mark puts its copies along a side `size` long: each copy is a
    /// tile of the mark with half the gap before it and the rest after, the tiles an odd number
    /// (enough to cover the side) laid edge to edge, the row centred on the side (its overhang
    /// halved, rounded down, to the left).
    static func centredTiles(_ size: Int, mark: Int, gap: Int) -> [Int] {
        let tile = max(1, mark + gap)
        var count = (size + tile - 1) / tile
        if count % 2 == 0 { count += 1 }
        let overhang = (count * tile - size) / 2
        return (0..<count).map { $0 * tile + gap / 2 - overhang }
    }

    /// Where `.spread` puts copies of a mark `mark` long along a side `size` long.
    static func spread(_ size: Int, _ mark: Int) -> [Int] {
        let count = size / max(1, mark)
        guard count > 0 else { return [] }
        let gap = (size - count * mark) / max(1, count - 1)
        return (0..<count).map { $0 * (mark + gap) }
    }

    /// Straight-alpha "over": `mark` (coverage `markAlpha`, 0…1) over `base`, each channel
    /// rounded to the nearest level (or, `truncates`, down, as libvips casts its float result).
    @inline(__always)
    static func over(mark: UInt32, markAlpha a: Float, base: UInt32, baseOpaque: Bool, truncates: Bool = false) -> UInt32 {
        @inline(__always) func channel(_ pixel: UInt32, _ c: UInt32) -> Float { Float((pixel >> (8 * c)) & 0xFF) }
        @inline(__always) func byte(_ v: Float) -> UInt32 {
            let v = truncates ? v + 1e-3 : v + 0.5
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

/// thumbor's `frame(image)`: a nine-patch frame drawn around the image. The frame image carries
/// Android's one-pixel guides: opaque black in its top row marks the columns that stretch, in its
/// left column the rows that stretch; in its bottom row and right column, the content area. The
/// image is first given a white margin as wide as the frame's edges outside the content area,
/// then the frame's cells are drawn over the whole, the fixed ones at their size and the
/// stretching ones shared out over what is left (bilinear), composed over the image by their
/// alpha.
public struct NinePatchFrame: ImageProcessor {
    /// The frame image with its guides (RGBA).
    public let frame: Bitmap
    /// The frame image's identity (`PreparedWatermark.identifier`): part of this step's.
    public let frameIdentifier: String
    /// The largest framed image.
    public var limit = OutputLimit()

    /// A frame from `frame` (at least 3 × 3 pixels: the guides and one pixel), the framed image
    /// within `limit`.
    /// - Throws: `CodecError.invalidParameters` for a smaller image.
    public init(frame: Bitmap, frameIdentifier: String, limit: OutputLimit = OutputLimit()) throws {
        guard frame.width >= 3, frame.height >= 3 else { throw CodecError.invalidParameters("a nine-patch frame is at least 3×3 pixels") }
        self.frame = frame.converted(to: .rgba8)
        self.frameIdentifier = frameIdentifier
        self.limit = limit
    }

    /// `frame(identity)`.
    public var identifier: String { "frame(\(frameIdentifier))" }

    /// Whether the frame's pixel is a guide mark (opaque black).
    private func isMark(_ x: Int, _ y: Int) -> Bool { frame.pixel(x: x, y: y) == [0, 0, 0, 255] }

    /// The margins (left, top, right, bottom): the frame's pixels outside its content area, from
    /// the first and last marks of the bottom row and of the right column — or, without such
    /// marks, of the top row and left column (Android's rule: the content area is then the
    /// stretching one).
    var margins: (left: Int, top: Int, right: Int, bottom: Int) {
        let inner = 1..<(frame.width - 1), innerRows = 1..<(frame.height - 1)
        var marksX = inner.filter { isMark($0, frame.height - 1) }, marksY = innerRows.filter { isMark(frame.width - 1, $0) }
        if marksX.isEmpty { marksX = inner.filter { isMark($0, 0) } }
        if marksY.isEmpty { marksY = innerRows.filter { isMark(0, $0) } }
        return ((marksX.first ?? 1) - 1, (marksY.first ?? 1) - 1, frame.width - 2 - (marksX.last ?? frame.width - 2),
                frame.height - 2 - (marksY.last ?? frame.height - 2))
    }

    /// Runs of alike guide marks along the top row (stretch: true) or the left column.
    private func runs(count: Int, _ stretches: (Int) -> Bool) -> [(start: Int, length: Int, stretches: Bool)] {
        var result: [(Int, Int, Bool)] = []
        var start = 1
        while start < count - 1 {
            let kind = stretches(start)
            var end = start + 1
            while end < count - 1, stretches(end) == kind { end += 1 }
            result.append((start, end - start, kind))
            start = end
        }
        return result
    }

    /// The image with its margin and the frame drawn over it.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let (left, top, right, bottom) = margins
        try limit.check(bitmap.width + left + right, bitmap.height + top + bottom, "the frame")
        var canvas = try Pad(width: bitmap.width + left + right, height: bitmap.height + top + bottom,
                             red: 255, green: 255, blue: 255, alpha: 255, gravity: .offset(.northWest, x: Double(left), y: Double(top)))
            .process(Flatten().process(bitmap.converted(to: .rgba8)))
            .converted(to: .rgba8)
        let columns = runs(count: frame.width) { isMark($0, 0) }, rows = runs(count: frame.height) { isMark(0, $0) }
        func share(_ runs: [(start: Int, length: Int, stretches: Bool)], total: Int) -> [Int] {
            let stretching = runs.filter(\.stretches).reduce(0) { $0 + $1.length }
            let fixed = runs.reduce(0) { $0 + $1.length } - stretching
            let free = max(0, total - fixed)
            return runs.map { run in run.stretches && stretching > 0 ? Int(Double(run.length) / Double(stretching) * Double(free) + 0.5) : run.length }
        }
        let widths = share(columns, total: canvas.width), heights = share(rows, total: canvas.height)
        let frame = self.frame
        let canvasWidth = canvas.width, canvasHeight = canvas.height, rowBytes = canvas.rowBytes
        try canvas.withUnsafeMutableBytes { target in
            try frame.withUnsafeBytes { source in
                func sample(_ x: Double, _ y: Double, within cell: (x: Int, y: Int, w: Int, h: Int)) -> SIMD4<Double> {
                    let x0 = min(Int(x), cell.x + cell.w - 1), y0 = min(Int(y), cell.y + cell.h - 1)
                    let x1 = min(x0 + 1, cell.x + cell.w - 1), y1 = min(y0 + 1, cell.y + cell.h - 1)
                    let fx = x - Double(x0), fy = y - Double(y0)
                    func at(_ px: Int, _ py: Int) -> SIMD4<Double> {
                        let o = py * frame.rowBytes + px * 4
                        return SIMD4(Double(source[o]), Double(source[o + 1]), Double(source[o + 2]), Double(source[o + 3]))
                    }
                    return at(x0, y0) * (1 - fx) * (1 - fy) + at(x1, y0) * fx * (1 - fy) + at(x0, y1) * (1 - fx) * fy + at(x1, y1) * fx * fy
                }
                var targetY = 0
                for (row, height) in zip(rows, heights) {
                    var targetX = 0
                    for (column, width) in zip(columns, widths) {
                        defer { targetX += width }
                        guard width > 0, height > 0, targetX + width <= canvasWidth, targetY + height <= canvasHeight else { continue }
                        let cell = (x: column.start, y: row.start, w: column.length, h: row.length)
                        // First pixel to first, last to last: a fixed cell is copied as it is, a
                        // stretching one spread (thumbor maps the last pixel short of the last).
                        let ratioX = width > 1 ? Double(column.length - 1) / Double(width - 1) : 0
                        let ratioY = height > 1 ? Double(row.length - 1) / Double(height - 1) : 0
                        for y in 0..<height {
                            let ty = targetY + y
                            for x in 0..<width {
                                let p = sample(Double(cell.x) + ratioX * Double(x), Double(cell.y) + ratioY * Double(y), within: cell)
                                let alpha = p[3] / 255
                                guard alpha > 0 else { continue }
                                let o = ty * rowBytes + (targetX + x) * 4
                                for c in 0..<3 {
                                    let value = p[c] * alpha + Double(target[o + c]) * (1 - alpha)
                                    target[o + c] = UInt8(min(255, max(0, value.rounded())))
                                }
                                target[o + 3] = 255
                            }
                        }
                    }
                    targetY += height
                    if WorkCancellation.isCancelled { throw CodecError.cancelled }
                }
            }
        }
        canvas.markOpaque()
        return canvas
    }
}
