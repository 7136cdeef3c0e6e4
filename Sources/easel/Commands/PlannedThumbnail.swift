import EaselCodecs
import EaselPipeline
import EaselServer
import Foundation

/// `easel thumbnail --imgproxy OPTIONS` (or `--thumbor`): a URL style's plan made of each file
/// as the server makes it — the same parser, the same steps under the same limits, the decode
/// scale computed through them (`ReducedDecode`), the same encoder and its searches
/// (autoquality, `max_bytes`). The answer's format is pinned: the URL's, else `--format`. An
/// animation is made a still of its first frame (the page the options name).
struct PlannedThumbnail: Sendable {
    let plan: ImagePlan
    let steps: [any ImageProcessor]
    let encoding: ImageEncoding

    var format: ImageEncoding.Format { encoding.format }

    /// The most a side and an image may have: the server's defaults (`maxAdHocSize`,
    /// `maxOutputPixels`), so that what the server refuses is refused here too.
    static let limits = (side: ServerConfiguration().maxAdHocSize, pixels: ServerConfiguration().maxOutputPixels)

    init(_ parsed: PlanParsing.Parsed, format: ImageEncoding.Format, quality: Int?, keepCopyright: Bool) throws {
        let plan = parsed.plan
        // What needs the server (its sources, its clients) is refused by name, not ignored.
        if plan.needsMark || plan.frame != nil { throw PlanParsing.Refused(description: "watermarks and frames are made by `easel serve` only") }
        if plan.bestFormat { throw PlanParsing.Refused(description: "best format picks per client: name a format (f:webp, --format)") }
        if plan.raw || plan.widthFromHints || plan.dprFromHints {
            throw PlanParsing.Refused(description: "raw answers and Client Hints are made by `easel serve` only")
        }
        self.plan = plan
        do {
            steps = try plan.processors(limit: Self.limits.side, maxPixels: Self.limits.pixels)
        } catch {
            throw PlanParsing.Refused(description: error.description)
        }
        var policy = OutputPolicy(format: plan.format ?? format, quality: plan.quality ?? quality ?? parsed.defaultQuality, strict: true,
                                  formatQuality: plan.formatQuality, maxBytes: plan.maxBytes)
        policy.keepsRights = plan.keepCopyright || keepCopyright
        policy.autoQuality = plan.autoQuality
        encoding = ImagePipeline.decide(policy, for: nil).encoding
        guard encoding.format != .svg else { throw PlanParsing.Refused(description: "a thumbnail is pixels: name another format") }
    }

    /// One file: read (mapped), decode at the scale the steps need within `budget`, run them,
    /// encode, write atomically.
    func make(input: String, output: String, budget: CommandMemoryBudget) throws -> (width: Int, height: Int) {
        var limits = CommandLimits.decoding
        if let own = plan.sourceLimits { limits = limits.tightened(by: own) }
        let file = try InputFile(path: input, limit: limits.maxInputBytes)
        let made = try file.decoding { data in
            let info = try ImageDecoder.info(of: data, limits: limits, page: plan.page, embeddedThumbnail: plan.embeddedThumbnail, video: plan.video,
                                             autoRotate: plan.autoRotate)
            let covering = ReducedDecode.covering(steps, info: info)
            let peak = CommandLimits.peakBytes(of: file, info: info, decodedSize: ImageDecoder.decodedSize(of: info, covering: covering), animated: false)
            return try budget.withReservation(peak) {
                let decoded = try ImageDecoder.decode(data, info: info, covering: covering, limits: limits)
                let image = try ReducedDecode.process(steps, decoded: decoded, info: info)
                return (try encoding.encode(image, rights: RightsMetadata(info.exif)).data, image.width, image.height)
            }
        }
        // Written only once the file is known not to have changed while it was read.
        try made.0.write(to: URL(fileURLWithPath: output), options: .atomic)
        return (made.1, made.2)
    }
}
