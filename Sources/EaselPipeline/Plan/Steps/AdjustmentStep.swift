/// The colour, tone and geometry filters, in the order given (thumbor's filters, imgproxy's
/// `monochrome`, `duotone`, `colorize`): each checked when it was made.
enum AdjustmentStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.plan.usesImgproxyGeometry || chain.imgproxyFilters else { return }
        chain.steps.append(contentsOf: chain.plan.adjustments)
    }
}
