import EaselCodecs

/// Shades of gray.
enum GrayscaleStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        if chain.plan.grayscale { chain.append(Grayscale()) }
    }
}
