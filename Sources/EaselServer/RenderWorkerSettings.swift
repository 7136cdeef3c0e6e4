import EaselCodecs
import Foundation

/// Where `easel serve` renders SVG and PDF documents (`RenderIsolation`): in worker processes by
/// default, each limited as below, so that a hostile document costs one request, never the
/// server. JSON `renderWorkers`; `EASEL_RENDER_WORKERS` (1/0), `EASEL_RENDER_MEMORY_MB` and
/// `EASEL_RENDER_CPU_SECONDS`.
public struct RenderWorkerSettings: Sendable, Codable, Equatable {
    /// Render in worker processes (true, the default) or in the server's own process (false: only
    /// for documents you trust).
    public var enabled = true
    /// The address space each worker may use, in MiB (64 to 65,536). Default 1,024.
    public var memoryLimitMB = 1024
    /// The CPU seconds one render may use (1 to 3,600). Default 20.
    public var cpuSeconds = 20
    /// Renders a worker makes before it is replaced (1 to 100,000). Default 200.
    public var jobsPerWorker = 200

    /// The defaults: workers on, 1 GiB, 20 CPU-seconds, 200 renders a worker.
    public init() {}

    /// Every key is optional: a file may set only what it changes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = RenderWorkerSettings()
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? defaults.enabled
        memoryLimitMB = try container.decodeIfPresent(Int.self, forKey: .memoryLimitMB) ?? defaults.memoryLimitMB
        cpuSeconds = try container.decodeIfPresent(Int.self, forKey: .cpuSeconds) ?? defaults.cpuSeconds
        jobsPerWorker = try container.decodeIfPresent(Int.self, forKey: .jobsPerWorker) ?? defaults.jobsPerWorker
    }

    mutating func apply(environment: [String: String]) throws(ServerConfigurationError) {
        if let on = try ServerConfiguration.flag(environment, "EASEL_RENDER_WORKERS") { enabled = on }
        if let text = environment["EASEL_RENDER_MEMORY_MB"] {
            guard let value = Int(text) else { throw .invalidValue(name: "EASEL_RENDER_MEMORY_MB", value: text) }
            memoryLimitMB = value
        }
        if let text = environment["EASEL_RENDER_CPU_SECONDS"] {
            guard let value = Int(text) else { throw .invalidValue(name: "EASEL_RENDER_CPU_SECONDS", value: text) }
            cpuSeconds = value
        }
    }

    /// The settings checked against their ranges.
    func validate() throws(ServerConfigurationError) {
        guard (64...65_536).contains(memoryLimitMB) else { throw .invalidValue(name: "renderWorkers.memoryLimitMB", value: "\(memoryLimitMB)") }
        guard (1...3600).contains(cpuSeconds) else { throw .invalidValue(name: "renderWorkers.cpuSeconds", value: "\(cpuSeconds)") }
        guard (1...100_000).contains(jobsPerWorker) else { throw .invalidValue(name: "renderWorkers.jobsPerWorker", value: "\(jobsPerWorker)") }
    }

    /// The isolation these settings ask for, with `executable` as the worker (nil: in process);
    /// a render may take as long as a request.
    public func isolation(executable: String, requestTimeout: Double) -> RenderIsolation? {
        guard enabled else { return nil }
        let seconds = max(1, min(requestTimeout, 3600))
        return RenderIsolation(executable: executable, memoryLimit: memoryLimitMB << 20, cpuSecondsPerJob: cpuSeconds,
                               timeLimit: .milliseconds(Int(seconds * 1000)), jobsPerWorker: jobsPerWorker)
    }
}
