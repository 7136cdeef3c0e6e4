import EaselSupport

/// imgproxy's geometry as one step: the crop, the resize, the crop to the result, the filters
/// that run between (blur, sharpen, pixelate), the extension to the box and to its aspect ratio,
/// and the padding, every size computed once from the size of the image the step receives, as
/// imgproxy computes them before it processes (`processing/prepare.go`, `calc_position.go`).
///
/// The facts it follows, where they differ from Easel's own steps: `force` with a side of 0
/// keeps the source's side; without enlarging, the two scales are divided by the smaller
/// (keeping the asked aspect) and the DPR is capped at what the source allows, and every size,
/// padding and offset in request units uses the capped DPR; zoom is per axis, before that cap;
/// a minimum width or height raises the scale and the result is still cut to the box;
/// `max_result_dimension` scales down the would-be result (crop, extension and padding
/// included); a centred window sits at `roundToEven((outer − inner + 1) / 2)`; an offset below
/// 1 in magnitude is a fraction of the outer size; extended and padded areas are transparent
/// black, as libvips' embed leaves them (a JPEG answer is flattened on white). Sizes are checked against the limit only past the source's
/// own size: a result no larger than the source always passes, as imgproxy (which checks the
/// source only) answers it.
public struct ImgproxyGeometry: ImageProcessor {
    /// The box's width, in request units (0: not asked for).
    public var width = 0
    /// The box's height, in request units (0: not asked for).
    public var height = 0
    /// imgproxy's resizing type: `fit`, `fill`, `fill-down`, `auto`, or `exact` (its `force`).
    public var mode: ResizeMode = .fit
    /// Whether the answer may be larger than the source (imgproxy's `enlarge`).
    public var enlarge = false
    /// Where the crop to the result lands (`g`): the nine directions with offsets, `fp`, or a
    /// smart strategy.
    public var gravity: Gravity = .center
    /// The device pixel ratio asked for (capped by what the source allows unless `enlarge`).
    public var dpr = 1.0
    /// imgproxy's `zoom`, per axis.
    public var zoom = (x: 1.0, y: 1.0)
    /// imgproxy's `min-width`, in request units (0: none).
    public var minWidth = 0
    /// imgproxy's `min-height`, in request units (0: none).
    public var minHeight = 0
    /// imgproxy's `crop`: a side of at least 1 is pixels (truncated), below 1 a fraction of the
    /// source, 0 the whole side; placed by its own gravity.
    public var crop: (width: Double, height: Double, gravity: Gravity)?
    /// `extend`, with its gravity; nil: no extension.
    public var extend: Gravity?
    /// `extend_aspect_ratio`, with its gravity; nil: none.
    public var aspectExtend: Gravity?
    /// Padding in request units (times the capped DPR).
    public var padding = (top: 0, right: 0, bottom: 0, left: 0)
    /// `max_result_dimension`; 0: none.
    public var maxResultSide = 0
    /// Run after the crop to the result and before the extension (imgproxy's blur, sharpen and
    /// pixelate).
    public var filters: [any ImageProcessor] = []
    /// Drawn last, on the padded result (imgproxy's watermark step): their offsets, boxes and
    /// shadows in request units, times the capped DPR as imgproxy scales them (half to even).
    public var marks: [Watermark] = []
    /// What a result larger than the source may measure.
    public var limit = OutputLimit()

    /// A geometry with no step: the image as it is, until the properties ask for more.
    public init() {}

    /// `imgproxy(WxH,mode,up|noup,g=…[,dpr=…][,z=…][,min=…][,c=…][,ex=…][,exar=…][,pd=…][,mrd=…][,[filters]][,wm=[marks]])`.
    public var identifier: String {
        var parts = ["\(width)x\(height)", mode.rawValue, enlarge ? "up" : "noup", "g=" + gravity.identifier]
        if dpr != 1 { parts.append("dpr=\(dpr)") }
        if zoom != (1, 1) { parts.append("z=\(zoom.x):\(zoom.y)") }
        if minWidth > 0 || minHeight > 0 { parts.append("min=\(minWidth)x\(minHeight)") }
        if let crop { parts.append("c=\(crop.width)x\(crop.height):\(crop.gravity.identifier)") }
        if let extend { parts.append("ex=" + extend.identifier) }
        if let aspectExtend { parts.append("exar=" + aspectExtend.identifier) }
        if padding != (0, 0, 0, 0) { parts.append("pd=\(padding.top),\(padding.right),\(padding.bottom),\(padding.left)") }
        if maxResultSide > 0 { parts.append("mrd=\(maxResultSide)") }
        if !filters.isEmpty { parts.append("[" + filters.identifier + "]") }
        if !marks.isEmpty { parts.append("wm=[" + marks.map(\.identifier).joined(separator: ",") + "]") }
        return "imgproxy(" + parts.joined(separator: ",") + ")"
    }

    /// The answer for `bitmap` as the whole source (see `process(_:planned:)`).
    /// - Throws: `CodecError.invalidParameters` for a result past the limit, `.cancelled`.
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        try process(bitmap, planned: (bitmap.width, bitmap.height))
    }
}

// MARK: - The layout

extension ImgproxyGeometry {
    /// Every size of one answer, computed from the source's size before any pixel is touched.
    public struct Layout: Sendable, Equatable {
        /// What is cut from the source first (its whole size when there is no crop).
        public var crop: Size
        /// What the crop is resized to.
        public var scaled: Size
        /// The DPR after imgproxy's cap (and `max_result_dimension`).
        public var dpr: Double
        /// The box in result pixels (0: not asked for).
        public var target: Size
        /// The crop to the result (0: that side is not cut).
        public var resultCrop: Size
        /// The aspect extension's canvas (0: none).
        public var aspectCanvas: Size
        /// Padding in result pixels.
        public var padding: (top: Int, right: Int, bottom: Int, left: Int)
        /// The answer's size.
        public var result: Size

        /// Every size equal (the padding compared side by side).
        public static func == (a: Layout, b: Layout) -> Bool {
            a.crop == b.crop && a.scaled == b.scaled && a.dpr == b.dpr && a.target == b.target && a.resultCrop == b.resultCrop
                && a.aspectCanvas == b.aspectCanvas && a.padding == b.padding && a.result == b.result
        }
    }

    /// A size in pixels.
    public struct Size: Sendable, Hashable, CustomStringConvertible {
        /// The width.
        public var width: Int
        /// The height.
        public var height: Int
        /// A `width × height` size.
        public init(_ width: Int, _ height: Int) {
            self.width = width
            self.height = height
        }
        /// `W×H`.
        public var description: String { "\(width)×\(height)" }
    }

    /// The layout for a `sourceWidth × sourceHeight` image (upright, turned and flipped as the
    /// URL asks).
    public func layout(sourceWidth: Int, sourceHeight: Int) -> Layout {
        let cropSize = Size(Self.cropSide(sourceWidth, crop?.width ?? 0), Self.cropSide(sourceHeight, crop?.height ?? 0))
        let whole = Size(Self.minNonZero(cropSize.width, sourceWidth), Self.minNonZero(cropSize.height, sourceHeight))
        var (scaleX, scaleY, dpr) = scales(for: whole)
        var sizes = self.sizes(whole, scaleX: scaleX, scaleY: scaleY, dpr: dpr)
        if maxResultSide > 0 {
            // imgproxy's `limitScale`: the would-be result, extension and padding included,
            // scaled down as a whole (once; rounding may leave it a pixel over).
            var outer = Size(Self.minNonZero(sizes.scaled.width, sizes.resultCrop.width), Self.minNonZero(sizes.scaled.height, sizes.resultCrop.height))
            if extend != nil {
                outer = Size(max(outer.width, sizes.target.width), max(outer.height, sizes.target.height))
            } else if aspectExtend != nil {
                outer = Size(max(outer.width, sizes.aspect.width), max(outer.height, sizes.aspect.height))
            }
            outer.width += Self.scaleEven(padding.left, dpr) + Self.scaleEven(padding.right, dpr)
            outer.height += Self.scaleEven(padding.top, dpr) + Self.scaleEven(padding.bottom, dpr)
            if outer.width > maxResultSide || outer.height > maxResultSide {
                let down = Double(maxResultSide) / Double(max(outer.width, outer.height))
                scaleX = max(scaleX * down, 1 / Double(whole.width))
                scaleY = max(scaleY * down, 1 / Double(whole.height))
                dpr *= down
                sizes = self.sizes(whole, scaleX: scaleX, scaleY: scaleY, dpr: dpr)
            }
        }
        let pad = (top: Self.scaleEven(padding.top, dpr), right: Self.scaleEven(padding.right, dpr),
                   bottom: Self.scaleEven(padding.bottom, dpr), left: Self.scaleEven(padding.left, dpr))
        var made = Size(Self.minNonZero(sizes.resultCrop.width, sizes.scaled.width), Self.minNonZero(sizes.resultCrop.height, sizes.scaled.height))
        made = Size(min(made.width, sizes.scaled.width), min(made.height, sizes.scaled.height))
        if extend != nil { made = Self.canvas(sizes.target, around: made) }
        if aspectExtend != nil, sizes.aspect.width > 0, sizes.aspect.height > 0 { made = Self.canvas(sizes.aspect, around: made) }
        return Layout(crop: whole, scaled: sizes.scaled, dpr: dpr, target: sizes.target, resultCrop: sizes.resultCrop,
                      aspectCanvas: sizes.aspect, padding: pad,
                      result: Size(made.width + pad.left + pad.right, made.height + pad.top + pad.bottom))
    }

    /// imgproxy's `calcScale`: the scale of each axis (result over source) and the capped DPR.
    private func scales(for whole: Size) -> (x: Double, y: Double, dpr: Double) {
        let sourceWidth = Double(whole.width), sourceHeight = Double(whole.height)
        let boxWidth = width > 0 ? Double(width) : sourceWidth, boxHeight = height > 0 ? Double(height) : sourceHeight
        // Shrinks (source over box), as imgproxy keeps them.
        var shrinkX = boxWidth != sourceWidth ? sourceWidth / boxWidth : 1
        var shrinkY = boxHeight != sourceHeight ? sourceHeight / boxHeight : 1
        if shrinkX != 1 || shrinkY != 1 {
            var type = mode
            if type == .auto {
                type = (sourceWidth - sourceHeight >= 0) == (boxWidth - boxHeight >= 0) ? .fill : .fit
            }
            if width == 0, type != .exact {
                shrinkX = shrinkY
            } else if height == 0, type != .exact {
                shrinkY = shrinkX
            } else if type == .fit {
                shrinkX = max(shrinkX, shrinkY)
                shrinkY = shrinkX
            } else if type == .fill || type == .fillDown {
                shrinkX = min(shrinkX, shrinkY)
                shrinkY = shrinkX
            }
        }
        shrinkX /= zoom.x
        shrinkY /= zoom.y
        var dpr = self.dpr
        if !enlarge {
            let least = min(shrinkX, shrinkY)
            if least < 1 {
                shrinkX /= least
                shrinkY /= least
                if extend == nil { dpr /= least }
            }
            dpr = min(dpr, min(shrinkX, shrinkY))
        }
        if minWidth > 0 {
            let needed = sourceWidth / Double(minWidth)
            if needed < shrinkX {
                shrinkY /= shrinkX / needed
                shrinkX = needed
            }
        }
        if minHeight > 0 {
            let needed = sourceHeight / Double(minHeight)
            if needed < shrinkY {
                shrinkX /= shrinkY / needed
                shrinkY = needed
            }
        }
        shrinkX = min(shrinkX / dpr, sourceWidth)
        shrinkY = min(shrinkY / dpr, sourceHeight)
        return (1 / shrinkX, 1 / shrinkY, dpr)
    }

    /// imgproxy's `calcSizes`: the box, the resized size, the crop to the result and the aspect
    /// extension's canvas at these scales.
    private func sizes(_ whole: Size, scaleX: Double, scaleY: Double, dpr: Double) -> (target: Size, scaled: Size, resultCrop: Size, aspect: Size) {
        let target = Size(Self.scale(width, dpr * zoom.x), Self.scale(height, dpr * zoom.y))
        let scaled = Size(max(1, Self.scale(whole.width, scaleX)), max(1, Self.scale(whole.height, scaleY)))
        var resultCrop = target
        if mode == .fillDown, !enlarge, target.width > 0, target.height > 0 {
            let overX = Double(target.width) / Double(scaled.width), overY = Double(target.height) / Double(scaled.height)
            if overX > overY, overX > 1 {
                resultCrop = Size(scaled.width, Self.scale(scaled.width, Double(target.height) / Double(target.width)))
            } else if overY > overX, overY > 1 {
                resultCrop = Size(Self.scale(scaled.height, Double(target.width) / Double(target.height)), scaled.height)
            }
        }
        var aspect = Size(0, 0)
        if aspectExtend != nil, target.width > 0, target.height > 0 {
            let outer = Size(Self.minNonZero(scaled.width, resultCrop.width), Self.minNonZero(scaled.height, resultCrop.height))
            let overX = Double(target.width) / Double(outer.width), overY = Double(target.height) / Double(outer.height)
            if overY > overX {
                aspect = Size(outer.width, Self.scale(outer.width, Double(target.height) / Double(target.width)))
            } else if overX > overY {
                aspect = Size(Self.scale(outer.height, Double(target.width) / Double(target.height)), outer.height)
            }
        }
        return (target, scaled, resultCrop, aspect)
    }

    /// The canvas an extension to `box` makes around an image of `size` (a side of the box
    /// not asked for, or smaller, keeps the image's).
    static func canvas(_ box: Size, around size: Size) -> Size {
        guard box.width > size.width || box.height > size.height else { return size }
        return Size(box.width > 0 ? max(box.width, size.width) : size.width, box.height > 0 ? max(box.height, size.height) : size.height)
    }

    // imgproxy's integer helpers (`imath`): `Scale` rounds half away from zero, the `…ToEven`
    // ones half to even; 0 stays 0.
    static func scale(_ value: Int, _ factor: Double) -> Int {
        value == 0 ? 0 : Int(checked: (Double(value) * factor).rounded())
    }
    static func scaleEven(_ value: Int, _ factor: Double) -> Int {
        value == 0 ? 0 : Int(checked: (Double(value) * factor).rounded(.toNearestOrEven))
    }
    static func minNonZero(_ a: Int, _ b: Int) -> Int { a == 0 ? b : b == 0 ? a : min(a, b) }

    /// imgproxy's `CalcCropSize`: 0 the whole side, at least 1 whole pixels (truncated), below 1
    /// a fraction of the side.
    static func cropSide(_ side: Int, _ crop: Double) -> Int {
        if crop <= 0 { return 0 }
        if crop >= 1 { return Int(checked: crop.rounded(.towardZero)) }
        return max(1, scale(side, crop))
    }
}

// MARK: - Placing a window

extension ImgproxyGeometry {
    /// The top-left corner of an `inner` window in an `outer` image, as imgproxy's
    /// `calcPosition` places it (offsets at least 1 in magnitude are pixels times `dpr`, below 1
    /// fractions of the outer size), inside the image. Smart gravities are placed by the caller.
    public static func position(outer: Size, inner: Size, gravity: Gravity, dpr: Double) -> (x: Int, y: Int) {
        var base = gravity, offsetX = 0.0, offsetY = 0.0
        if case .offset(let direction, let x, let y) = gravity { (base, offsetX, offsetY) = (direction, x, y) }
        var left: Int, top: Int
        switch base {
        case .focalPoint(let fx, let fy):
            left = scaleEven(outer.width, fx) - inner.width / 2
            top = scaleEven(outer.height, fy) - inner.height / 2
        case .focalPixel(let px, let py):
            left = px - inner.width / 2
            top = py - inner.height / 2
        default:
            func offset(_ value: Double, _ side: Int) -> Int {
                value.magnitude >= 1 ? Int(checked: (value * dpr).rounded(.toNearestOrEven)) : scaleEven(side, value)
            }
            let dx = offset(offsetX, outer.width), dy = offset(offsetY, outer.height)
            func centred(_ free: Int) -> Int { free == 0 ? 0 : Int(checked: (Double(free) / 2).rounded(.toNearestOrEven)) }
            left = centred(outer.width - inner.width + 1) + dx
            top = centred(outer.height - inner.height + 1) + dy
            if [.north, .northEast, .northWest].contains(base) { top = dy }
            if [.east, .northEast, .southEast].contains(base) { left = outer.width - inner.width - dx }
            if [.south, .southEast, .southWest].contains(base) { top = outer.height - inner.height - dy }
            if [.west, .northWest, .southWest].contains(base) { left = dx }
        }
        return (min(max(0, left), max(0, outer.width - inner.width)), min(max(0, top), max(0, outer.height - inner.height)))
    }

    /// Where `inner` goes in `image` by `gravity`: a smart gravity looks at the image's pixels,
    /// the others are placed by `position`.
    static func place(_ inner: Size, in image: Bitmap, gravity: Gravity, dpr: Double) throws(CodecError) -> (x: Int, y: Int) {
        if case .smart = gravity { return try gravity.place(width: inner.width, height: inner.height, in: image) }
        return position(outer: Size(image.width, image.height), inner: inner, gravity: gravity, dpr: dpr)
    }
}

// MARK: - Processing

extension ImgproxyGeometry: PlannedResize {
    /// The smallest decode that still makes the answer exact: the source times the larger of the
    /// two scales (more than the source when the answer enlarges: what a vector is drawn at).
    public func minimumSourceSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        let layout = layout(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        let factor = max(Double(layout.scaled.width) / Double(layout.crop.width), Double(layout.scaled.height) / Double(layout.crop.height))
        let need = (width: max(1, Int(checked: (Double(sourceWidth) * factor).rounded(.up))), height: max(1, Int(checked: (Double(sourceHeight) * factor).rounded(.up))))
        // Faces are looked for on the whole decode by a face gravity, the crop's or the image's.
        let faces: Gravity = crop?.gravity == .smart(.face) ? .smart(.face) : gravity
        return Resize.coveringFaces(need, gravity: faces, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// `bitmap`, which stands for an image of `planned` size (smaller when it was decoded
    /// reduced; its `imageExtent` then says exactly how much of it is image), made into the
    /// answer: every size comes from `planned`, so a reduced decode answers the size a full one
    /// does.
    public func process(_ bitmap: Bitmap, planned: (width: Int, height: Int)) throws -> Bitmap {
        let layout = layout(sourceWidth: planned.width, sourceHeight: planned.height)
        try check(layout.result, "the result", planned: planned)
        let (cut, cutExtent) = try cropped(bitmap, planned: planned, layout: layout)
        if WorkCancellation.isCancelled { throw CodecError.cancelled }
        let scaled = layout.scaled
        let made = Size(min(Self.minNonZero(layout.resultCrop.width, scaled.width), scaled.width),
                        min(Self.minNonZero(layout.resultCrop.height, scaled.height), scaled.height))
        var image: Bitmap
        if case .smart = gravity, made != scaled {
            // What is in the image decides the window: the crop is resized whole (within the
            // limit: a minimum size can make it far larger than the answer, which imgproxy makes
            // and Easel refuses), and the window is found on the crop before its resize (more of
            // it to look at), then cut from the resized image.
            try check(scaled, "the resized image", planned: planned)
            image = Self.resize(cut, extent: cutExtent, to: scaled)
            let (sx, sy) = (Double(cut.width) / Double(scaled.width), Double(cut.height) / Double(scaled.height))
            let window = try gravity.place(width: min(cut.width, max(1, Int(checked: (Double(made.width) * sx).rounded()))),
                                       height: min(cut.height, max(1, Int(checked: (Double(made.height) * sy).rounded()))), in: cut)
            let origin = (x: min(scaled.width - made.width, max(0, Int(checked: (Double(window.x) / sx).rounded()))),
                          y: min(scaled.height - made.height, max(0, Int(checked: (Double(window.y) / sy).rounded()))))
            image = try Crop(x: origin.x, y: origin.y, width: made.width, height: made.height).process(image)
        } else if made != scaled {
            // The window is placed in the resized image's coordinates, as imgproxy places it, and
            // only what it covers of the crop is resized (never the whole, possibly huge, image).
            let origin = Self.position(outer: scaled, inner: made, gravity: gravity, dpr: layout.dpr)
            let extent = cutExtent ?? Resampler.Extent(width: Double(cut.width), height: Double(cut.height))
            let (kx, ky) = (extent.width / Double(scaled.width), extent.height / Double(scaled.height))
            let left = min(cut.width - 1, max(0, Int(checked: (Double(origin.x) * kx).rounded())))
            let top = min(cut.height - 1, max(0, Int(checked: (Double(origin.y) * ky).rounded())))
            let right = min(cut.width, max(left + 1, Int(checked: (Double(origin.x + made.width) * kx).rounded())))
            let bottom = min(cut.height, max(top + 1, Int(checked: (Double(origin.y + made.height) * ky).rounded())))
            let window = try Crop(x: left, y: top, width: right - left, height: bottom - top).process(cut)
            image = Self.resize(window, extent: nil, to: made)
        } else {
            image = Self.resize(cut, extent: cutExtent, to: scaled)
        }
        return try finished(image, layout: layout)
    }

    /// The result's filters, extensions, padding and marks.
    private func finished(_ bitmap: Bitmap, layout: Layout) throws -> Bitmap {
        var image = try filters.process(bitmap)
        if let extend { image = try Self.embed(image, in: Self.canvas(layout.target, around: Size(image.width, image.height)), gravity: extend, dpr: layout.dpr) }
        if let aspectExtend, layout.aspectCanvas.width > 0, layout.aspectCanvas.height > 0 {
            image = try Self.embed(image, in: Self.canvas(layout.aspectCanvas, around: Size(image.width, image.height)), gravity: aspectExtend, dpr: layout.dpr)
        }
        let pad = layout.padding
        if pad != (0, 0, 0, 0) {
            image = try Self.embed(image, in: Size(image.width + pad.left + pad.right, image.height + pad.top + pad.bottom),
                                   gravity: .offset(.northWest, x: Double(pad.left), y: Double(pad.top)), dpr: 1)
        }
        for mark in marks {
            image = try Self.scaled(mark, dpr: layout.dpr).process(image)
        }
        return image
    }

    /// `mark` with its offsets, box and shadow in result pixels: times `dpr` (half to even).
    static func scaled(_ mark: Watermark, dpr: Double) -> Watermark {
        guard dpr != 1 else { return mark }
        func times(_ value: Int) -> Int { Int(checked: (Double(value) * dpr).rounded(.toNearestOrEven)) }
        var scaled = mark
        scaled.offsetX = times(mark.offsetX)
        scaled.offsetY = times(mark.offsetY)
        if case .offset(let x, let y) = mark.position { scaled.position = .offset(x: times(x), y: times(y)) }
        // (A side of 0 follows the other, as it did.)
        scaled.box = mark.box.map { (times($0.width), times($0.height)) }
        scaled.shadowSigma = min(Watermark.maxShadowSigma, mark.shadowSigma * dpr)
        return scaled
    }

    /// Refuses `size` past the limit where it is larger than the source (a result no larger than
    /// the source always passes, as imgproxy, which checks only the source, answers it).
    private func check(_ size: Size, _ what: String, planned: (width: Int, height: Int)) throws {
        let sourcePixels = Int.checkedProduct(planned.width, planned.height) ?? .max
        guard size.width <= max(limit.side, planned.width), size.height <= max(limit.side, planned.height),
              (Int.checkedProduct(size.width, size.height) ?? .max) <= max(limit.pixels, sourcePixels) else {
            throw CodecError.invalidParameters("\(what) would be \(size), past the limit of \(limit.side) a side and \(limit.pixels) in all")
        }
    }

    /// `bitmap` resampled to `size` (itself when it is that size already, all of it image).
    private static func resize(_ bitmap: Bitmap, extent: Resampler.Extent?, to size: Size) -> Bitmap {
        if bitmap.width == size.width, bitmap.height == size.height, extent == nil { return bitmap }
        return Resampler.resize(bitmap, width: size.width, height: size.height, extent: extent)
    }

    /// The crop cut from `bitmap` (in its own pixels: `planned` times the decode's factor), and
    /// how much of the cut is image (nil: all of it).
    private func cropped(_ bitmap: Bitmap, planned: (width: Int, height: Int), layout: Layout) throws -> (Bitmap, Resampler.Extent?) {
        let crop = layout.crop
        guard crop.width < planned.width || crop.height < planned.height else { return (bitmap, bitmap.imageExtent) }
        let extent = bitmap.imageExtent ?? Resampler.Extent(width: Double(bitmap.width), height: Double(bitmap.height))
        let factorX = extent.width / Double(planned.width), factorY = extent.height / Double(planned.height)
        // (At most the bitmap: a turned or flipped reduced decode was cut to whole pixels.)
        let reduced = Size(min(bitmap.width, max(1, Int(checked: (Double(crop.width) * factorX).rounded()))),
                           min(bitmap.height, max(1, Int(checked: (Double(crop.height) * factorY).rounded()))))
        let gravity = self.crop?.gravity ?? .center
        var origin: (x: Int, y: Int)
        if case .smart = gravity {
            origin = try Self.place(reduced, in: bitmap, gravity: gravity, dpr: 1)
        } else {
            let placed = Self.position(outer: Size(planned.width, planned.height), inner: crop, gravity: gravity, dpr: 1)
            origin = (Int(checked: (Double(placed.x) * factorX).rounded(.down)), Int(checked: (Double(placed.y) * factorY).rounded(.down)))
        }
        origin = (min(max(0, origin.x), bitmap.width - reduced.width), min(max(0, origin.y), bitmap.height - reduced.height))
        return (try Crop(x: origin.x, y: origin.y, width: reduced.width, height: reduced.height).process(bitmap), nil)
    }

    /// `image` on a transparent canvas of `size` (libvips' embed: 0, 0, 0, 0; a JPEG answer
    /// flattens it on white, as imgproxy's), placed by
    /// `gravity`.
    private static func embed(_ image: Bitmap, in size: Size, gravity: Gravity, dpr: Double) throws -> Bitmap {
        guard size.width != image.width || size.height != image.height else { return image }
        let origin = position(outer: size, inner: Size(image.width, image.height), gravity: gravity, dpr: dpr)
        return try Pad(width: size.width, height: size.height, red: 0, green: 0, blue: 0, alpha: 0,
                       gravity: .offset(.northWest, x: Double(origin.x), y: Double(origin.y))).process(image)
    }
}
