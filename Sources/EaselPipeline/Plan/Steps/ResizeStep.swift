import EaselCodecs
import EaselSupport

/// The resize to the box: the size times the DPR and the zoom, within the limits (a side not
/// asked for follows the other; none: the source's size, within the limit), in the plan's mode
/// or thumbor's fit-in variants. Sets `chain.box`.
enum ResizeStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.madeByImgproxyGeometry else { return }
        let plan = chain.plan, limit = chain.limit, maxPixels = chain.maxPixels
        if plan.widthIsSource != plan.heightIsSource, plan.fitVariant == nil, plan.width > 0 || plan.height > 0 {
            return try addSourceSide(to: &chain)
        }
        let zoomX = plan.zoom?.x ?? 1, zoomY = plan.zoom?.y ?? 1
        // In Double first: sides far past the limit are refused before any integer conversion.
        let scaledWidth = (Double(plan.width) * plan.dpr * zoomX).rounded(), scaledHeight = (Double(plan.height) * plan.dpr * zoomY).rounded()
        // (imgproxy's box without `enlarge` is never larger than the source: only the source's
        // own limits apply, as in imgproxy.)
        let neverGrows = plan.imgproxyGeometry && plan.enlarge != true
        guard neverGrows || (scaledWidth <= Double(limit) && scaledHeight <= Double(limit) && scaledWidth * scaledHeight <= Double(maxPixels)) else {
            throw .invalid("the result is at most \(limit) pixels a side and \(maxPixels) pixels in all")
        }
        // A side that was asked for stays at least 1 pixel, however small the dpr.
        var w = plan.width > 0 ? max(1, Int(checked: scaledWidth)) : 0, h = plan.height > 0 ? max(1, Int(checked: scaledHeight)) : 0
        var mode = plan.mode
        if w == 0 || h == 0 {
            // One side follows the other (scaled to the given side, in every mode); none: the
            // source's size, within the limit.
            mode = .fit
            if w == 0 { w = limit }
            if h == 0 { h = limit }
            if w * h > maxPixels { h = max(1, maxPixels / w) }
        }
        chain.box = (w, h)
        let sized = plan.width > 0 || plan.height > 0
        // Without a size there is nothing for the dpr to multiply but the source's own size,
        // which this chain does not know: enlarging by the dpr would be silently dropped.
        if !sized, plan.dpr != 1, plan.enlarge == true { throw .invalid("dpr with enlarge needs a width or a height") }
        let upscale = sized ? plan.enlarge : false
        if let variant = plan.fitVariant, plan.width > 0, plan.height > 0 {
            chain.append(FitIn(width: w, height: h, adaptive: variant.adaptive, full: variant.full, upscale: upscale ?? false,
                               limit: chain.outputLimit))
        } else if plan.thumborFill, mode == .fill, upscale != false, !plan.gravity.isSmart || plan.gravity == .smart(.face) {
            chain.append(ThumborFill(width: w, height: h, gravity: plan.gravity.scalingOffsets(by: plan.dpr)))
        } else {
            chain.append(Resize(width: w, height: h, mode: mode, upscale: upscale,
                                gravity: mode == .fit || mode == .exact ? .center : plan.gravity.scalingOffsets(by: plan.dpr)))
        }
    }
}

extension ResizeStep {

    /// thumbor's `origx300` or `300xorig`: the box's other side as asked, this one the image's own
    /// when the step runs (`SourceSideResize`), in the plan's mode.
    static func addSourceSide(to chain: inout PlanChain) throws(PlanError) {
        let plan = chain.plan
        let given = Double(plan.widthIsSource ? plan.height : plan.width) * plan.dpr
        guard given <= Double(chain.limit) else { throw .invalid("the result is at most \(chain.limit) pixels a side") }
        let side = max(1, Int(checked: given.rounded()))
        let resize = Resize(width: plan.widthIsSource ? 1 : side, height: plan.widthIsSource ? side : 1, mode: plan.mode, upscale: plan.enlarge,
                            gravity: plan.mode == .fit || plan.mode == .exact ? .center : plan.gravity.scalingOffsets(by: plan.dpr))
        // (The box's other side is the image's: at most the limit.)
        chain.box = plan.widthIsSource ? (chain.limit, side) : (side, chain.limit)
        chain.append(SourceSideResize(resize: resize, widthIsSource: plan.widthIsSource, limit: chain.limit, maxPixels: chain.maxPixels))
    }
}

/// A resize whose box takes one side from the image it is given (thumbor's `orig`): the other
/// side, mode, enlargement and gravity are the `resize`'s.
struct SourceSideResize: ImageProcessor {
    var resize: Resize
    /// The width is the image's (else the height).
    var widthIsSource: Bool
    /// The largest side the box may have.
    var limit: Int
    /// The most pixels the box may have.
    var maxPixels: Int

    var identifier: String { "orig(\(widthIsSource ? "w" : "h"))" + resize.identifier }

    func process(_ bitmap: Bitmap) throws -> Bitmap {
        let width = widthIsSource ? min(bitmap.width, limit) : resize.width
        let height = widthIsSource ? resize.height : min(bitmap.height, limit)
        guard width * height <= maxPixels else {
            throw CodecError.invalidParameters("the result is at most \(limit) pixels a side and \(maxPixels) pixels in all")
        }
        return try Resize(width: width, height: height, mode: resize.mode, upscale: resize.upscale, gravity: resize.gravity).process(bitmap)
    }
}
