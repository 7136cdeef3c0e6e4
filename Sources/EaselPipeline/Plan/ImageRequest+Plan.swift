import EaselCodecs
import Foundation

extension ImageRequest {
    /// The most a plan's result may measure when the caller names no limit: 16,384 pixels a
    /// side, 50 MP in all (`easel serve` has its own, lower: `maxAdHocSize`, `maxOutputPixels`).
    public static let defaultPlanLimits = (side: 16_384, pixels: 50_000_000)

    /// A request for `url` made as `plan` says: its steps (checked against `limits`), its page,
    /// video frame and embedded thumbnail, its own source limits, and its output (format,
    /// quality or autoquality, per-format quality, `maxBytes`, copyright kept; the format
    /// pinned when the plan names one, else negotiated from `client`). A plan that cannot be
    /// made throws `PlanError` naming the limit. Marks and frames need their images: prepare
    /// them (`ImagePipeline.watermark(for:maxSide:)`) and pass them as `marks` (one for each of
    /// `plan.watermarks`, in order) and `frame`; a plan whose images are missing is refused.
    ///
    /// ```swift
    /// var plan = ImagePlan()
    /// plan.width = 300; plan.height = 200; plan.mode = .fill; plan.gravity = .smart(.attention)
    /// let request = try ImageRequest(url: photoURL, plan: plan)
    /// let answer = try await pipeline.answer(for: request)
    /// ```
    public init(url: URL, plan: ImagePlan, limits: (side: Int, pixels: Int) = ImageRequest.defaultPlanLimits,
                marks: [MarkImage] = [], frame: PreparedWatermark? = nil, priority: Priority = .normal,
                cachePolicy: CachePolicy = .useCache) throws(PlanError) {
        guard marks.count == plan.watermarks.count, plan.frame == nil || frame != nil else {
            throw .invalid("the plan's \(plan.watermarks.count) marks and frame need their prepared images")
        }
        let steps = try plan.processors(limit: limits.side, maxPixels: limits.pixels, marks: marks, frameImage: frame)
        self.init(url: url, processing: .processors(steps), priority: priority, cachePolicy: cachePolicy)
        page = plan.page
        video = plan.video
        embeddedThumbnail = plan.embeddedThumbnail
        autoRotate = plan.autoRotate
        sourceLimits = plan.sourceLimits
        var output = OutputPolicy(format: plan.format, quality: plan.quality, strict: plan.format != nil,
                                  formatQuality: plan.formatQuality, maxBytes: plan.maxBytes)
        output.keepsRights = plan.keepCopyright
        output.autoQuality = plan.autoQuality
        output.bestFormat = plan.bestFormat
        output.keepsSourceFormat = plan.keepsSourceFormat
        output.animationsAsWebP = plan.animationsAsWebP
        self.output = output
    }
}
