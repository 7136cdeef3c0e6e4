/// A uniform border removed first (thumbor's and imgproxy's `trim`).
enum TrimStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        if let trim = chain.plan.trim { chain.append(trim) }
    }
}
