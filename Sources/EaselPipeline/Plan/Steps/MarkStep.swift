import EaselCodecs

/// The marks, in order (the last on top), each with its prepared image: opacity and scales
/// 0–1, shadow 0–`Watermark.maxShadowSigma`; offsets, shadows and boxes in pixels of the
/// requested size, times the DPR. At most `ImagePlan.maxWatermarks`. imgproxy's geometry draws
/// them itself (`ImgproxyGeometryStep`), with the DPR it caps.
enum MarkStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        let plan = chain.plan
        try plan.checkMarkCount()
        guard !chain.madeByImgproxyGeometry else { return }
        for (mark, image) in zip(plan.watermarks, chain.marks) {
            chain.append(try step(mark, image, chain))
        }
    }

    /// One mark's step; `inRequestUnits`: its offsets and box as the URL gives them (the caller
    /// scales them), else times the plan's DPR.
    static func step(_ mark: ImagePlan.Mark, _ image: MarkImage, _ chain: PlanChain, inRequestUnits: Bool = false) throws(PlanError) -> Watermark {
        let dpr = inRequestUnits ? 1 : chain.plan.dpr
        func scaled(_ value: Int) -> Int { Int(checked: (Double(value) * dpr).rounded()) }
        guard (0...1).contains(mark.opacity), (0...1).contains(mark.scale), (0...1).contains(mark.heightScale),
              (0...Watermark.maxShadowSigma).contains(mark.shadow),
              [mark.relativeOffsetX, mark.relativeOffsetY].allSatisfy({ $0.map { (0...100).contains($0) } ?? true }) else {
            throw .invalid("watermark opacity and scale are 0–1, relative offsets 0–100, its shadow 0–\(Int(Watermark.maxShadowSigma))")
        }
        do {
            var step = try Watermark(mark: image.image, markIdentifier: image.identifier, opacity: mark.opacity, position: mark.position,
                                               offsetX: scaled(mark.offsetX), offsetY: scaled(mark.offsetY),
                                               scale: mark.scale, heightScale: mark.heightScale)
            // The box in the pixels of the result (its identity is in the step's).
            step.box = mark.size.map { (scaled($0.width), scaled($0.height)) }
            step.shadowSigma = min(Watermark.maxShadowSigma, mark.shadow * dpr)
            step.rotation = mark.rotation
            step.relativeOffsetX = mark.relativeOffsetX
            step.relativeOffsetY = mark.relativeOffsetY
            step.centresAsImgproxy = chain.plan.imgproxyGeometry
            return step
        } catch {
            throw .invalid("bad watermark: \(error)")
        }
    }
}
