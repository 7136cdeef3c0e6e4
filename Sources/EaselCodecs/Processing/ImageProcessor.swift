import EaselSupport
/// One step that turns a bitmap into another; processors compose into pipelines.
///
/// `identifier` is stable across runs and versions for the same parameters, so it can be part
/// of a cache key: two pipelines with equal identifiers make equal pixels.
public protocol ImageProcessor: Sendable {
    /// Stable text naming the step and its parameters: equal identifiers make equal pixels, so it
    /// can be part of a cache key.
    var identifier: String { get }
    /// Applies the step to `bitmap` and returns the result (`bitmap` itself when nothing changes).
    /// - Throws: `CodecError.invalidParameters` when the parameters do not fit the image,
    ///   `.cancelled` when the work is cancelled.
    func process(_ bitmap: Bitmap) throws -> Bitmap
}

extension Array where Element == any ImageProcessor {
    /// The identifiers of all steps, in order: a cache key for the whole chain.
    public var identifier: String { map(\.identifier).joined(separator: "|") }

    /// Runs every step in order; stops with `CodecError.cancelled` before a step when the work
    /// has been cancelled (long steps also check within, see `WorkCancellation`).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        try reduce(bitmap) { bitmap, step in
            if WorkCancellation.isCancelled { throw CodecError.cancelled }
            return try step.process(bitmap)
        }
    }
}

/// How a resize treats the target box.
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    /// Scale to fit inside the box, keeping the aspect ratio (one side may be smaller).
    case fit
    /// Scale to cover the box, keeping the aspect ratio, then crop to the box (where `gravity`
    /// says).
    case fill
    /// As `fill`; but when the source is too small to cover the box and may not be enlarged,
    /// the result is still cropped to the box's aspect ratio (imgproxy's `fill-down`).
    case fillDown = "fill-down"
    /// `fill` when the source and the box are both landscape or both portrait, else `fit`
    /// (imgproxy's `auto`).
    case auto
    /// Scale to exactly the box, ignoring the aspect ratio.
    case exact
}

/// Where a crop lands in the image it is cut from.
public enum Gravity: Sendable, Hashable {
    /// The centre, the middle of one edge, or one corner: the crop touches that edge or corner
    /// (centred along an edge).
    case center, north, south, east, west, northEast, northWest, southEast, southWest
    /// The crop is centred on this point (fractions of the width and height, 0...1), as close
    /// as the image's edges allow.
    case focalPoint(x: Double, y: Double)
    /// The crop is centred on this pixel of the source as decoded upright at full size (a
    /// resize with it is never shrunk on load, so its pixels are the source's).
    case focalPixel(x: Int, y: Int)
    /// The most interesting region, found by `SmartCrop`.
    case smart(SmartCrop.Strategy)
    /// One of the nine directions moved `x`, `y` pixels inward from the edges it touches (to the
    /// right and down from the centre), as far as the image allows (imgproxy's gravity offsets).
    /// Offsets are in the pixels of the image the window is placed in (rounded to whole pixels
    /// where they are used); a resize's crop, made at the source's scale, scales them from the
    /// box's. imgproxy's geometry (`ImgproxyGeometry`) reads an offset below 1 in magnitude as a
    /// fraction of the outer size.
    indirect case offset(Gravity, x: Double, y: Double)

    /// Stable text for identifiers (`c`, `n`, …, `fp:0.25:0.75`, `sm`, `entropy`).
    public var identifier: String {
        switch self {
        case .center: "c"
        case .north: "n"
        case .south: "s"
        case .east: "e"
        case .west: "w"
        case .northEast: "ne"
        case .northWest: "nw"
        case .southEast: "se"
        case .southWest: "sw"
        case .focalPoint(let x, let y): "fp:\(x):\(y)"
        case .focalPixel(let x, let y): "fpx:\(x):\(y)"
        case .smart(let strategy): strategy == .attention ? "sm" : strategy.rawValue
        case .offset(let base, let x, let y): "\(base.identifier)+\(Self.number(x))+\(Self.number(y))"
        }
    }

    /// A whole number as one (`12`), else as it is (`0.25`): identifiers made before offsets had
    /// fractions are unchanged.
    private static func number(_ value: Double) -> String {
        value.rounded() == value && value.magnitude < 1e15 ? String(Int(value)) : String(value)
    }

    /// The same gravity with its offsets times `factor` (a window placed at another scale).
    public func scalingOffsets(by factor: Double) -> Gravity {
        guard case .offset(let base, let x, let y) = self, factor != 1 else { return self }
        return .offset(base, x: (x * factor).rounded(), y: (y * factor).rounded())
    }

    /// The offset of one of the nine directions in `freeX × freeY` of free space (nil for a
    /// focal point or a smart crop, which need the image).
    public func offset(freeX: Int, freeY: Int) -> (x: Int, y: Int)? {
        switch self {
        case .center: (freeX / 2, freeY / 2)
        case .north: (freeX / 2, 0)
        case .south: (freeX / 2, freeY)
        case .east: (freeX, freeY / 2)
        case .west: (0, freeY / 2)
        case .northEast: (freeX, 0)
        case .northWest: (0, 0)
        case .southEast: (freeX, freeY)
        case .southWest: (0, freeY)
        case .focalPoint, .focalPixel, .smart: nil
        case .offset(let base, let x, let y):
            base.offset(freeX: freeX, freeY: freeY).map { position in
                let dx = Int(checked: x.rounded()), dy = Int(checked: y.rounded())
                // Inward from the edge the direction touches: leftwards from the east edge,
                // upwards from the south one, else rightwards and downwards.
                let x = [.east, .northEast, .southEast].contains(base) ? position.x - dx : position.x + dx
                let y = [.south, .southEast, .southWest].contains(base) ? position.y - dy : position.y + dy
                return (min(max(0, x), max(0, freeX)), min(max(0, y), max(0, freeY)))
            }
        }
    }

    /// The top-left corner of a `width × height` window placed in `bitmap` by this gravity.
    /// - Throws: `CodecError.libraryUnavailable` for the face gravity without its plugin.
    public func place(width: Int, height: Int, in bitmap: Bitmap) throws(CodecError) -> (x: Int, y: Int) {
        let freeX = bitmap.width - width, freeY = bitmap.height - height
        switch self {
        case .focalPoint(let fx, let fy):
            let x = Int(checked: (fx * Double(bitmap.width) - Double(width) / 2).rounded())
            let y = Int(checked: (fy * Double(bitmap.height) - Double(height) / 2).rounded())
            return (min(max(0, x), freeX), min(max(0, y), freeY))
        case .focalPixel(let px, let py):
            return (min(max(0, px - width / 2), freeX), min(max(0, py - height / 2), freeY))
        case .smart(let strategy):
            guard freeX > 0 || freeY > 0 else { return (0, 0) }
            let region = try SmartCrop.region(in: bitmap, width: width, height: height, strategy: strategy)
            return (min(max(0, region.x), freeX), min(max(0, region.y), freeY))
        default:
            return offset(freeX: freeX, freeY: freeY) ?? (freeX / 2, freeY / 2)
        }
    }
}

/// Resizes with Lanczos-3.
public struct Resize: ImageProcessor, Hashable {
    /// Width of the target box in pixels (at least 1).
    public var width: Int
    /// Height of the target box in pixels (at least 1).
    public var height: Int
    /// How the image is scaled to the box; `fit` by default.
    public var mode: ResizeMode
    /// Whether a source smaller than the box may be enlarged. Defaults: `fill` and `exact`
    /// enlarge, `fit`, `fill-down` and `auto` do not. Without it, `fill` crops a small source
    /// to at most the box and `fill-down` to the box's aspect ratio, at the source's scale.
    public var upscale: Bool
    /// Where `fill` (and `fill-down`, `auto`) crop.
    public var gravity: Gravity

    /// A resize to a `width × height` box in `mode` (a side below 1 is taken as 1); `upscale` nil
    /// takes the mode's default (enlarge for `fill` and `exact` only), and `gravity` places the crop.
    public init(width: Int, height: Int, mode: ResizeMode = .fit, upscale: Bool? = nil, gravity: Gravity = .center) {
        self.width = max(1, width)
        self.height = max(1, height)
        self.mode = mode
        self.upscale = upscale ?? (mode == .fill || mode == .exact)
        self.gravity = gravity
    }

    /// Only what decides the pixels: the default enlargement and the centre are left out (so
    /// identifiers made before they existed are unchanged), a gravity that cannot crop too.
    public var identifier: String {
        var text = "resize(\(width)x\(height),\(mode.rawValue)"
        switch mode {
        case .fit: if upscale { text += ",up" }
        case .fill: if !upscale { text += ",noup" }
        case .fillDown, .auto: text += upscale ? ",up" : ",noup"
        case .exact: if !upscale { text += ",noup" }
        }
        if mode != .fit, mode != .exact, gravity != .center { text += ",g=" + gravity.identifier }
        return text + ")"
    }

    /// The mode used for a `sourceWidth × sourceHeight` source (`auto` decided).
    public func effectiveMode(sourceWidth: Int, sourceHeight: Int) -> ResizeMode {
        guard mode == .auto else { return mode }
        let sourceLandscape = sourceWidth >= sourceHeight, boxLandscape = width >= height
        return sourceLandscape == boxLandscape ? .fill : .fit
    }

    /// `effectiveMode` for an image covering `extent` (a reduced decode's exact size).
    func effectiveMode(_ extent: Resampler.Extent) -> ResizeMode {
        guard mode == .auto else { return mode }
        return (extent.width >= extent.height) == (width >= height) ? .fill : .fit
    }

    /// The size `fit` and `fill` scale a `sourceWidth × sourceHeight` image to before any crop.
    public func scaledSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        scaledSize(sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                   extent: Resampler.Extent(width: Double(sourceWidth), height: Double(sourceHeight)))
    }

    /// `scaledSize` for a bitmap whose image covers `extent` of its pixels (a shrink-on-load
    /// decode whose scale did not divide the size: `Bitmap.imageExtent`), so the size is the one
    /// the full image would get.
    func scaledSize(sourceWidth: Int, sourceHeight: Int, extent: Resampler.Extent) -> (width: Int, height: Int) {
        let sourceWidth = extent.width, sourceHeight = extent.height
        // At least 1 a side: a shrink-on-load decode of a 1-pixel side has an extent of 1/8.
        let whole = (width: max(1, Int(checked: sourceWidth.rounded())), height: max(1, Int(checked: sourceHeight.rounded())))
        switch effectiveMode(extent) {
        case .exact:
            // Without enlarging, each side at most the source's (imgproxy's force).
            return upscale ? (width, height) : (min(width, whole.width), min(height, whole.height))
        case .fit, .auto:
            let scale = min(Double(width) / sourceWidth, Double(height) / sourceHeight)
            if scale >= 1, !upscale { return whole }
            return (max(1, Int(checked: (sourceWidth * scale).rounded())), max(1, Int(checked: (sourceHeight * scale).rounded())))
        case .fill, .fillDown:
            let scale = max(Double(width) / sourceWidth, Double(height) / sourceHeight)
            if scale > 1, !upscale { return whole }
            return (max(width, Int(checked: (sourceWidth * scale).rounded())), max(height, Int(checked: (sourceHeight * scale).rounded())))
        }
    }

    /// The smallest decoded size that still makes this resize exact (for shrink-on-load): the
    /// source's own size for a gravity in source pixels, at least what faces are found on for the
    /// face gravity (`FaceDetector.decodeNeed`).
    public func minimumSourceSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        if case .focalPixel = gravity { return (sourceWidth, sourceHeight) }
        return Self.coveringFaces(scaledSize(sourceWidth: sourceWidth, sourceHeight: sourceHeight), gravity: gravity,
                                  sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// `need`, grown to what faces are found on when `gravity` places by faces.
    static func coveringFaces(_ need: (width: Int, height: Int), gravity: Gravity, sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        guard gravity == .smart(.face) else { return need }
        let faces = FaceDetector.decodeNeed(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        return (max(need.width, faces.width), max(need.height, faces.height))
    }

    /// `minimumSourceSize` for an image with this header: planned from its planning size (a
    /// vector's is large, so it is rendered at the box), except for a gravity in source pixels,
    /// which needs the source at its own size (a vector's intrinsic size, where its
    /// coordinates are).
    public func minimumSourceSize(of info: ImageInfo) -> (width: Int, height: Int) {
        if case .focalPixel = gravity { return (info.uprightWidth, info.uprightHeight) }
        return Self.coveringFaces(scaledSize(sourceWidth: info.planningWidth, sourceHeight: info.planningHeight), gravity: gravity,
                                  sourceWidth: info.planningWidth, sourceHeight: info.planningHeight)
    }

    /// Returns `bitmap` resized with Lanczos-3 as `mode` says: `fill` and `fill-down` first crop it
    /// to the box's aspect ratio where `gravity` says, then resize (never building the covering
    /// image).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        // A shrink-on-load decode may hold a fraction of a pixel of padding at its right and
        // bottom: sizes, scales and `auto`'s choice come from the image's exact extent.
        let extent = bitmap.imageExtent ?? Resampler.Extent(width: Double(bitmap.width), height: Double(bitmap.height))
        let mode = effectiveMode(extent)
        guard mode == .fill || mode == .fillDown else {
            let size = scaledSize(sourceWidth: bitmap.width, sourceHeight: bitmap.height, extent: extent)
            return Resampler.resize(bitmap, width: size.width, height: size.height, extent: bitmap.imageExtent)
        }
        // Crop the source to the box's aspect ratio first, then resize to exactly the box: the
        // same pixels as scaling to cover and cropping, without ever building the (possibly
        // enormous, for extreme aspect ratios) covering image.
        // (The crop below is in whole pixels, so a fill maps whole pixels: the extent is for fit
        // and exact only. Mixing it into a crop measured worse than leaving it out.)
        var scale = max(Double(width) / Double(bitmap.width), Double(height) / Double(bitmap.height))
        var outputWidth = width, outputHeight = height
        if scale > 1, !upscale {
            if mode == .fill {
                // No enlargement: at most the box, at the source's scale.
                scale = 1
                outputWidth = min(width, bitmap.width)
                outputHeight = min(height, bitmap.height)
            } else {
                // The largest window of the box's aspect ratio inside the source.
                scale = min(Double(bitmap.width) / Double(width), Double(bitmap.height) / Double(height))
                outputWidth = min(bitmap.width, max(1, Int(checked: (Double(width) * scale).rounded())))
                outputHeight = min(bitmap.height, max(1, Int(checked: (Double(height) * scale).rounded())))
                scale = 1
            }
        }
        let cropWidth = min(bitmap.width, max(1, Int(checked: (Double(outputWidth) / scale).rounded())))
        let cropHeight = min(bitmap.height, max(1, Int(checked: (Double(outputHeight) / scale).rounded())))
        var cropped = bitmap
        if cropWidth != bitmap.width || cropHeight != bitmap.height {
            // (Offsets are in the box's pixels: at the source's scale here.)
            let origin = try gravity.scalingOffsets(by: 1 / scale).place(width: cropWidth, height: cropHeight, in: bitmap)
            cropped = try Crop(x: origin.x, y: origin.y, width: cropWidth, height: cropHeight).process(bitmap)
        }
        guard cropped.width != outputWidth || cropped.height != outputHeight else { return cropped }
        return Resampler.resize(cropped, width: outputWidth, height: outputHeight)
    }
}

/// Cuts out a rectangle.
public struct Crop: ImageProcessor, Hashable {
    /// The rectangle in the source's pixels: its top-left corner (`x`, `y`) and its size; it must
    /// lie inside the image.
    public var x: Int, y: Int, width: Int, height: Int

    /// A crop of the `width × height` rectangle whose top-left corner is (`x`, `y`), checked
    /// against the image only when processed.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// `crop(x,y,WxH)`.
    public var identifier: String { "crop(\(x),\(y),\(width)x\(height))" }

    /// - Throws: `CodecError.invalidParameters` when the rectangle is not inside the bitmap.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard x >= 0, y >= 0, width > 0, height > 0, x <= bitmap.width - width, y <= bitmap.height - height else {
            throw CodecError.invalidParameters("crop \(x),\(y) \(width)x\(height) outside a \(bitmap.width)x\(bitmap.height) image")
        }
        var result = Bitmap(width: width, height: height, pixelFormat: bitmap.pixelFormat)
        let bpp = bitmap.pixelFormat.bytesPerPixel, rowBytes = result.rowBytes
        bitmap.withUnsafeBytes { source in
            result.withUnsafeMutableBytes { destination in
                for row in 0..<height {
                    (destination.baseAddress! + row * rowBytes).copyMemory(
                        from: source.baseAddress! + (y + row) * bitmap.rowBytes + x * bpp, byteCount: width * bpp)
                }
            }
        }
        if bitmap.isKnownOpaque { result.markOpaque() }
        return result
    }
}

/// Luminance only (Rec. 601 weights); RGBA stays RGBA with equal channels, alpha kept.
public struct Grayscale: ImageProcessor, Hashable {
    /// The grayscale step; it has no parameters.
    public init() {}
    /// Always `grayscale`.
    public var identifier: String { "grayscale" }

    /// Returns an RGBA8 `bitmap` with each pixel's red, green and blue set to its luminance (alpha
    /// kept); a Gray8 `bitmap` as it is.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard bitmap.pixelFormat == .rgba8 else { return bitmap }
        var result = bitmap
        let opaque = bitmap.isKnownOpaque
        let rowBytes = result.rowBytes, width = result.width, height = result.height
        result.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let o = y * rowBytes + x * 4
                    let luma = (Int(bytes[o]) * 299 + Int(bytes[o + 1]) * 587 + Int(bytes[o + 2]) * 114 + 500) / 1000
                    bytes[o] = UInt8(luma); bytes[o + 1] = UInt8(luma); bytes[o + 2] = UInt8(luma)
                }
            }
        }
        if opaque { result.markOpaque() }
        return result
    }
}

/// Every pixel made opaque with the colour it holds, whatever its alpha (thumbor's PIL engine
/// converting RGBA to RGB for JPEG: the colour under a transparent pixel shows, black for most
/// encoders' transparent pixels). `Flatten` composites instead.
public struct DropAlpha: ImageProcessor, Hashable {
    /// The step; it has no parameters.
    public init() {}

    /// Always `dropalpha`.
    public var identifier: String { "dropalpha" }

    /// `bitmap` with every alpha 255 (known opaque); a bitmap without transparency as it is.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard bitmap.pixelFormat == .rgba8, bitmap.hasTransparentPixels else { return bitmap }
        var result = bitmap
        let rowBytes = result.rowBytes, width = result.width, height = result.height
        result.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width { bytes[y * rowBytes + x * 4 + 3] = 255 }
            }
        }
        result.markOpaque()
        return result
    }
}

/// Composites RGBA onto an opaque background colour (before encoding JPEG, which has no alpha).
public struct Flatten: ImageProcessor, Hashable {
    /// The background colour, 0…255 per channel; white by default.
    public var red: UInt8, green: UInt8, blue: UInt8

    /// Flattening onto the background `red`, `green`, `blue` (white by default).
    public init(red: UInt8 = 255, green: UInt8 = 255, blue: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// The background's alpha; below 255 the result is the image over a translucent background
    /// (Porter–Duff over) and keeps alpha.
    public var alpha: UInt8 = 255

    /// `flatten(r,g,b)` (`flatten(r,g,b,a)` for a translucent background).
    public var identifier: String { "flatten(\(red),\(green),\(blue)" + (alpha == 255 ? ")" : ",\(alpha))") }

    /// Returns an RGBA8 `bitmap` composited over the background, every alpha 255 (so known to be
    /// opaque) for an opaque background; a Gray8 `bitmap` as it is.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        guard bitmap.pixelFormat == .rgba8 else { return bitmap }
        if alpha < 255 { return translucent(bitmap) }
        var result = bitmap
        let rowBytes = result.rowBytes, width = result.width, height = result.height
        let background = [Int(red), Int(green), Int(blue)]
        result.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let o = y * rowBytes + x * 4
                    let alpha = Int(bytes[o + 3])
                    for c in 0..<3 {
                        bytes[o + c] = UInt8((Int(bytes[o + c]) * alpha + background[c] * (255 - alpha) + 127) / 255)
                    }
                    bytes[o + 3] = 255
                }
            }
        }
        result.markOpaque()
        return result
    }

    /// `bitmap` over the translucent background: alpha a + A(1 − a), colour (c·a + C·A(1 − a)) / alpha.
    private func translucent(_ bitmap: Bitmap) -> Bitmap {
        guard bitmap.hasTransparentPixels else { return bitmap }
        var result = bitmap
        let rowBytes = result.rowBytes, width = result.width, height = result.height
        let background = [Double(red), Double(green), Double(blue)], under = Double(alpha) / 255
        result.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let o = y * rowBytes + x * 4
                    let over = Double(bytes[o + 3]) / 255
                    let out = over + under * (1 - over)
                    guard out > 0 else { continue }
                    for c in 0..<3 {
                        bytes[o + c] = UInt8(min(255, ((Double(bytes[o + c]) * over + background[c] * under * (1 - over)) / out).rounded()))
                    }
                    bytes[o + 3] = UInt8(min(255, (out * 255).rounded()))
                }
            }
        }
        return result
    }
}
