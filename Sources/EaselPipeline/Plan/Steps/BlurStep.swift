import EaselCodecs

/// A Gaussian blur: sigma 0–250, and thumbor's radius 1–150 (nil: 3 × sigma).
enum BlurStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.plan.usesImgproxyGeometry || chain.imgproxyFilters else { return }
        guard let blur = chain.plan.blur else { return }
        guard blur > 0, blur <= 250 else { throw .invalid("blur is above 0 and at most 250") }
        if let radius = chain.plan.blurRadius {
            guard radius >= 1, radius <= 150 else { throw .invalid("blur radius is 1–150") }
        }
        do { chain.append(try GaussianBlur(sigma: blur, radius: chain.plan.blurRadius)) } catch { throw .invalid("blur: \(error)") }
    }
}
