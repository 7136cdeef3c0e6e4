/// thumbor's crop-and-resize to a box (its transformer's `auto_crop`, then `resize`): the image
/// is first cut to the box's aspect ratio around a focus — the crop's size and place rounded as
/// thumbor rounds them (half to even), no cut when the two ratios agree to two decimals — and the
/// cut is then resized to the box. Resizing first and cropping after, as `Resize` does, samples
/// the image half a pixel elsewhere.
///
/// The focus is the gravity's: a side or corner of the image (`north` is the top edge's middle),
/// its centre, a pixel (`focalPixel`, thumbor's `focal()`), or for `smart(.face)` what thumbor's
/// detectors find (`FaceDetector.thumborFocus`: faces, else corners), on the whole image.
public struct ThumborFill: PlannedResize, Hashable {
    /// The box.
    public let width: Int, height: Int
    /// The longest side a smart fill's detectors look at (the decode it asks for).
    public static let smartSide = 4096
    /// Where the crop is centred (clamped inside the image).
    public let gravity: Gravity

    /// A fill of the `width` × `height` box (each at least 1) around `gravity`'s focus: a compass
    /// gravity, the centre, or `focalPixel`; another gravity is taken as the centre.
    public init(width: Int, height: Int, gravity: Gravity = .center) {
        self.width = max(1, width)
        self.height = max(1, height)
        self.gravity = gravity
    }

    private var isSmart: Bool { gravity.isSmart }

    /// `thumborfill(WxH,gravity)`.
    public var identifier: String { "thumborfill(\(width)x\(height),\(gravity.identifier))" }

    /// The crop (left, top, width, height) thumbor cuts from a `sourceWidth` × `sourceHeight`
    /// image before its resize; the whole image when the aspect ratios agree. `detected`: a
    /// focus found in the pixels (a smart fill's), used instead of the gravity's.
    public func crop(sourceWidth w: Int, sourceHeight h: Int, detected: (x: Double, y: Double)? = nil) -> (x: Int, y: Int, width: Int, height: Int) {
        let (sw, sh, tw, th) = (Double(w), Double(h), Double(width), Double(height))
        func hundredths(_ value: Double) -> Double { (value * 100).rounded(.toNearestOrEven) }
        guard hundredths(sw / sh) != hundredths(tw / th) else { return (0, 0, w, h) }
        let (cw, ch): (Int, Int) = tw / sw > th / sh
            ? (w, min(h, max(1, Int(checked: (sw * th / tw).rounded(.toNearestOrEven)))))
            : (min(w, max(1, Int(checked: (tw * sh / th).rounded(.up)))), h)
        // (thumbor's centre of mass is a floor division.)
        let (fx, fy) = detected ?? focus(sw, sh)
        func place(_ centre: Double, _ cut: Int, _ whole: Int) -> Int {
            Int(checked: min(max(centre.rounded(.down) - Double(cut) / 2, 0), Double(whole - cut)).rounded(.toNearestOrEven))
        }
        return (place(fx, cw, w), place(fy, ch, h), cw, ch)
    }

    /// The focus in a `w` × `h` image: thumbor's alignment points (0, the middle or the far edge)
    /// or the focal pixel.
    private func focus(_ w: Double, _ h: Double) -> (Double, Double) {
        switch gravity {
        case .north: (w / 2, 0)
        case .south: (w / 2, h)
        case .east: (w, h / 2)
        case .west: (0, h / 2)
        case .northEast: (w, 0)
        case .northWest: (0, 0)
        case .southEast: (w, h)
        case .southWest: (0, h)
        case .focalPixel(let x, let y): (Double(x), Double(y))
        default: (w / 2, h / 2)
        }
    }

    /// The decode the box needs: the crop's sides resized to the box (as a fill's).
    public func minimumSourceSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        let need = Resize(width: width, height: height, mode: .fill, upscale: true).minimumSourceSize(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        guard isSmart else { return need }
        // A smart fill detects on the decode, as thumbor does on the whole image: at full size up
        // to `smartSide` on the long side (the same faces and corners thumbor finds), no larger
        // past it (a vector is never drawn huge for it).
        let scale = min(1, Double(Self.smartSide) / Double(max(1, sourceWidth, sourceHeight)))
        return (max(need.width, Int(checked: (Double(sourceWidth) * scale).rounded(.up))),
                max(need.height, Int(checked: (Double(sourceHeight) * scale).rounded(.up))))
    }

    /// The crop and resize on `bitmap` as it is (its `imageExtent`, when set, the size it stands for).
    public func process(_ bitmap: Bitmap) throws -> Bitmap {
        let extent = bitmap.imageExtent
        return try process(bitmap, planned: (extent.map { Int(checked: $0.width.rounded()) } ?? bitmap.width,
                                             extent.map { Int(checked: $0.height.rounded()) } ?? bitmap.height))
    }

    /// The crop planned on `planned` (the size `bitmap` stands for), cut from `bitmap` in its own
    /// pixels, resized to the box.
    public func process(_ bitmap: Bitmap, planned: (width: Int, height: Int)) throws -> Bitmap {
        // Detection on the bitmap itself, in the planned size's pixels.
        let detected = isSmart ? try FaceDetector.thumborFocus(of: bitmap).map { point in
            (point.x * Double(planned.width) / Double(bitmap.width), point.y * Double(planned.height) / Double(bitmap.height))
        } : nil
        let cut = crop(sourceWidth: planned.width, sourceHeight: planned.height, detected: detected)
        let extent = bitmap.imageExtent ?? Resampler.Extent(width: Double(bitmap.width), height: Double(bitmap.height))
        let factorX = extent.width / Double(planned.width), factorY = extent.height / Double(planned.height)
        var image = bitmap
        if cut.width < planned.width || cut.height < planned.height || bitmap.imageExtent != nil {
            let size = (min(bitmap.width, max(1, Int(checked: (Double(cut.width) * factorX).rounded()))),
                        min(bitmap.height, max(1, Int(checked: (Double(cut.height) * factorY).rounded()))))
            let x = min(max(0, Int(checked: (Double(cut.x) * factorX).rounded(.down))), bitmap.width - size.0)
            let y = min(max(0, Int(checked: (Double(cut.y) * factorY).rounded(.down))), bitmap.height - size.1)
            var window = try Crop(x: x, y: y, width: size.0, height: size.1).process(bitmap)
            window.imageExtent = nil
            image = window
        }
        guard image.width != width || image.height != height else { return image }
        return Resampler.resize(image, width: width, height: height, extent: nil)
    }
}

extension Gravity {
    /// Whether the place is found from the pixels (`smart`: faces, attention, entropy).
    public var isSmart: Bool {
        if case .smart = self { return true }
        return false
    }
}
