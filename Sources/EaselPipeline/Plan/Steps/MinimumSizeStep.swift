import EaselCodecs

/// The least the result may measure (imgproxy's `min-width`, `min-height`), times the DPR.
enum MinimumSizeStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.madeByImgproxyGeometry else { return }
        let plan = chain.plan
        guard plan.minWidth > 0 || plan.minHeight > 0 else { return }
        chain.append(MinimumSize(width: chain.scaled(plan.minWidth), height: chain.scaled(plan.minHeight), limit: chain.outputLimit))
    }
}
