import EaselCodecs

/// imgproxy's geometry as one step (`ImgproxyGeometry`): the crop, the resize, the crop to the
/// result, blur, sharpen and pixelate, the extensions, the padding and the marks, sized from the
/// image it receives as imgproxy sizes them. The steps it stands for add nothing to such a plan.
enum ImgproxyGeometryStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        let plan = chain.plan
        guard plan.usesImgproxyGeometry else { return }
        var geometry = ImgproxyGeometry()
        // (The parsers checked the ranges; the DPR was checked by `processors`.)
        geometry.width = plan.width
        geometry.height = plan.height
        geometry.mode = plan.mode
        geometry.enlarge = plan.enlarge ?? false
        geometry.gravity = plan.gravity
        geometry.dpr = plan.dpr
        if let zoom = plan.zoom { geometry.zoom = zoom }
        geometry.minWidth = plan.minWidth
        geometry.minHeight = plan.minHeight
        if case .size(let width, let height, _) = plan.crop {
            guard width >= 0, height >= 0, width <= Double(chain.limit) * 8, height <= Double(chain.limit) * 8 else {
                throw .invalid("crop sizes are 0–\(chain.limit * 8)")
            }
            geometry.crop = (width, height, plan.cropGravity ?? plan.gravity)
        }
        if plan.extend { geometry.extend = plan.extendGravity ?? .center }
        if plan.aspectExtend { geometry.aspectExtend = plan.aspectExtendGravity ?? .center }
        if let padding = plan.padding {
            guard [padding.top, padding.right, padding.bottom, padding.left].allSatisfy({ (0...Border.maximumWidth).contains($0) }) else {
                throw .invalid("padding is 0–\(Border.maximumWidth) pixels a side")
            }
            geometry.padding = padding
        }
        if let side = plan.maxResultSide {
            guard side > 0 else { throw .invalid("max_result_dimension is above 0") }
            geometry.maxResultSide = side
        }
        // imgproxy's filters (and the colour steps: monochrome, duotone, colorize) run on the
        // result before it is extended, so the extension and padding stay as they are; its
        // pixelate is not multiplied by the DPR.
        var filters = PlanChain(plan: plan, limit: chain.limit, maxPixels: chain.maxPixels, marks: [], frameImage: nil)
        filters.imgproxyFilters = true
        try BlurStep.add(to: &filters)
        try SharpenStep.add(to: &filters)
        try PixelateStep.add(to: &filters)
        try GrayscaleStep.add(to: &filters)
        try AdjustmentStep.add(to: &filters)
        geometry.filters = filters.steps
        try chain.plan.checkMarkCount()
        geometry.marks = try zip(plan.watermarks, chain.marks).map { (mark, image) throws(PlanError) in
            try MarkStep.step(mark, image, chain, inRequestUnits: true)
        }
        geometry.limit = chain.outputLimit
        chain.append(geometry)
    }
}
