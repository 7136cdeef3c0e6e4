import EaselCodecs

/// The result grown on one side to the box's aspect ratio (imgproxy's `extend_aspect_ratio`),
/// when both sides are asked for.
enum AspectExtendStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.madeByImgproxyGeometry else { return }
        let plan = chain.plan
        guard plan.aspectExtend, plan.width > 0, plan.height > 0 else { return }
        let pad = ExtendStep.canvas(chain, width: chain.box.width, height: chain.box.height, gravity: plan.aspectExtendGravity)
        chain.append(AspectExtend(pad, limit: chain.outputLimit))
    }
}
