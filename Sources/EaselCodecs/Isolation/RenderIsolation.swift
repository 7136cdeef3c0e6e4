import EaselSupport
import Foundation

/// Where SVG (librsvg) and PDF (poppler) documents are rendered: in worker processes, so that a
/// hostile document that crashes, hangs or bloats its renderer costs one request, never the
/// process that asked.
///
/// librsvg and poppler are C and Rust libraries Easel does not control: a panic in one aborts the
/// process that called it, and a render cannot be stopped once started. With isolation on, each
/// call runs in a worker (`easel render-worker`, started and reused by `RenderWorkers`) that has
/// an address-space limit, a CPU limit per job, no core files and, where the system allows it,
/// no network; it is killed when its caller's work is cancelled (a deadline passed, the last
/// requester left) or its time limit passes, and replaced after a crash, a kill or
/// `jobsPerWorker` jobs. Decoding and `ImageDecoder.info` keep their API: the process boundary
/// is behind them.
///
/// ```swift
/// RenderIsolation.use(RenderIsolation(executable: "/usr/local/bin/easel"))
/// ```
///
/// `easel serve` and the CLI's image commands turn it on with their own executable; a library
/// user who renders untrusted documents should too (otherwise documents render in process).
public struct RenderIsolation: Sendable, Hashable {
    /// The worker's executable and the arguments that make it a worker.
    /// The worker's executable.
    public var executable: String
    /// The arguments that make `executable` a worker (`render-worker`; `--memory-limit` is added).
    public var arguments: [String]
    /// The address space a worker may use, in bytes (`RLIMIT_AS`). Default 1 GiB.
    public var memoryLimit: Int
    /// The CPU seconds one job may use (`RLIMIT_CPU`, set before each job). Default 20.
    public var cpuSecondsPerJob: Int
    /// The wall-clock time one job may take before its worker is killed, when its caller sets no
    /// earlier end (a cancelled caller kills it at once). Default 30 s.
    public var timeLimit: Duration
    /// How many jobs a worker does before it is replaced (bounding what a library may leak or
    /// leave broken). Default 200.
    public var jobsPerWorker: Int
    /// Most idle workers kept for the next job. Default 4.
    public var idleWorkers: Int

    /// Isolation with `executable` as the worker and the given limits.
    public init(executable: String, arguments: [String] = ["render-worker"], memoryLimit: Int = 1 << 30,
                cpuSecondsPerJob: Int = 20, timeLimit: Duration = .seconds(30), jobsPerWorker: Int = 200, idleWorkers: Int = 4) {
        self.executable = executable
        self.arguments = arguments
        self.memoryLimit = memoryLimit
        self.cpuSecondsPerJob = cpuSecondsPerJob
        self.timeLimit = timeLimit
        self.jobsPerWorker = jobsPerWorker
        self.idleWorkers = idleWorkers
    }

    /// The isolation in force for this process: nil renders in process.
    public static var current: RenderIsolation? { RenderWorkers.shared.isolation }

    /// Renders documents in workers as `isolation` says from now on (nil: in process). Idle
    /// workers of an earlier setting are ended.
    public static func use(_ isolation: RenderIsolation?) { RenderWorkers.shared.use(isolation) }

    /// How many worker processes have been started, and how many ended by a crash, a limit or a
    /// kill (for metrics and tests).
    public static var statistics: (started: Int, failed: Int) { RenderWorkers.shared.statistics }
}
