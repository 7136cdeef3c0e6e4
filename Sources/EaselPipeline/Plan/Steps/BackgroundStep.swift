import EaselCodecs

/// Transparent pixels composited on `background` (unless the extension is transparent); without
/// one, alpha dropped for a JPEG answer where the plan asks (`dropsAlphaForJPEG`: thumbor's).
enum BackgroundStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard let background = chain.plan.background, !chain.plan.transparentExtend else {
            if chain.plan.dropsAlphaForJPEG, chain.plan.format == .jpeg { chain.append(DropAlpha()) }
            return
        }
        var flatten = Flatten(red: background.red, green: background.green, blue: background.blue)
        flatten.alpha = chain.plan.backgroundAlpha
        chain.append(flatten)
    }
}
