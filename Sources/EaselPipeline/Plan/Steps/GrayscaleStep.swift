import EaselCodecs

/// Shades of gray.
enum GrayscaleStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.plan.usesImgproxyGeometry || chain.imgproxyFilters else { return }
        if chain.plan.grayscale { chain.append(Grayscale()) }
    }
}
