import EaselCodecs

/// imgproxy's order: the turn and the flips before the crop and the resize, so that crops and
/// gravities act on the turned image (`turnsFirst`).
enum TurnFirstStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard chain.plan.turnsFirst else { return }
        try TurnStep.turn(&chain)
        FlipStep.flip(&chain)
    }
}
