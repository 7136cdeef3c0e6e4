import EaselCodecs

/// Blocks of this many pixels of the requested size (imgproxy's `pixelate`), times the DPR.
enum PixelateStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.plan.usesImgproxyGeometry || chain.imgproxyFilters else { return }
        guard let size = chain.plan.pixelate else { return }
        do { chain.append(try Pixelate(size: max(1, chain.imgproxyFilters ? size : chain.scaled(size)))) } catch {
            throw .invalid("pixelate is 1–\(Pixelate.maximumSize)")
        }
    }
}
