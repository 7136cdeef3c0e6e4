import EaselSupport
import Foundation

/// How close the process is to its memory limit.
public enum MemoryPressureLevel: Sendable, Comparable {
    /// Below `warningFraction` of the limit, or no reading: nothing to shed.
    case normal
    /// Above `warningFraction` of the limit: caches shed half their contents.
    case warning
    /// Above `criticalFraction` of the limit: caches empty themselves.
    case critical
}

/// Memory in use against the limit that applies to this process.
public struct MemoryUsage: Sendable, Equatable {
    /// Bytes in use.
    public var used: UInt64
    /// Bytes that may be used; 0 is read as no limit (the level stays normal).
    public var limit: UInt64
    /// A reading of `used` out of `limit` bytes.
    public init(used: UInt64, limit: UInt64) {
        self.used = used
        self.limit = limit
    }

    /// The cgroup v2 reading (`memory.current` / `memory.max`) when the process has a limit,
    /// else the whole machine's (`MemTotal - MemAvailable` / `MemTotal` from /proc/meminfo).
    public static func current() -> MemoryUsage? {
        if let max = try? readSmallFile("/sys/fs/cgroup/memory.max"),
           let limit = UInt64(max.trimmingCharacters(in: .whitespacesAndNewlines)),
           let current = try? readSmallFile("/sys/fs/cgroup/memory.current"),
           let used = UInt64(current.trimmingCharacters(in: .whitespacesAndNewlines)) {
            return MemoryUsage(used: used, limit: limit)
        }
        guard let info = try? readSmallFile("/proc/meminfo") else { return nil }
        var fields: [Substring: UInt64] = [:]
        for line in info.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " })
            if parts.count >= 2, let value = UInt64(parts[1]) { fields[parts[0]] = value * 1024 }
        }
        guard let total = fields["MemTotal"], let available = fields["MemAvailable"], total > 0 else { return nil }
        return MemoryUsage(used: total - min(total, available), limit: total)
    }
}

/// Watches memory usage and tells registered caches to shed entries when it runs high.
///
/// Linux has no memory-warning notification for ordinary processes, so the monitor polls
/// (every two seconds by default) once a handler is registered, and stops when none is left.
/// `check()` can also be called directly, for example after a large allocation.
public final class MemoryPressureMonitor: Sendable {
    /// The monitor caches made with `respondsToMemoryPressure` register with, on the default
    /// thresholds.
    public static let shared = MemoryPressureMonitor()

    /// The share of the limit in use (0–1) from which the level is `warning`; 0.85 by default.
    public let warningFraction: Double
    /// The share of the limit in use (0–1) from which the level is `critical`; 0.95 by default.
    public let criticalFraction: Double
    private let interval: Duration
    private let reading: @Sendable () -> MemoryUsage?
    private let handlers = Observers<MemoryPressureLevel>()
    private let poller: Locked<Task<Void, Never>?> = Locked(nil)

    /// A monitor that, while it has handlers, reads memory with `reading` every `interval`
    /// (2 seconds by default) and compares the share in use with the two fractions.
    public init(warningFraction: Double = 0.85, criticalFraction: Double = 0.95, interval: Duration = .seconds(2),
                reading: @escaping @Sendable () -> MemoryUsage? = { MemoryUsage.current() }) {
        self.warningFraction = warningFraction
        self.criticalFraction = criticalFraction
        self.interval = interval
        self.reading = reading
    }

    /// Registers `handler`; polling starts with the first handler.
    @discardableResult
    public func addHandler(_ handler: @escaping @Sendable (MemoryPressureLevel) -> Void) -> ObserverToken {
        // Handlers and the poller change together under the poller's lock, so a concurrent
        // add and remove can never leave a handler without polling.
        poller.withLock { task in
            let token = handlers.add(handler)
            if task == nil {
                let interval = self.interval
                task = Task.detached(priority: .background) { [weak self] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        guard let self else { return }
                        self.check()
                    }
                }
            }
            return token
        }
    }

    /// Unregisters the handler that `addHandler(_:)` returned `token` for; polling stops with the
    /// last handler.
    public func removeHandler(_ token: ObserverToken) {
        poller.withLock { task in
            handlers.remove(token)
            if handlers.isEmpty {
                task?.cancel()
                task = nil
            }
        }
    }

    /// Reads memory usage now, tells handlers when it is above normal, and returns the level.
    @discardableResult
    public func check() -> MemoryPressureLevel {
        let level = level(for: reading())
        if level != .normal { handlers.emit(level) }
        return level
    }

    func level(for usage: MemoryUsage?) -> MemoryPressureLevel {
        guard let usage, usage.limit > 0 else { return .normal }
        let fraction = Double(usage.used) / Double(usage.limit)
        if fraction >= criticalFraction { return .critical }
        if fraction >= warningFraction { return .warning }
        return .normal
    }
}
