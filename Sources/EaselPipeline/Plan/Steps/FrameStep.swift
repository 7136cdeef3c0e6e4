import EaselCodecs

/// A nine-patch frame around the result (thumbor's `frame`), when its image was prepared.
enum FrameStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard chain.plan.frame != nil, let frame = chain.frameImage else { return }
        do { chain.append(try NinePatchFrame(frame: frame.image, frameIdentifier: frame.identifier, limit: chain.outputLimit)) } catch {
            throw .invalid("bad frame: \(error)")
        }
    }
}
