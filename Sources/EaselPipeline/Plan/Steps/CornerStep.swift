import EaselCodecs

/// Rounded corners (thumbor's `round_corner`): radii 0 to the side limit, in `cornerColour` or
/// transparent.
enum CornerStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard let radii = chain.plan.cornerRadii else { return }
        let most = Double(chain.limit)
        guard radii.x >= 0, radii.y >= 0, radii.x <= most, radii.y <= most else { throw .invalid("round_corner radii are 0–\(chain.limit)") }
        do { chain.append(try RoundedCorners(radiusX: radii.x, radiusY: radii.y, fill: chain.plan.cornerColour)) } catch {
            throw .invalid("round_corner: \(error)")
        }
    }
}
