import EaselCodecs

/// A zoom without a size scales the source itself (imgproxy's `zoom`; with a size, the resize
/// multiplies its box instead).
enum ZoomStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.madeByImgproxyGeometry else { return }
        let plan = chain.plan
        guard let zoom = plan.zoom, plan.width == 0, plan.height == 0, zoom.x != 1 || zoom.y != 1 else { return }
        do { chain.append(try Scale(x: zoom.x, y: zoom.y, limit: chain.outputLimit)) } catch {
            throw .invalid("zoom is above 0 and at most \(Scale.maximumFactor)")
        }
    }
}
