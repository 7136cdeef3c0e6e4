import EaselCodecs
import EaselSupport

/// The plan's steps, in the one order they run (as imgproxy's `mainPipeline`): `stepOrder`,
/// each kind of step a type of its own in `Plan/Steps/`. Every range is checked there, with a
/// `PlanError` naming it.
extension ImagePlan {
    /// Every kind of step, in the order they run: trim; the turn and flip when they come first
    /// (imgproxy's order); imgproxy's geometry as one step (which then stands for the crop, the
    /// zoom, the resize, the minimum size, the extensions, blur, sharpen, pixelate, padding and
    /// the result limit); crop; the turn when it comes after (thumbor's); the zoom of a plan
    /// without a size; the resize (or thumbor's fit-in variants); minimum size; the flip when
    /// it comes after; extend and aspect extend; blur, sharpen, pixelate, grayscale; the colour
    /// and tone steps in the order given; frame; rounded corners; padding; marks; the result
    /// limit; background.
    static var stepOrder: [any PlanStep.Type] {
        [TrimStep.self, TurnFirstStep.self, ImgproxyGeometryStep.self, CropStep.self, TurnStep.self, ZoomStep.self, ResizeStep.self, MinimumSizeStep.self,
         FlipStep.self, ExtendStep.self, AspectExtendStep.self, BlurStep.self, SharpenStep.self, PixelateStep.self, GrayscaleStep.self,
         AdjustmentStep.self, FrameStep.self, CornerStep.self, PaddingStep.self, MarkStep.self, ResultLimitStep.self, BackgroundStep.self]
    }

    /// The processor chain, checked against the limits (`limit` per side, `maxPixels` in all).
    /// A request that is just a size with `fit`, `fill` or `exact` becomes exactly the native
    /// ad-hoc chain (`[Resize(w, h, mode)]`), so it shares that cache entry.
    /// `marks` are the images of `watermarks`, in their order (none: the marks are left out).
    public func processors(limit: Int, maxPixels: Int, marks: [MarkImage] = [], frameImage: PreparedWatermark? = nil) throws(PlanError) -> [any ImageProcessor] {
        // `maxResultSide` with a known box: the chain made at a lower DPR, so that the largest
        // the result can be (the box or the minimum size, zoomed, with the padding) fits, as
        // imgproxy lowers its scale; the result is made small rather than shrunk afterwards (the
        // closing fit in `chain` then changes nothing).
        // (The URL's own DPR is checked first: a lowered one must not let a refused one through.)
        guard dpr > 0, dpr <= 8, dpr.isFinite else { throw PlanError.invalid("dpr is above 0 and at most 8") }
        if let side = maxResultSide, !usesImgproxyGeometry, side > 0, width > 0, height > 0 {
            let zoomX = zoom?.x ?? 1, zoomY = zoom?.y ?? 1
            let padX = Double((padding?.left ?? 0) + (padding?.right ?? 0)), padY = Double((padding?.top ?? 0) + (padding?.bottom ?? 0))
            let outWidth = (Double(max(width, minWidth)) * zoomX + padX) * dpr, outHeight = (Double(max(height, minHeight)) * zoomY + padY) * dpr
            if max(outWidth, outHeight) > Double(side) {
                var lowered = self
                lowered.dpr = dpr * Double(side) / max(outWidth, outHeight)
                return try lowered.chain(limit: limit, maxPixels: maxPixels, marks: marks, frameImage: frameImage)
            }
        }
        return try chain(limit: limit, maxPixels: maxPixels, marks: marks, frameImage: frameImage)
    }

    /// The most marks one plan may draw, checked (also before their images are read: they cost
    /// a fetch each).
    public func checkMarkCount() throws(PlanError) {
        guard watermarks.count <= Self.maxWatermarks else { throw .invalid("at most \(Self.maxWatermarks) watermarks a request") }
    }

    /// (`processors` checked the DPR: a lowered one is within it.)
    private func chain(limit: Int, maxPixels: Int, marks: [MarkImage], frameImage: PreparedWatermark?) throws(PlanError) -> [any ImageProcessor] {
        guard width >= 0, height >= 0 else { throw .invalid("width and height are 0 or more") }
        var chain = PlanChain(plan: self, limit: limit, maxPixels: maxPixels, marks: marks, frameImage: frameImage)
        for step in Self.stepOrder { try step.add(to: &chain) }
        return chain.steps
    }

    /// Whether `ImgproxyGeometryStep` makes this plan's geometry: an imgproxy plan that is more
    /// than a `fit` box (which keeps the resize every style shares, whose answer is imgproxy's).
    /// A centred `fill` is imgproxy's own: its window sits at roundToEven((outer − inner + 1) / 2),
    /// a pixel further than the shared resize's floor((outer − inner) / 2) in half the cases.
    var usesImgproxyGeometry: Bool {
        guard imgproxyGeometry else { return false }
        let plainBox = width > 0 && height > 0 && mode == .fit && dpr == 1
        let grows = extend || aspectExtend || padding != nil || minWidth > 0 || minHeight > 0
        return !plainBox || grows || zoom != nil || crop != nil || maxResultSide != nil
    }
}
