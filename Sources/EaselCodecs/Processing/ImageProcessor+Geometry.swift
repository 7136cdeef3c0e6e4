import EaselSupport
/// Mirrors the image horizontally, vertically or both.
public struct Flip: ImageProcessor, Hashable {
    /// Whether to mirror left to right (each row reversed).
    public var horizontal: Bool
    /// Whether to mirror top to bottom (the rows' order reversed).
    public var vertical: Bool

    /// A flip along the axes asked for; with neither, the image is left as it is.
    public init(horizontal: Bool, vertical: Bool) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    /// `flip(h)`, `flip(v)`, `flip(hv)`, or `flip()` when neither is set.
    public var identifier: String { "flip(\(horizontal ? "h" : "")\(vertical ? "v" : ""))" }

    /// Returns the mirrored bitmap (same size and pixel format), or `bitmap` itself when neither
    /// flag is set.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard horizontal || vertical else { return bitmap }
        // EXIF's mirrorings: 2 across, 4 down, 3 both (a half turn).
        return Orientation.apply(horizontal && vertical ? 3 : horizontal ? 2 : 4, to: bitmap)
    }
}

/// Cuts out a region that is clamped to the image (never an error): a rectangle in the
/// image's pixels, or a size — in pixels, or a fraction of the image's side when below 1 —
/// placed by a gravity. imgproxy's `crop` and thumbor's manual crop.
public struct RegionCrop: ImageProcessor, Hashable {
    /// Which part of the image to keep.
    public enum Region: Sendable, Hashable {
        /// Left, top, right, bottom edges in the image's pixels (right and bottom exclusive).
        case edges(left: Int, top: Int, right: Int, bottom: Int)
        /// `width × height` (0: the whole side; below 1: a fraction of it) placed by `gravity`.
        case size(width: Double, height: Double, gravity: Gravity)
    }

    /// The part of the image to keep, clamped to it when processed.
    public var region: Region

    /// A crop that keeps `region`.
    public init(_ region: Region) { self.region = region }

    /// `regioncrop(left,top,right,bottom)` for edges, `regioncrop(WxH,gravity)` for a size.
    public var identifier: String {
        switch region {
        case .edges(let left, let top, let right, let bottom): "regioncrop(\(left),\(top),\(right),\(bottom))"
        case .size(let width, let height, let gravity): "regioncrop(\(width)x\(height),\(gravity.identifier))"
        }
    }

    /// The rectangle cut from a `width × height` image, clamped inside it (at least 1×1).
    /// - Throws: `CodecError.libraryUnavailable` for the face gravity without its plugin.
    public func rectangle(in bitmap: Bitmap) throws(CodecError) -> (x: Int, y: Int, width: Int, height: Int) {
        switch region {
        case .edges(let left, let top, let right, let bottom):
            let x0 = min(max(0, left), bitmap.width - 1), y0 = min(max(0, top), bitmap.height - 1)
            let x1 = min(max(x0 + 1, right), bitmap.width), y1 = min(max(y0 + 1, bottom), bitmap.height)
            return (x0, y0, x1 - x0, y1 - y0)
        case .size(let width, let height, let gravity):
            let w = Self.side(width, bitmap.width), h = Self.side(height, bitmap.height)
            let origin = try gravity.place(width: w, height: h, in: bitmap)
            return (origin.x, origin.y, w, h)
        }
    }

    /// Returns the `rectangle(in:)` cut from `bitmap`, or `bitmap` itself when that is the whole
    /// image.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let rect = try rectangle(in: bitmap)
        if rect.x == 0, rect.y == 0, rect.width == bitmap.width, rect.height == bitmap.height { return bitmap }
        return try Crop(x: rect.x, y: rect.y, width: rect.width, height: rect.height).process(bitmap)
    }
}

/// Places the image on a `width × height` canvas of one colour (centred, or where `gravity`
/// says); an image larger than the canvas on a side keeps its size on that side. thumbor's
/// `fill` filter with `fit-in`, imgproxy's `extend`.
public struct Pad: ImageProcessor, Hashable {
    /// The canvas size in pixels (each at least 1); on a side where the image is larger, the canvas
    /// takes the image's size instead.
    public var width: Int, height: Int
    /// The canvas colour, 0…255 per channel, straight alpha (255: opaque).
    public var red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8
    /// Where the image goes on the canvas: one of the nine directions, or a focal point (fractions
    /// of the canvas) for the image's centre, as far as the canvas allows; any other gravity
    /// centres the image.
    public var gravity: Gravity
    /// The canvas takes the image's mean colour (every pixel's red, green and blue averaged),
    /// opaque, instead of `red`, `green`, `blue`, `alpha` (thumbor's `fill(auto)`).
    public var autoColour = false
    /// The canvas turns to the image's orientation (its width and height swapped when one is
    /// landscape and the other portrait: thumbor's `adaptive-fit-in` with `fill`).
    public var adaptive = false

    /// A canvas of at least `width × height` pixels (a side below 1 is taken as 1) in the colour
    /// `red`, `green`, `blue`, `alpha` (opaque by default), the image placed by `gravity`
    /// (centred by default).
    public init(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255, gravity: Gravity = .center) {
        self.width = max(1, width)
        self.height = max(1, height)
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
        self.gravity = gravity
    }

    /// `pad(WxH,r,g,b,a,gravity)`, or `pad(WxH,auto,gravity)`.
    public var identifier: String {
        (autoColour ? "pad(\(width)x\(height),auto,\(gravity.identifier)" : "pad(\(width)x\(height),\(red),\(green),\(blue),\(alpha),\(gravity.identifier)")
            + (adaptive ? ",adaptive)" : ")")
    }

    /// Returns `bitmap` as RGBA8 placed on the canvas, or `bitmap` itself when it already covers
    /// the canvas on both sides.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        var (width, height) = (self.width, self.height)
        if adaptive, (bitmap.width < bitmap.height && width > height) || (bitmap.width > bitmap.height && width < height) {
            swap(&width, &height)
        }
        let canvasWidth = max(width, bitmap.width), canvasHeight = max(height, bitmap.height)
        guard canvasWidth != bitmap.width || canvasHeight != bitmap.height else { return bitmap }
        let source = bitmap.converted(to: .rgba8)
        var canvas = Bitmap(width: canvasWidth, height: canvasHeight, pixelFormat: .rgba8)
        let freeX = canvasWidth - source.width, freeY = canvasHeight - source.height
        // The nine directions; a focal point (fractions of the canvas) is where the image's
        // centre goes, as far as the canvas allows; anything else centres the image.
        var (left, top) = gravity.offset(freeX: freeX, freeY: freeY) ?? (freeX / 2, freeY / 2)
        if case .focalPoint(let fx, let fy) = gravity {
            left = min(freeX, max(0, Int(checked: (fx * Double(canvasWidth)).rounded()) - source.width / 2))
            top = min(freeY, max(0, Int(checked: (fy * Double(canvasHeight)).rounded()) - source.height / 2))
        }
        let rowBytes = canvas.rowBytes, colour: [UInt8] = autoColour ? Self.meanColour(source) + [255] : [red, green, blue, alpha]
        // One row of the colour, copied into every row (then the image's row over it).
        let pattern = [UInt8]((0..<canvasWidth).flatMap { _ in colour })
        source.withUnsafeBytes { pixels in
            canvas.withUnsafeMutableBytes { bytes in
                pattern.withUnsafeBytes { fill in
                    for y in 0..<canvasHeight {
                        let row = bytes.baseAddress! + y * rowBytes
                        let sy = y - top
                        guard sy >= 0, sy < source.height else {
                            row.copyMemory(from: fill.baseAddress!, byteCount: canvasWidth * 4)
                            continue
                        }
                        // Only the sides around the image's row need the colour.
                        row.copyMemory(from: fill.baseAddress!, byteCount: left * 4)
                        (row + left * 4).copyMemory(from: pixels.baseAddress! + sy * source.rowBytes, byteCount: source.width * 4)
                        let after = (left + source.width) * 4
                        row.advanced(by: after).copyMemory(from: fill.baseAddress!, byteCount: canvasWidth * 4 - after)
                    }
                }
            }
        }
        if autoColour || alpha == 255, source.isKnownOpaque { canvas.markOpaque() }
        return canvas
    }

    /// Every pixel's red, green and blue averaged (an RGBA8 bitmap), truncated as thumbor does.
    static func meanColour(_ bitmap: Bitmap) -> [UInt8] {
        var sums = [Int](repeating: 0, count: 3)
        bitmap.withUnsafeBytes { bytes in
            for y in 0..<bitmap.height {
                let row = y * bitmap.rowBytes
                for x in 0..<bitmap.width { for c in 0..<3 { sums[c] += Int(bytes[row + x * 4 + c]) } }
            }
        }
        let count = bitmap.width * bitmap.height
        return sums.map { UInt8($0 / count) }
    }
}

/// thumbor's fit-in variants in a box of `width` × `height`, the aspect ratio kept:
/// `adaptive-fit-in` first turns the box to the image's orientation (a portrait image in a
/// landscape box gets a portrait box); `full-fit-in` covers the box instead of fitting in it (the
/// image's smaller side meets the box, nothing is cropped) and is resized even when that enlarges
/// it; plain `fit-in` enlarges only with `upscale`. Sides are rounded half up, as thumbor does.
public struct FitIn: ImageProcessor, Hashable {
    /// The box.
    public let width: Int, height: Int
    /// Turn the box to the image's orientation.
    public let adaptive: Bool
    /// Cover the box rather than fit in it.
    public let full: Bool
    /// Let a plain fit enlarge (a `full` one always may).
    public let upscale: Bool
    /// The largest result (a covering fit of a thin box can be very large).
    public var limit = OutputLimit()

    /// A fit in `width` × `height` (each at least 1).
    public init(width: Int, height: Int, adaptive: Bool, full: Bool, upscale: Bool = false, limit: OutputLimit = OutputLimit()) {
        self.limit = limit
        self.width = max(1, width)
        self.height = max(1, height)
        self.adaptive = adaptive
        self.full = full
        self.upscale = upscale
    }

    /// `fit-in(w,h,adaptive,full,upscale)`.
    public var identifier: String { "fit-in(\(width),\(height),\(adaptive),\(full),\(upscale))" }

    /// The size the image gets (`width` × `height` of the source).
    public func size(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        var (boxWidth, boxHeight) = (width, height)
        if adaptive, (sourceWidth < sourceHeight && boxWidth > boxHeight) || (sourceWidth > sourceHeight && boxWidth < boxHeight) {
            swap(&boxWidth, &boxHeight)
        }
        if !full, !upscale, boxWidth >= sourceWidth, boxHeight >= sourceHeight { return (sourceWidth, sourceHeight) }
        let widthRatio = Double(sourceWidth) / Double(boxWidth), heightRatio = Double(sourceHeight) / Double(boxHeight)
        // Fit: the side with the larger ratio meets the box; cover (full): the smaller one.
        if full ? widthRatio <= heightRatio : widthRatio >= heightRatio {
            return (boxWidth, max(1, Int(checked: (Double(sourceHeight) * Double(boxWidth) / Double(sourceWidth) + 1e-5).rounded())))
        }
        return (max(1, Int(checked: (Double(sourceWidth) * Double(boxHeight) / Double(sourceHeight) + 1e-5).rounded())), boxHeight)
    }

    /// The resized bitmap (Lanczos-3).
    /// - Throws: `CodecError.invalidParameters` for a result past `limit`.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let (w, h) = size(sourceWidth: bitmap.width, sourceHeight: bitmap.height)
        guard w != bitmap.width || h != bitmap.height else { return bitmap }
        try limit.check(w, h, "the fit")
        return try Resize(width: w, height: h, mode: .exact, upscale: true).process(bitmap)
    }
}
