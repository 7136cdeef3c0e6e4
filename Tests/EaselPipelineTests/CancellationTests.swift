import EaselCodecs
@testable import EaselPipeline
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// A processing step that works row by row (as every long processor does) until the work is
/// cancelled or it is released, and reports which it was and when. Bounded: it gives up after
/// 30 s either way.
final class RowByRowStep: ImageProcessor, Sendable {
    struct Outcome: Sendable {
        var cancelled: Bool
        var at: ContinuousClock.Instant
    }
    let started = Gate()
    let stopped = Gate()
    private let state = Locked<(released: Bool, started: Bool, outcome: Outcome?)>((false, false, nil))

    var identifier: String { "row-by-row(\(ObjectIdentifier(self).hashValue))" }
    var outcome: Outcome? { state.withLock { $0.outcome } }
    var hasStarted: Bool { state.withLock { $0.started } }
    func release() { state.withLock { $0.released = true } }

    func process(_ bitmap: Bitmap) throws -> Bitmap {
        state.withLock { $0.started = true }
        started.open()
        defer { stopped.open() }
        let end = ContinuousClock.now + .seconds(30)
        var checksum = 0
        while ContinuousClock.now < end {
            if WorkCancellation.isCancelled {
                state.withLock { $0.outcome = Outcome(cancelled: true, at: .now) }
                throw CodecError.cancelled
            }
            if state.withLock({ $0.released }) { break }
            // A row's worth of work, then a pause: the step holds its thread as a long
            // processor does, without taking a core from every other suite for seconds.
            for value in 0..<10_000 { checksum &+= value &* 31 }
            usleep(1_000)
        }
        state.withLock { $0.outcome = Outcome(cancelled: false, at: .now) }
        return checksum == 42 ? bitmap : bitmap
    }
}

/// The step stopped because of the cancellation (it was not released), within 1 s of `since`.
func expectStoppedByCancellation(_ step: RowByRowStep, since: ContinuousClock.Instant, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    try await waitFor(step.stopped)
    let outcome = try #require(step.outcome, sourceLocation: sourceLocation)
    #expect(outcome.cancelled, "the step saw the cancellation (it was not released)", sourceLocation: sourceLocation)
    #expect(outcome.at - since < .seconds(1), "stopped \(outcome.at - since) after it", sourceLocation: sourceLocation)
}

/// Waits for `gate` at most `limit` (a failed wait is a test failure, never a hang).
func waitFor(_ gate: Gate, within limit: Duration = .seconds(60)) async throws {
    try await withTimeLimit(limit, timedOut: CancellationError(), cancelled: CancellationError()) { try await gate.wait() }
}

/// Serialized: each test holds one of the process's shared decoding threads with a long step;
/// two at once would hold both and stall every other suite's decodes.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CancellationTests {
    static func request(_ url: URL, step: RowByRowStep) -> ImageRequest {
        ImageRequest(url: url, processing: .processors([Resize(width: 64, height: 64), step]))
    }

    /// `body` with a pipeline and the URL of a photo on a loopback origin.
    static func withPhoto(_ body: @escaping @Sendable (ImagePipeline, URL) async throws -> Void) async throws {
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG))
        try await origin.run { base in
            try await withPipeline { pipeline, _ in try await body(pipeline, base.appendingPathComponent("cat.jpg")) }
        }
    }

    @Test func processingStopsWithinASecondOfTheDeadline() async throws {
        try await Self.withPhoto { pipeline, url in
            // The deadline must pass while the step runs: on a loaded machine (other suites
            // keep the process's decoding threads busy; ThreadSanitizer slows all) the fetch,
            // the queue and the decode before it may take longer, so a longer deadline is tried
            // then (the work was cancelled before the step, which then never starts).
            for deadline in [500, 2_000, 8_000, 20_000, 45_000] {
                let step = RowByRowStep()
                var request = Self.request(url, step: step)
                request.deadline = .milliseconds(deadline)
                await expectFailure({ if case .timedOut = $0 { true } else { false } }) { _ = try await pipeline.image(for: request) }
                let answered = ContinuousClock.now
                guard step.hasStarted else { continue }
                try await expectStoppedByCancellation(step, since: answered)
                return
            }
            Issue.record("the step never started before the deadline")
        }
    }

    @Test func processingStopsWhenItsLastRequesterLeaves() async throws {
        try await Self.withPhoto { pipeline, url in
            let step = RowByRowStep()
            let request = Self.request(url, step: step)
            let task = Task { try await pipeline.image(for: request) }
            try await waitFor(step.started)
            task.cancel()
            let left = ContinuousClock.now
            await expectFailure({ $0 == .cancelled }) { _ = try await task.value }
            try await expectStoppedByCancellation(step, since: left)
        }
    }

    @Test func sharedProcessingGoesOnWhileAnotherRequesterWaits() async throws {
        try await Self.withPhoto { pipeline, url in
            let step = RowByRowStep()
            let request = Self.request(url, step: step)
            let leaving = Task { try await pipeline.image(for: request) }
            try await waitFor(step.started)
            let staying = Task { try await pipeline.image(for: request) }
            // The second requester has joined once the work has two waiters.
            let joinedBy = ContinuousClock.now + .seconds(10)
            while pipeline.tasks.decodes.waiterCount < 2, ContinuousClock.now < joinedBy { await Task.yield() }
            #expect(pipeline.tasks.decodes.waiterCount == 2)
            leaving.cancel()
            await expectFailure({ $0 == .cancelled }) { _ = try await leaving.value }
            step.release()
            let response = try await staying.value
            #expect(response.image.width == 64)
            #expect(step.outcome?.cancelled == false)
        }
    }

    @Test func everyLongProcessorStopsOnARaisedFlag() throws {
        let image = Bitmap(width: 256, height: 256, pixelFormat: .rgba8)
        let flag = CancellationFlag()
        flag.raise()
        let processors: [any ImageProcessor] = [try GaussianBlur(sigma: 2), try GaussianBlur(sigma: 249), try Sharpen(sigma: 1), try Sharpen(sigma: 50)]
        for processor in processors {
            #expect(throws: CodecError.cancelled, "\(processor.identifier)") {
                try WorkCancellation.run(with: flag) { try processor.process(image) }
            }
        }
        // A chain stops before its next step.
        #expect(throws: CodecError.cancelled) {
            try WorkCancellation.run(with: flag) { try ([Resize(width: 10, height: 10)] as [any ImageProcessor]).process(image) }
        }
        // Unraised, the same work completes.
        let unraised = CancellationFlag()
        #expect(try WorkCancellation.run(with: unraised) { try GaussianBlur(sigma: 249).process(image) }.width == 256)
    }

    /// Each long processor looks at the flag while it works, not only before it starts: a flag
    /// that goes up at its second check (the first one passed, as a run that began before the
    /// cancellation sees it) stops the work under way. One check before the first row would let
    /// the work run to its end.
    @Test func everyLongProcessorStopsWhenTheFlagGoesUpUnderWay() throws {
        let image = Bitmap(width: 256, height: 256, pixelFormat: .rgba8)
        let processors: [any ImageProcessor] = [try GaussianBlur(sigma: 2), try GaussianBlur(sigma: 249), try Sharpen(sigma: 1), try Sharpen(sigma: 50)]
        for processor in processors {
            #expect(throws: CodecError.cancelled, "\(processor.identifier)") {
                try WorkCancellation.run(with: CancellationFlag(raisingAfter: 1)) { try processor.process(image) }
            }
        }
    }
}
