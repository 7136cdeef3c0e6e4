import EaselCodecs
@testable import EaselPipeline
import EaselTestSupport
import Foundation
import Testing

/// The memory budget: work starts while its estimated bytes fit, waits in priority order
/// otherwise, and work over the budget alone is refused before it starts.
@Suite(.timeLimit(.minutes(1))) struct MemoryBudgetTests {
    static func occupy(_ queue: WorkQueue, _ priority: ImageRequest.Priority, cost: Int, started: Gate, finish: Gate) -> Task<Void, any Error> {
        Task {
            try await queue.run(priority: EaselPipeline.PriorityHandle(priority), cost: cost) { () async throws(PipelineError) in
                started.open()
                do { try await finish.wait() } catch { throw .cancelled }
            }
        }
    }

    /// One operation of the queue's work: its task, and the gates it opens when it starts and
    /// waits on to end.
    struct Held {
        let task: Task<Void, any Error>
        let started: Gate, done: Gate
    }

    /// Starts an operation of `cost`; with `waiting`, returns once that many tickets wait.
    static func hold(_ queue: WorkQueue, _ priority: ImageRequest.Priority = .normal, cost: Int, waiting: Int? = nil) async throws -> Held {
        let (started, done) = (Gate(), Gate())
        let task = occupy(queue, priority, cost: cost, started: started, finish: done)
        if let waiting {
            for _ in 0..<1_000_000 where queue.waitingCount < waiting { await Task.yield() }
        } else {
            try await started.wait()
        }
        return Held(task: task, started: started, done: done)
    }

    /// A (60) runs in a budget of 100; B (60) waits for its bytes; C (30) would fit, but waits
    /// behind B.
    static func oneRunsTwoWait(_ queue: WorkQueue) async throws -> (a: Held, b: Held, c: Held) {
        let a = try await hold(queue, cost: 60)
        let b = try await hold(queue, cost: 60, waiting: 1)
        let c = try await hold(queue, cost: 30, waiting: 2)
        return (a, b, c)
    }

    @Test func workWaitsForItsBytesInPriorityOrder() async throws {
        let queue = WorkQueue(limit: 8, newestFirst: false, budget: 100)
        // 60 + 60 is over 100: B waits though slots are free; C (30) would fit, but B is first.
        let (a, b, c) = try await Self.oneRunsTwoWait(queue)
        #expect(queue.runningCount == 1 && queue.waitingCount == 2 && queue.reservedBytes.now == 60)
        // A higher priority that fits goes first.
        let d = try await Self.hold(queue, .high, cost: 40)
        #expect(queue.reservedBytes.now == 100)
        // A ends: B (60) starts, and C (30) with it (90 in all); D still holds 40 until it ends.
        a.done.open()
        try await a.task.value
        d.done.open()
        try await d.task.value
        try await b.started.wait()
        try await c.started.wait()
        #expect(queue.reservedBytes.now == 90)
        b.done.open()
        c.done.open()
        try await b.task.value
        try await c.task.value
        #expect(queue.reservedBytes.now == 0 && queue.reservedBytes.peak == 100, "never over the budget")
        // Over the budget alone: refused at once, naming it.
        await #expect(throws: PipelineError.overMemoryBudget(needed: 101, budget: 100)) {
            try await queue.run(priority: EaselPipeline.PriorityHandle(.normal), cost: 101) { () async throws(PipelineError) in }
        }
    }

    /// A waiter that holds others back (it does not fit) and leaves lets them start at once.
    @Test func aWaiterThatLeavesLetsThoseBehindItStart() async throws {
        let queue = WorkQueue(limit: 8, newestFirst: false, budget: 100)
        let (a, b, c) = try await Self.oneRunsTwoWait(queue)
        #expect(queue.runningCount == 1, "C fits but waits behind B")
        b.task.cancel()
        await #expect(throws: (any Error).self) { try await b.task.value }
        try await c.started.wait()
        #expect(queue.reservedBytes.now == 90)
        a.done.open()
        c.done.open()
        b.done.open()
        try await a.task.value
        try await c.task.value
        #expect(queue.reservedBytes.now == 0 && queue.waitingCount == 0)
    }

    /// A 32-bit BMP's pixels (one of them transparent: the encoder keeps alpha).
    static func translucent(width: Int, height: Int) -> Bitmap {
        painted(width: width, height: height) { x, y in [UInt8(x % 256), UInt8(y % 256), 90, x == 0 && y == 0 ? 0 : 255] }
    }

    /// A pipeline with a budget estimates each decode from its header: concurrent requests of a
    /// large source never reserve more than the budget together, all are answered, and a source
    /// whose decode alone is over it is refused with the budget named.
    @Test func aPipelinesConcurrentDecodesStayWithinItsBudget() async throws {
        let root = try TemporaryDirectory()
        // A BMP with alpha decodes at full size (an opaque one shrinks on load): 1600 × 1200 is
        // 7.7 MB of pixels, about 17 MB estimated.
        try ImageEncoder.encode(Self.translucent(width: 1600, height: 1200), as: .bmp).write(to: root.child("big.bmp"))
        let estimate = MemoryEstimate.peakBytes(info: ImageInfo(fileType: .bmp, width: 1600, height: 1200,
                                                 hasAlpha: true, isGrayscale: false, isProgressive: false),
                                                 decodedSize: (1600, 1200), animated: false)
        #expect(estimate > 7_680_000 * 2 && estimate < 7_680_000 * 3)
        var configuration = ImagePipeline.Configuration(fetchers: [FileFetcher(root: root.url)], downloadRate: nil)
        configuration.maximumConcurrentDecodes = 8
        configuration.memoryBudget = estimate * 2 + estimate / 2  // two at once, not three
        let pipeline = try ImagePipeline(configuration: configuration)
        let sizes = (0..<8).map { 100 + $0 * 10 }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for width in sizes {
                group.addTask {
                    var plan = ImagePlan()
                    plan.width = width
                    plan.format = .png
                    let answer = try await pipeline.answer(for: try ImageRequest(url: root.child("big.bmp"), plan: plan))
                    return try ImageDecoder.info(of: answer.encoded.data).width
                }
            }
            var widths: [Int] = []
            for try await width in group { widths.append(width) }
            #expect(widths.sorted() == sizes, "every request answered")
        }
        let statistics = await pipeline.statistics()
        #expect(statistics.memoryBudget == configuration.memoryBudget && statistics.reservedBytes == 0)
        #expect(statistics.peakReservedBytes > estimate && statistics.peakReservedBytes <= configuration.memoryBudget!,
                "two at once at most: \(statistics.peakReservedBytes) of \(configuration.memoryBudget!)")
        #expect(pipeline.counters.decodes == sizes.count)
        await pipeline.close()

        // A budget below one decode's estimate refuses it before decoding.
        var tight = configuration
        tight.memoryBudget = estimate / 2
        let refusing = try ImagePipeline(configuration: tight)
        var plan = ImagePlan()
        plan.width = 100
        await #expect { try await refusing.answer(for: try ImageRequest(url: root.child("big.bmp"), plan: plan)) } throws: { error in
            guard case .overMemoryBudget(let needed, let budget) = error as? PipelineError else { return false }
            return needed == estimate && budget == estimate / 2
        }
        #expect(refusing.counters.decodes == 0)
        await refusing.close()

        // A budget that no mix of decodes can reach is not enforced: nothing is estimated.
        var roomy = configuration
        roomy.memoryBudget = 1 << 50
        #expect(TaskGraph.bindingBudget(roomy) == nil && TaskGraph.bindingBudget(configuration) == configuration.memoryBudget)
        let unbound = try ImagePipeline(configuration: roomy)
        _ = try await unbound.answer(for: try ImageRequest(url: root.child("big.bmp"), plan: plan))
        let roomyStatistics = await unbound.statistics()
        #expect(roomyStatistics.memoryBudget == 1 << 50 && roomyStatistics.peakReservedBytes == 0)
        await unbound.close()
    }
}
