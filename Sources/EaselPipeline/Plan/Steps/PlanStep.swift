import EaselCodecs
import EaselSupport

/// One kind of step of a plan, in its place in `ImagePlan.stepOrder`: what it adds to the chain
/// (nothing when the plan does not ask for it), its ranges checked.
protocol PlanStep {
    static func add(to chain: inout PlanChain) throws(PlanError)
}

/// A plan's chain being made: the plan, the limits, the prepared images, the processors so far,
/// and the box the resize decided (for the steps that extend to it).
struct PlanChain {
    let plan: ImagePlan
    /// The most pixels a side and in all.
    let limit: Int, maxPixels: Int
    /// The images of `plan.watermarks`, in order, and the frame's.
    let marks: [MarkImage]
    let frameImage: PreparedWatermark?
    var steps: [any ImageProcessor] = []
    /// The resize's box in pixels of the result (0 for a side that follows the other).
    var box = (width: 0, height: 0)
    /// Made for `ImgproxyGeometry`'s filters (blur, sharpen, pixelate as imgproxy sizes them).
    var imgproxyFilters = false

    /// The step is made by `ImgproxyGeometryStep` for this plan (and this chain is not that
    /// step's filters).
    var madeByImgproxyGeometry: Bool { plan.usesImgproxyGeometry && !imgproxyFilters }

    /// Steps that grow the image stay within the limits too (a 422 past them).
    var outputLimit: OutputLimit { OutputLimit(side: limit, pixels: maxPixels) }

    /// A length in pixels of the requested size, in pixels of the result (times the DPR).
    func scaled(_ value: Int) -> Int { Int(checked: (Double(value) * plan.dpr).rounded()) }

    mutating func append(_ step: any ImageProcessor) { steps.append(step) }
}
