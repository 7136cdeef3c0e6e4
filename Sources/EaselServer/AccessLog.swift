import HTTPTypes
import Logging
import Synchronization
import Tracing

/// The access log: one `info` line per answered request, on by default (`accessLog`,
/// `--no-access-log`, `EASEL_ACCESS_LOG=0`), written after the answer is made whichever path made
/// it (the router, or a replay of a ready answer).
///
/// Each line has `method`, `path`, `route` (the fixed label of `/metrics`), `status`, `bytes`
/// (the body's length; absent for a streamed body), `duration_ms`, `tier` (where the image came
/// from, for an image answer: `memory`, `table`, `diskVariant`, `diskOriginal`, `network`, `file`,
/// `encodedMemory`, …, or `original` for a source answered as it is), `request_id` and, with
/// tracing on, `trace_id`.
enum AccessLog {
    /// What the answerer learns that the middleware cannot see: the tier an image came from.
    /// One per request, set as a task-local only while the access log is on.
    final class Note: Sendable {
        private let state = Mutex<String?>(nil)

        /// The tier that answered.
        var tier: String? {
            get { state.withLock { $0 } }
            set { state.withLock { $0 = newValue } }
        }

        /// The current request's note, when the access log is on.
        @TaskLocal static var current: Note?
    }

    /// One answer, as the access log sees it.
    struct Entry {
        var method: HTTPRequest.Method
        var path: String
        var route: String?
        var status: Int
        var bytes: Int?
        var tier: String?
        var requestID: String?
        var traceID: String?
    }

    /// Writes `entry`'s line; the duration runs from `start`.
    static func write(_ logger: Logger, _ entry: Entry, since start: ContinuousClock.Instant) {
        guard logger.logLevel <= .info else { return }
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        var metadata: Logger.Metadata = [
            "method": .string(entry.method.rawValue), "path": .string(entry.path), "route": .string(entry.route ?? "other"),
            "status": .stringConvertible(entry.status), "duration_ms": .stringConvertible((milliseconds * 1000).rounded() / 1000),
        ]
        if let bytes = entry.bytes { metadata["bytes"] = .stringConvertible(bytes) }
        if let tier = entry.tier { metadata["tier"] = .string(tier) }
        if let requestID = entry.requestID { metadata["request_id"] = .string(requestID) }
        if let traceID = entry.traceID { metadata["trace_id"] = .string(traceID) }
        logger.info("answered", metadata: metadata)
    }

    /// The W3C trace ID (32 hex digits) of `span`'s context, as the tracer would send it on in
    /// `traceparent` (sampled or not: a trace that is not exported still names the request in
    /// the logs of the services it passed); nil when the propagator writes no `traceparent`.
    static func traceID(of span: any Span) -> String? {
        var carrier: [String: String] = [:]
        InstrumentationSystem.instrument.inject(span.context, into: &carrier, using: DictionaryInjector())
        guard let parent = carrier["traceparent"] else { return nil }
        let fields = parent.split(separator: "-")
        guard fields.count >= 4, fields[1].utf8.count == 32 else { return nil }
        return String(fields[1])
    }

    private struct DictionaryInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key.lowercased()] = value }
    }
}
