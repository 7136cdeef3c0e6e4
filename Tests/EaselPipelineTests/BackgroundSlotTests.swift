@testable import EaselPipeline
import EaselTestSupport
import Testing

/// Background work (`.veryLow`) takes a decode slot only when nothing else runs or waits.
@Suite(.timeLimit(.minutes(1))) struct BackgroundSlotTests {
    /// Runs `body` in a slot of `queue` at `priority` in a task of its own; `started` opens
    /// when it has its slot, and it ends when `finish` opens.
    static func occupy(_ queue: WorkQueue, _ priority: ImageRequest.Priority, handle: EaselPipeline.PriorityHandle? = nil, started: Gate,
                       finish: Gate) -> Task<Void, any Error> {
        Task {
            try await queue.run(priority: handle ?? EaselPipeline.PriorityHandle(priority)) { () async throws(PipelineError) in
                started.open()
                do { try await finish.wait() } catch { throw .cancelled }
            }
        }
    }

    @Test func backgroundWorkWaitsForTheQueueToBeIdle() async throws {
        let queue = WorkQueue(limit: 2)
        let (foregroundStarted, foregroundDone) = (Gate(), Gate())
        let foreground = Self.occupy(queue, .normal, started: foregroundStarted, finish: foregroundDone)
        try await foregroundStarted.wait()
        // A slot is free, but an answer is being made: the background work waits.
        let (backgroundStarted, backgroundDone) = (Gate(), Gate())
        let background = Self.occupy(queue, .veryLow, started: backgroundStarted, finish: backgroundDone)
        // (Until its ticket is queued: bounded, it is a matter of a few task switches.)
        for _ in 0..<1_000_000 where queue.waitingCount == 0 { await Task.yield() }
        #expect(queue.runningCount == 1 && queue.waitingCount == 1)
        // Another answer still starts at once, ahead of it.
        let (otherStarted, otherDone) = (Gate(), Gate())
        let other = Self.occupy(queue, .normal, started: otherStarted, finish: otherDone)
        try await otherStarted.wait()
        #expect(queue.runningCount == 2 && queue.waitingCount == 1)
        foregroundDone.open()
        try await foreground.value
        #expect(queue.waitingCount == 1, "one answer still runs")
        otherDone.open()
        try await other.value
        // Idle: the background work has its slot.
        try await backgroundStarted.wait()
        backgroundDone.open()
        try await background.value
        #expect(queue.runningCount == 0 && queue.waitingCount == 0)
    }

    @Test func backgroundWorkJoinedByARequestStartsAsThatRequest() async throws {
        let queue = WorkQueue(limit: 2)
        let (foregroundStarted, foregroundDone) = (Gate(), Gate())
        let foreground = Self.occupy(queue, .normal, started: foregroundStarted, finish: foregroundDone)
        try await foregroundStarted.wait()
        let handle = EaselPipeline.PriorityHandle(ImageRequest.Priority.veryLow)
        let (backgroundStarted, backgroundDone) = (Gate(), Gate())
        let background = Self.occupy(queue, .veryLow, handle: handle, started: backgroundStarted, finish: backgroundDone)
        for _ in 0..<1_000_000 where queue.waitingCount == 0 { await Task.yield() }
        // A request joins the work (its priority rises): it starts in the free slot.
        handle.set(.normal)
        try await backgroundStarted.wait()
        #expect(queue.runningCount == 2)
        backgroundDone.open()
        foregroundDone.open()
        try await background.value
        try await foreground.value
    }
}
