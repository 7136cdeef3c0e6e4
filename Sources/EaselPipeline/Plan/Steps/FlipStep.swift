import EaselCodecs

/// thumbor flips while it resizes: after its crops and resize, before its `fill`.
enum FlipStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        if !chain.plan.turnsFirst { flip(&chain) }
    }

    static func flip(_ chain: inout PlanChain) {
        let plan = chain.plan
        if plan.flipHorizontal || plan.flipVertical { chain.append(Flip(horizontal: plan.flipHorizontal, vertical: plan.flipVertical)) }
    }
}
