import EaselCodecs

/// imgproxy's `max_result_dimension` where `processors` could not lower the DPR (a side not
/// asked for, so no known box): the result, marks and padding included, scaled down together
/// (never up).
enum ResultLimitStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.madeByImgproxyGeometry else { return }
        guard let side = chain.plan.maxResultSide else { return }
        guard side > 0 else { throw .invalid("max_result_dimension is above 0") }
        chain.append(Resize(width: min(side, chain.limit), height: min(side, chain.limit), mode: .fit, upscale: false))
    }
}
