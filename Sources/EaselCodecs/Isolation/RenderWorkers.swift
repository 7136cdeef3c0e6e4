import EaselSupport
import Foundation

/// The pool of render worker processes (`RenderIsolation` says why and how they are limited).
///
/// A job takes an idle worker or starts one, writes its request, and waits for the answer in
/// slices of 50 ms, between which it asks whether its caller's work was cancelled
/// (`WorkCancellation`) or its time is up: then the worker is killed (SIGKILL) and reaped, and
/// the job ends with `cancelled` or `renderFailed`. A worker whose output ends before its answer
/// (a crash, its memory or CPU limit) is reaped and the job is `renderFailed` with the reason. A
/// worker that answered goes back to the idle list, unless it has done `jobsPerWorker` jobs or
/// the list is full. Jobs run synchronously on the caller's thread, which is a decoding pool's.
final class RenderWorkers: Sendable {
    static let shared = RenderWorkers()

    private struct State {
        var isolation: RenderIsolation?
        var idle: [Worker] = []
        var started = 0
        var failed = 0
    }

    private struct Worker {
        let process: ChildProcess
        let isolation: RenderIsolation
        var jobs = 0
    }

    private let state = Locked(State())

    /// Called after each worker is started (a test seam: a test waits for it instead of polling).
    let spawnHook = Locked<(@Sendable () -> Void)?>(nil)

    var isolation: RenderIsolation? { state.withLock { $0.isolation } }
    var statistics: (started: Int, failed: Int) { state.withLock { ($0.started, $0.failed) } }

    func use(_ isolation: RenderIsolation?) {
        let ended = state.withLock { state -> [Worker] in
            state.isolation = isolation
            defer { state.idle = [] }
            return state.idle
        }
        for worker in ended { worker.process.close() }
    }

    /// Runs `job` over `document`, in a worker when isolation is on, else here; a drawing job
    /// draws into `pixels` (`job.pixelBytes`, zeroed).
    /// - Throws: `CodecError.cancelled` when the caller's work was cancelled meanwhile,
    ///   `CodecError.renderFailed` when the worker crashed or passed a limit,
    ///   `CodecError.rendererUnavailable` when none could be started.
    static func perform(_ job: RenderJob, document: Data, pixels: UnsafeMutableRawPointer?) throws(CodecError) -> RenderReply {
        guard let isolation = shared.isolation else {
            return document.withUnsafeBytes { job.performHere($0, pixels: pixels) }
        }
        return try shared.perform(job, document: document, pixels: pixels, isolation: isolation)
    }

    func perform(_ job: RenderJob, document: Data, pixels: UnsafeMutableRawPointer?,
                         isolation: RenderIsolation) throws(CodecError) -> RenderReply {
        if WorkCancellation.isCancelled { throw .cancelled }
        let deadline = ContinuousClock.now + isolation.timeLimit
        // A reused worker that died while idle (killed from outside) fails at the first write:
        // the job then goes to a new worker, once.
        var attempt = 0
        while true {
            var worker = try take(isolation, format: job.operation.format)
            do {
                let reply = try exchange(job, document: document, pixels: pixels, with: worker, deadline: deadline)
                worker.jobs += 1
                giveBack(worker)
                return reply
            } catch let failure {
                let ending = worker.process.kill()
                state.withLock { $0.failed += 1 }
                if case .unwritable = failure, worker.jobs > 0, attempt == 0 {
                    attempt += 1
                    continue
                }
                throw failure.error(job: job, ending: ending, isolation: isolation)
            }
        }
    }

    private func take(_ isolation: RenderIsolation, format: ImageFileType) throws(CodecError) -> Worker {
        let idle = state.withLock { state -> Worker? in
            guard let index = state.idle.lastIndex(where: { $0.isolation == isolation }) else { return nil }
            return state.idle.remove(at: index)
        }
        if let idle { return idle }
        let arguments = isolation.arguments + ["--memory-limit", String(isolation.memoryLimit)]
        do {
            let process = try ChildProcess.spawn(executable: isolation.executable, arguments: arguments)
            state.withLock { $0.started += 1 }
            spawnHook.withLock { $0 }?()
            return Worker(process: process, isolation: isolation)
        } catch {
            throw .rendererUnavailable("no render worker could be started (\(isolation.executable): \(errnoDescription(error.code)))")
        }
    }

    private func giveBack(_ worker: Worker) {
        let keep = state.withLock { state -> Bool in
            guard worker.jobs < worker.isolation.jobsPerWorker, state.isolation == worker.isolation,
                  state.idle.count < worker.isolation.idleWorkers else { return false }
            state.idle.append(worker)
            return true
        }
        if !keep { worker.process.close() }
    }

    /// Why a job failed, before the worker's ending is known.
    private enum Failure: Error {
        case cancelled
        case timedOut
        case ended
        case garbled(String)
        case io(Errno)
        /// The request could not be written (the worker had ended).
        case unwritable(Errno)

        func error(job: RenderJob, ending: ChildProcess.Ending?, isolation: RenderIsolation) -> CodecError {
            let format = job.operation.format
            switch self {
            case .cancelled: return .cancelled
            case .timedOut:
                return .renderFailed(format: format, reason: "the render took longer than \(isolation.timeLimit) and was stopped")
            case .garbled(let what): return .renderFailed(format: format, reason: "the render worker answered garbage (\(what))")
            case .ended, .io, .unwritable:
                if ChildProcess.isCPULimit(ending) {
                    return .renderFailed(format: format, reason: "the render used more than \(isolation.cpuSecondsPerJob) s of CPU (the limit)")
                }
                let how = ending.map { "\($0)" } ?? "ended"
                return .renderFailed(format: format, reason: "the renderer crashed or passed its memory limit of \(isolation.memoryLimit) bytes (\(how))")
            }
        }
    }

    private func exchange(_ job: RenderJob, document: Data, pixels: UnsafeMutableRawPointer?, with worker: Worker,
                          deadline: ContinuousClock.Instant) throws(Failure) -> RenderReply {
        let process = worker.process
        let header = RenderWire.request(job, documentBytes: document.count, cpuSeconds: worker.isolation.cpuSecondsPerJob)
        do {
            try header.withUnsafeBytes { bytes in try process.write(bytes) }
            try document.withUnsafeBytes { bytes in try process.write(bytes) }
        } catch {
            throw .unwritable(error as? Errno ?? .io)
        }
        var replyHeader = [UInt8](repeating: 0, count: RenderWire.replyHeaderSize)
        try receive(into: &replyHeader, from: process, deadline: deadline)
        guard let (reply, messageBytes, pixelBytes) = RenderWire.parseReply(replyHeader) else { throw .garbled("a bad header") }
        var reason = [UInt8](repeating: 0, count: messageBytes)
        try receive(into: &reason, from: process, deadline: deadline)
        var answer = reply
        answer.message = String(decoding: reason, as: UTF8.self)
        if pixelBytes > 0 {
            guard let pixels, pixelBytes == job.pixelBytes, reply.result == 1 else { throw .garbled("\(pixelBytes) bytes of pixels") }
            try receive(UnsafeMutableRawBufferPointer(start: pixels, count: pixelBytes), from: process, deadline: deadline)
        } else if job.operation.drawsPixels, reply.result == 1 {
            throw .garbled("no pixels")
        }
        return answer
    }

    /// Fills `bytes` from the worker's output, stopping at cancellation or the deadline.
    private func receive(into bytes: inout [UInt8], from process: ChildProcess, deadline: ContinuousClock.Instant) throws(Failure) {
        let count = bytes.count
        try bytes.withUnsafeMutableBufferPointer { (buffer: inout UnsafeMutableBufferPointer<UInt8>) throws(Failure) in
            try receive(UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: count), from: process, deadline: deadline)
        }
    }

    /// Fills `buffer` from the worker's output, stopping at cancellation or the deadline.
    private func receive(_ buffer: UnsafeMutableRawBufferPointer, from process: ChildProcess,
                         deadline: ContinuousClock.Instant) throws(Failure) {
        var filled = 0
        while filled < buffer.count {
            if WorkCancellation.isCancelled { throw .cancelled }
            if ContinuousClock.now >= deadline { throw .timedOut }
            let count: Int
            do {
                guard try process.waitForOutput(milliseconds: 50) else { continue }
                count = try process.readAvailable(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            } catch {
                throw .io(error)
            }
            if count == 0 { throw .ended }
            filled += count
        }
    }
}
