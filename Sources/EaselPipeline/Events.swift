import EaselSupport
import EaselStorage
import Foundation
import Metrics
import Synchronization
import Tracing

/// What the pipeline reports, in order, per request (`request` is `ImageTask.id`).
public enum PipelineEvent: Sendable {
    /// A request began; `url` is what it fetches from (nil when its source has none).
    case started(request: UInt64, url: URL?)
    /// A download of an original began (one per fetch attempt, shared by its requesters).
    case downloadStarted(url: URL)
    /// Bytes of an original received so far (shared by every request waiting for it).
    case progress(url: URL, received: Int, expected: Int?)
    /// A download attempt ended: `error` is nil when the body is complete, `.cancelled` when
    /// every requester left (or it was suspended) before the body was complete.
    case downloadEnded(url: URL, received: Int, error: PipelineError?)
    /// A request was answered by `tier`, `seconds` after it started.
    case finished(request: UInt64, tier: ImageTier, seconds: Double)
    /// A request ended with `error` (a passed deadline is `.timedOut`, a refusal `.overloaded`).
    case failed(request: UInt64, error: PipelineError)
    /// A request was cancelled before it was answered.
    case cancelled(request: UInt64)
}

/// swift-metrics instruments (no-ops until the process bootstraps a metrics backend):
/// `easel_pipeline_requests_total{tier}`, `easel_pipeline_failures_total`,
/// `easel_pipeline_cancellations_total`, `easel_pipeline_decodes_total`,
/// `easel_pipeline_decoded_pixels_total` (what those decodes made: shrink-on-load shows here) and
/// `easel_pipeline_stage_seconds{stage}` for queue (waiting for a download or decode slot),
/// fetch, decode, process and encode.
/// Every count is also kept in atomics that `ImagePipeline.counters` reads, with or without a
/// metrics backend.
final class PipelineMetrics: Sendable {
    enum Stage: String, CaseIterable {
        case queue, fetch, decode, process, encode
        var spanName: String { "easel.\(rawValue)" }
    }

    /// A swift-metrics counter and an atomic count of the same events.
    final class Count: Sendable {
        private let counter: Counter
        private let tally = Atomic<Int>(0)
        init(_ counter: Counter) { self.counter = counter }
        func increment(by amount: Int = 1) {
            guard amount > 0 else { return }
            tally.add(amount, ordering: .relaxed)
            counter.increment(by: amount)
        }
        var value: Int { tally.load(ordering: .relaxed) }
    }

    private let tiers: [ImageTier: Count]
    let failures: Count
    let cancellations: Count
    let decodes: Count
    let decodedPixels: Count
    let fetches: Count
    let encodes: Count
    /// Images of a family made after an answer from its decode (`Configuration.familyInBackground`).
    let familyImages: Count
    private let stages: [Stage: Metrics.Timer]

    /// - Parameter factory: where the metrics go (nil: the process's `MetricsSystem`).
    init(factory: (any MetricsFactory)? = nil) {
        let factory = factory ?? MetricsSystem.factory
        failures = Count(Counter(label: "easel_pipeline_failures_total", factory: factory))
        cancellations = Count(Counter(label: "easel_pipeline_cancellations_total", factory: factory))
        decodes = Count(Counter(label: "easel_pipeline_decodes_total", factory: factory))
        decodedPixels = Count(Counter(label: "easel_pipeline_decoded_pixels_total", factory: factory))
        fetches = Count(Counter(label: "easel_pipeline_fetches_total", factory: factory))
        encodes = Count(Counter(label: "easel_pipeline_encodes_total", factory: factory))
        familyImages = Count(Counter(label: "easel_pipeline_family_images_total", factory: factory))
        var tiers: [ImageTier: Count] = [:]
        for tier in ImageTier.allCases {
            tiers[tier] = Count(Counter(label: "easel_pipeline_requests_total", dimensions: [("tier", tier.rawValue)], factory: factory))
        }
        self.tiers = tiers
        var stages: [Stage: Metrics.Timer] = [:]
        for stage in Stage.allCases {
            stages[stage] = Metrics.Timer(label: "easel_pipeline_stage_seconds", dimensions: [("stage", stage.rawValue)], factory: factory)
        }
        self.stages = stages
    }

    func answered(by tier: ImageTier) { tiers[tier]?.increment() }

    var counters: PipelineCounters {
        PipelineCounters(answers: tiers.mapValues(\.value).filter { $0.value > 0 }, fetches: fetches.value, decodes: decodes.value,
                         encodes: encodes.value, failures: failures.value, cancellations: cancellations.value,
                         familyImages: familyImages.value, decodedPixels: decodedPixels.value)
    }

    /// - Parameter attributes: the span's (`easel.format`, `easel.bytes`, ...), made only when
    ///   tracing is on.
    func stage(_ stage: Stage, since start: ContinuousClock.Instant, attributes: @autoclosure () -> SpanAttributes = [:]) {
        self.stage(stage, took: ContinuousClock.now - start, attributes: attributes())
    }

    /// Also a span `easel.STAGE` under the request's, when tracing is on.
    func stage(_ stage: Stage, took duration: Duration, attributes: @autoclosure () -> SpanAttributes = [:]) {
        stages[stage]?.recordNanoseconds(Int64(checked: duration.seconds * 1e9))
        // (A fetch is a span of its own, begun before it: the origin continues its trace.)
        if stage != .fetch, Traces.isRecording { Traces.record(stage.spanName, took: duration, attributes: attributes()) }
    }
}

/// What a pipeline has done since it was made: readable at any time, no metrics backend needed.
public struct PipelineCounters: Sendable, Equatable {
    /// Requests answered, by the tier that answered.
    public var answers: [ImageTier: Int]
    /// Fetcher calls (downloads and file reads; a resumed download counts each attempt).
    public var fetches: Int
    /// Source images decoded.
    public var decodes: Int
    /// Images encoded (`encodedImage(for:)` answers and disk variants).
    public var encodes: Int
    /// Requests that failed (deadlines passed included; `.overloaded` refusals not counted).
    public var failures: Int
    /// Requests cancelled before they were answered.
    public var cancellations: Int
    /// Formats of a family made after an answer from the answer's decode.
    public var familyImages: Int
    /// Pixels those decodes made (a source decoded smaller on load counts its reduced size).
    public var decodedPixels: Int = 0
}
