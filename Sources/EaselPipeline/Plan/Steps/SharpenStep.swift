import EaselCodecs

/// An unsharp mask (native `sharpen`, imgproxy's `sh`: sigma 0–10), then thumbor's wavelet
/// sharpen.
enum SharpenStep: PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError) {
        guard !chain.plan.usesImgproxyGeometry || chain.imgproxyFilters else { return }
        if let sigma = chain.plan.sharpen {
            guard sigma > 0, sigma <= 10, let step = try? Sharpen.validated(sigma: sigma) else {
                throw .invalid("sharpen is above 0 and at most 10")
            }
            chain.append(step)
        }
        if let wavelet = chain.plan.waveletSharpen { chain.append(wavelet) }
    }
}
