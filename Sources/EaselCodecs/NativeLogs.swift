import CCairo
import EaselSupport
import Logging

/// The C libraries' own messages as swift-log lines: GLib's structured log (GLib, GObject,
/// Pango, librsvg, poppler's GLib layer) goes to `logger` instead of standard error, at the
/// matching level, with the library's domain as `domain`. A server that logs JSON then writes
/// these as JSON too, with the request ID of the request whose work logged them.
public enum NativeLogs {
    private static let logger = Locked<Logger?>(nil)

    /// Sends GLib's messages to `logger` from now on (once per process does it; a later call
    /// changes the logger).
    public static func route(to logger: Logger) {
        Self.logger.withLock { $0 = logger }
        easel_glib_route_logs { level, domain, message in
            guard let message, let logger = NativeLogs.logger.withLock({ $0 }) else { return }
            let text = String(cString: message)
            let metadata: Logger.Metadata = domain.map { ["domain": .string(String(cString: $0))] } ?? [:]
            logger.log(level: NativeLogs.level(level), "\(text)", metadata: metadata)
        }
    }

    /// swift-log's level for GLib's level bits.
    static func level(_ bits: Int32) -> Logger.Level {
        switch bits {
        case _ where bits & (1 << 2) != 0: .critical  // error (aborts after)
        case _ where bits & (1 << 3) != 0: .error  // critical
        case _ where bits & (1 << 4) != 0: .warning
        case _ where bits & (1 << 5) != 0: .notice  // message
        case _ where bits & (1 << 6) != 0: .info
        default: .debug
        }
    }
}
