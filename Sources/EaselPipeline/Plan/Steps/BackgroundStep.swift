import EaselCodecs

/// Transparent pixels composited on `background` (unless the extension is transparent).
enum BackgroundStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard let background = chain.plan.background, !chain.plan.transparentExtend else { return }
        chain.append(Flatten(red: background.red, green: background.green, blue: background.blue))
    }
}
