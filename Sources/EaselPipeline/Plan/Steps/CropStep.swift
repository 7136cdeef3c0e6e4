import EaselCodecs

/// A region cut before the resize: edges, or a size placed by `cropGravity` (else `gravity`).
enum CropStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.madeByImgproxyGeometry else { return }
        let plan = chain.plan
        guard var crop = plan.crop else { return }
        if case .size(let width, let height, _) = crop {
            let most = Double(chain.limit) * 8
            guard width >= 0, height >= 0, width <= most, height <= most else { throw .invalid("crop sizes are 0–\(chain.limit * 8)") }
            crop = .size(width: width, height: height, gravity: plan.cropGravity ?? plan.gravity)
        }
        chain.append(RegionCrop(crop))
    }
}
