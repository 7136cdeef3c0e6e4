@testable import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// The render workers (`RenderIsolation`): a renderer that crashes, hangs or bloats costs one
/// render, never the process that asked; a cancelled render's worker is killed at once. These
/// call the pool with their own isolation (not the process-wide setting other tests use) and
/// skip the parse-time budgets, which would refuse these documents first. One test at a time: the
/// cancellation test counts the pool's workers.
@Suite("Render workers", .serialized, .timeLimit(.minutes(2)))
struct RenderIsolationTests {
    static func isolation(cpu: Int = 20, time: Duration = .seconds(30), memory: Int = 1 << 30) -> RenderIsolation {
        RenderIsolation(executable: builtProduct("easel").path, memoryLimit: memory, cpuSecondsPerJob: cpu, timeLimit: time)
    }

    /// An SVG drawn at `width`×`height` in a worker, past every budget.
    static func render(_ document: Data, width: Int = 100, height: Int = 100, isolation: RenderIsolation) throws -> Bitmap {
        var bitmap = Bitmap(width: width, height: height, pixelFormat: .rgba8)
        let job = RenderJob(operation: .svgRender, width: Int32(width), height: Int32(height), rowBytes: bitmap.rowBytes)
        let reply = try bitmap.withUnsafeMutableBytes { pixels in
            try RenderWorkers.shared.perform(job, document: document, pixels: pixels.baseAddress, isolation: isolation)
        }
        guard reply.result == 1 else { throw CodecError.corrupt(format: .svg, reason: reply.message) }
        return bitmap
    }

    static func failure(_ body: () throws -> Bitmap) -> CodecError? {
        do { _ = try body(); return nil } catch { return error as? CodecError ?? .invalidParameters("\(error)") }
    }

    @Test func aRendererThatCrashesCostsOneRenderAndTheNextRenderWorks() throws {
        let isolation = Self.isolation()
        // (librsvg's panic is an abort, its stack overflow a SIGSEGV: either way a signal ends
        // the worker, which leaves crash handlers, a sanitizer's included, out of its way.)
        for document in [HostileDocuments.convolution, HostileDocuments.nestedSelectors] {
            let error = Self.failure { try Self.render(document, isolation: isolation) }
            guard case .renderFailed(.svg, let reason) = error else { Issue.record("\(String(describing: error))"); continue }
            #expect(reason.contains("stopped by signal"), "\(reason)")
        }
        // This process is alive, and a new worker draws the next document.
        let drawn = try Self.render(HostileDocuments.plain, width: 100, height: 50, isolation: isolation)
        drawn.withUnsafeBytes { pixels in
            #expect(Array(pixels[0..<4]) == [0, 0, 255, 255], "blue on the left")
            #expect(pixels[drawn.rowBytes * 25 + 75 * 4 + 3] == 0, "transparent on the right")
        }
    }

    @Test func aRenderPastItsCPULimitIsStoppedByTheKernel() {
        let error = Self.failure { try Self.render(HostileDocuments.octaves, isolation: Self.isolation(cpu: 1)) }
        guard case .renderFailed(.svg, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("more than 1 s of CPU"), "\(reason)")
    }

    @Test func aRenderPastItsTimeLimitIsKilled() {
        let start = ContinuousClock.now
        let error = Self.failure {
            try Self.render(HostileDocuments.octaves, isolation: Self.isolation(time: .milliseconds(500)))
        }
        guard case .renderFailed(.svg, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("took longer than"), "\(reason)")
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func aRendererPastItsMemoryLimitCostsOneRender() {
        // Two million saved graphics states that the PDF budget does not see (spread over
        // streams): poppler's stack of states grows past 512 MiB (of which the worker's own code
        // takes some 350 MiB of address space).
        var bitmap = Bitmap(width: 200, height: 200, pixelFormat: .rgba8)
        let job = RenderJob(operation: .pdfRender, width: 200, height: 200, rowBytes: bitmap.rowBytes)
        let isolation = Self.isolation(memory: 512 << 20)
        var error: CodecError?
        bitmap.withUnsafeMutableBytes { pixels in
            do {
                let reply = try RenderWorkers.shared.perform(job, document: HostileDocuments.savesAcrossStreams, pixels: pixels.baseAddress,
                                                             isolation: isolation)
                Issue.record("rendered: \(reply)")
            } catch let failure {
                error = failure as? CodecError
            }
        }
        guard case .renderFailed(.pdf, let reason) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason.contains("memory limit"), "\(reason)")
    }

    @Test func aCancelledRenderKillsItsWorkerAtOnce() async throws {
        let isolation = Self.isolation()
        let (startedBefore, failedBefore) = RenderIsolation.statistics
        let (spawned, spawn) = AsyncStream<Void>.makeStream()
        RenderWorkers.shared.spawnHook.withLock { $0 = { spawn.yield() } }
        defer { RenderWorkers.shared.spawnHook.withLock { $0 = nil } }
        let task = Task {
            try await BlockingIOPool.shared.performCancellable { () throws -> Bitmap in
                try Self.render(HostileDocuments.octaves, isolation: isolation)
            }
        }
        // Cancelled once its worker runs (the pool says when it has started one).
        var starts = spawned.makeAsyncIterator()
        _ = await starts.next()
        let cancelled = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - cancelled < .seconds(2), "the render stopped within 2 s of its cancellation")
        guard case .failure(let error) = result else { Issue.record("the render finished"); return }
        #expect(error as? CodecError == .cancelled)
        #expect(RenderIsolation.statistics.started == startedBefore + 1, "the render had started in a worker")
        #expect(RenderIsolation.statistics.failed == failedBefore + 1, "its worker was killed and reaped")
    }

    @Test func theBudgetsRefuseEachAttackBeforeAnyRenderer() {
        let refusals: [(Data, String)] = [
            (HostileDocuments.convolution, "feConvolveMatrix of order 22"), (HostileDocuments.nestedSelectors, "CSS nested"),
            (HostileDocuments.hugeFont, "font size"), (HostileDocuments.octaves, "octaves"), (HostileDocuments.text, "bytes of text"),
            (HostileDocuments.masks, "masks"),
        ]
        for (document, named) in refusals {
            let error = Self.failure { try ImageDecoder.decode(document, covering: (64, 64)) }
            guard case .corrupt(.svg, let reason) = error else { Issue.record("\(named): \(String(describing: error))"); continue }
            #expect(reason.contains(named) && reason.contains("limit"), "\(reason)")
        }
        for (document, named) in [(HostileDocuments.nestedForms, "operators"), (HostileDocuments.saves, "(q)")] {
            let error = Self.failure { try ImageDecoder.decode(document, covering: (64, 64)) }
            guard case .corrupt(.pdf, let reason) = error else { Issue.record("\(named): \(String(describing: error))"); continue }
            #expect(reason.contains(named) && reason.contains("limit"), "\(reason)")
        }
    }
}
