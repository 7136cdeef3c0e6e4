import EaselCodecs

/// thumbor's order: the turn after the crop, before the resize (`rotation`, clockwise).
enum TurnStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        if !chain.plan.turnsFirst { try turn(&chain) }
    }

    static func turn(_ chain: inout PlanChain) throws(PlanError) {
        guard chain.plan.rotation != 0 else { return }
        do { chain.append(try QuarterTurn(degrees: -chain.plan.rotation)) } catch {
            throw .invalid("rotate takes 0, 90, 180 or 270 (or more turns)")
        }
    }
}
