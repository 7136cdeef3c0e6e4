import EaselSupport

/// A step that makes the same picture, only smaller, when it runs on an image decoded smaller
/// than the source (shrink-on-load) with its pixel parameters scaled: turns, flips and crops.
/// Steps of this kind before a chain's first resize no longer cost the reduced decode.
public protocol ScalableStep: ImageProcessor {
    /// The size the step makes of a `width × height` image.
    func outputSize(width: Int, height: Int) -> (width: Int, height: Int)
    /// The step for an image decoded at `factor` (0 < factor ≤ 1) of the size it was planned
    /// for, its pixel parameters scaled; nil when it cannot run on a reduced decode (a position
    /// given in the source's own pixels).
    func scaled(by factor: Double) -> (any ImageProcessor)?
}

/// A resize a chain's reduced decode is planned from: it says how small the image it receives
/// may be decoded, and makes its answer from such a decode knowing the size it stands for.
public protocol PlannedResize: ImageProcessor {
    /// The smallest size a `sourceWidth × sourceHeight` input may be decoded at and still make
    /// this step's answer exact.
    func minimumSourceSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int)
    /// The step on `bitmap`, which stands for an image of `planned` size (its `imageExtent`, when
    /// set, saying how much of it is image).
    func process(_ bitmap: Bitmap, planned: (width: Int, height: Int)) throws -> Bitmap
}

extension Resize: PlannedResize {
    /// The step as it is: a resize takes its sizes from the extent it is given.
    public func process(_ bitmap: Bitmap, planned: (width: Int, height: Int)) throws -> Bitmap { try process(bitmap) }
}

/// Geometry from the header: how small a chain's source may be decoded, whatever steps come
/// before its first resize, and the chain run on such a decode.
///
/// A chain that starts with `ScalableStep`s (a turn, a flip, a crop) and then a `Resize` is
/// planned through them: the header's size is carried through each step, the resize says what
/// it needs of the size it receives, and that need, as a fraction, is what the source is
/// decoded at. On the reduced decode the steps run with their pixel parameters scaled, and the
/// resize is told the exact size its input stands for, so the answer has the size a
/// full-size decode gives.
public enum ReducedDecode {
    /// The smallest upright size `chain` needs its source decoded at (`ImageDecoder`'s
    /// `covering`), or nil for full size.
    public static func covering(_ chain: [any ImageProcessor], info: ImageInfo) -> (width: Int, height: Int)? {
        guard let need = plannedCovering(chain, info: info), let (prefix, _) = split(chain) else { return nil }
        // A crop before the resize placed by faces looks for them on the decode it gets: at
        // least what faces are found on (`FaceDetector.decodeNeed`).
        let placesByFaces = prefix.contains { step in
            if let crop = step as? RegionCrop, case .size(_, _, .smart(.face)) = crop.region { return true }
            return false
        }
        guard placesByFaces else { return need }
        let faces = FaceDetector.decodeNeed(sourceWidth: info.planningWidth, sourceHeight: info.planningHeight)
        return (max(need.width, faces.width), max(need.height, faces.height))
    }

    /// `covering` from the sizes the chain's steps need.
    private static func plannedCovering(_ chain: [any ImageProcessor], info: ImageInfo) -> (width: Int, height: Int)? {
        guard let (prefix, resize) = split(chain) else { return nil }
        if prefix.isEmpty, let resize = resize as? Resize { return resize.minimumSourceSize(of: info) }
        // thumbor's fill draws a vector at what its box needs, as a fill `Resize` does; after a
        // crop (in the vector's own pixels) the vector is drawn at its own size.
        if let fill = resize as? ThumborFill, info.isVector {
            return prefix.isEmpty ? Resize(width: fill.width, height: fill.height, mode: .fill, upscale: true).minimumSourceSize(of: info) : nil
        }
        // A vector's crops are in its intrinsic pixels, but a `Resize` plans it at another size;
        // a planner (`ImgproxyGeometry`) plans from its intrinsic size, and it is drawn at the
        // size that asks (at most its own: a larger answer is enlarged from it).
        let plansVectors = !(resize is Resize)
        guard !info.isVector || plansVectors, let planned = size(after: prefix, info: info), planned.width > 0, planned.height > 0 else { return nil }
        let needed = resize.minimumSourceSize(sourceWidth: planned.width, sourceHeight: planned.height)
        // The fraction needed, n / p, on the axis that needs the most (whole numbers: no
        // rounding past a scale's boundary). A turn or flip cuts the reduced decode's partial
        // last pixel (`process`): one more pixel keeps what is left covering the need.
        var (n, p) = needed.width * planned.height >= needed.height * planned.width
            ? (needed.width, planned.width) : (needed.height, planned.height)
        if movesEdges(prefix) { n += 1 }
        func part(_ side: Int) -> Int { max(1, (side * n + p - 1) / p) }
        // (A vector may be drawn larger than its own size; an image is decoded whole.)
        guard n < p || info.isVector else { return nil }
        return (part(info.uprightWidth), part(info.uprightHeight))
    }

    /// Whether a step before the resize moves the right and bottom edges elsewhere (a flip, a turn).
    private static func movesEdges(_ prefix: [any ScalableStep]) -> Bool {
        prefix.contains { $0 is Flip || $0 is QuarterTurn }
    }

    /// `chain` applied to `decoded`, an upright decode of the source `info` describes at the
    /// size `covering` asked for or larger (a full-size decode, an animation's frame: the
    /// chain as it is).
    public static func process(_ chain: [any ImageProcessor], decoded: Bitmap, info: ImageInfo) throws -> Bitmap {
        let extent = decoded.imageExtent ?? Resampler.Extent(width: Double(decoded.width), height: Double(decoded.height))
        let factor = extent.width / Double(max(1, info.uprightWidth))
        guard let (prefix, resize) = split(chain) else { return try chain.process(decoded) }
        // A `Resize` after no step, or on a vector or a full-size decode, takes the bitmap as it
        // is; a planner (`ImgproxyGeometry`) is always told the size its input stands for (a
        // vector's intrinsic size, whatever it was drawn at).
        let planner = !(resize is Resize)
        if planner ? (factor == 1 && prefix.isEmpty) : (prefix.isEmpty || info.isVector || factor >= 1) {
            return try chain.process(decoded)
        }
        var bitmap = decoded, planned = (width: info.uprightWidth, height: info.uprightHeight)
        if let extent = decoded.imageExtent, movesEdges(prefix) {
            // The last column and row hold a fraction of a pixel of image; a flip or a turn
            // would move them to the other side, where no extent can say so. Cut them (less
            // than a pixel of the reduced image; `covering` asked for one more); the size below
            // still comes from the plan.
            bitmap = try Crop(x: 0, y: 0, width: max(1, Int(extent.width)), height: max(1, Int(extent.height))).process(decoded)
        }
        for step in prefix {
            if WorkCancellation.isCancelled { throw CodecError.cancelled }
            guard let scaled = step.scaled(by: factor) else { throw CodecError.invalidParameters("\(step.identifier) cannot run on a reduced decode") }
            bitmap = try scaled.process(bitmap)
            planned = step.outputSize(width: planned.width, height: planned.height)
        }
        // What the resize's input stands for, exactly (a scaled crop is whole pixels, the cut
        // edge a fraction short): the resize takes its size from this, so the answer has the
        // size a full decode gives; its kernel maps at most the bitmap's own pixels.
        let exact = Resampler.Extent(width: Double(planned.width) * factor, height: Double(planned.height) * factor)
        if exact.width != Double(bitmap.width) || exact.height != Double(bitmap.height) { bitmap.imageExtent = exact }
        if WorkCancellation.isCancelled { throw CodecError.cancelled }
        bitmap = try resize.process(bitmap, planned: planned)
        return try Array(chain[(prefix.count + 1)...]).process(bitmap)
    }

    /// The scalable steps before the chain's first resize, and that resize; nil when another
    /// step comes first, a step cannot scale, or there is no resize.
    private static func split(_ chain: [any ImageProcessor]) -> (prefix: [any ScalableStep], resize: any PlannedResize)? {
        var prefix: [any ScalableStep] = []
        for step in chain {
            if let resize = step as? any PlannedResize { return (prefix, resize) }
            guard let scalable = step as? any ScalableStep, scalable.scaled(by: 0.5) != nil else { return nil }
            prefix.append(scalable)
        }
        return nil
    }

    private static func size(after prefix: [any ScalableStep], info: ImageInfo) -> (width: Int, height: Int)? {
        prefix.reduce((width: info.uprightWidth, height: info.uprightHeight)) { size, step in
            step.outputSize(width: size.width, height: size.height)
        }
    }
}

extension Flip: ScalableStep {
    /// The size it is given.
    public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) { (width, height) }
    /// Itself: a flip has no pixel parameters.
    public func scaled(by factor: Double) -> (any ImageProcessor)? { self }
}

extension QuarterTurn: ScalableStep {
    /// The size given, its sides swapped by an odd number of turns.
    public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) { turns % 2 == 1 ? (height, width) : (width, height) }
    /// Itself: a turn has no pixel parameters.
    public func scaled(by factor: Double) -> (any ImageProcessor)? { self }
}

extension RegionCrop: ScalableStep {
    /// The size of the rectangle it cuts from an image of that size.
    public func outputSize(width: Int, height: Int) -> (width: Int, height: Int) {
        let rect = rectangle(width: width, height: height)
        return (rect.width, rect.height)
    }

    /// The crop in the pixels of an image `factor` of the size: edges outward to whole pixels,
    /// sizes up (a fraction stays a fraction), gravity offsets scaled; nil for a gravity at a
    /// pixel of the source.
    public func scaled(by factor: Double) -> (any ImageProcessor)? {
        guard factor > 0, factor <= 1 else { return nil }
        if factor == 1 { return self }
        switch region {
        case .edges(let left, let top, let right, let bottom):
            // Outward to whole pixels: the resize is told the exact extent.
            func down(_ value: Int) -> Int { Int(checked: (Double(value) * factor).rounded(.down)) }
            func up(_ value: Int) -> Int { Int(checked: (Double(value) * factor).rounded(.up)) }
            return RegionCrop(.edges(left: down(left), top: down(top), right: up(right), bottom: up(bottom)))
        case .size(let width, let height, let gravity):
            guard let gravity = gravity.scaled(by: factor) else { return nil }
            // A fraction stays a fraction; pixels scale (at least 1, so never read as a fraction).
            func side(_ value: Double) -> Double { value < 1 ? value : max(1, (value * factor).rounded(.up)) }
            return RegionCrop(.size(width: side(width), height: side(height), gravity: gravity))
        }
    }

    /// The size `rectangle(in:)` cuts from a `width × height` image (its place aside).
    func rectangle(width: Int, height: Int) -> (width: Int, height: Int) {
        switch region {
        case .edges(let left, let top, let right, let bottom):
            let x0 = min(max(0, left), width - 1), y0 = min(max(0, top), height - 1)
            return (min(max(x0 + 1, right), width) - x0, min(max(y0 + 1, bottom), height) - y0)
        case .size(let w, let h, _):
            return (Self.side(w, width), Self.side(h, height))
        }
    }

    /// A side of `.size`: 0 (or not finite) the whole side, below 1 a fraction of it, else pixels
    /// (at most the side, at least 1).
    static func side(_ value: Double, _ full: Int) -> Int {
        guard value > 0, value.isFinite else { return full }
        let pixels = value < 1 ? (value * Double(full)).rounded() : min(value, Double(full)).rounded()
        return min(full, max(1, Int(checked: pixels)))
    }
}

extension Gravity {
    /// The gravity for an image `factor` of the size it was planned for: offsets scale; a pixel
    /// of the source cannot (nil).
    func scaled(by factor: Double) -> Gravity? {
        switch self {
        case .focalPixel: nil
        case .offset(let base, _, _): base.scaled(by: factor).map { _ in scalingOffsets(by: factor) }
        default: self
        }
    }
}
