import Foundation
import Synchronization
package import Tracing

/// Traces of the work a request causes, through swift-distributed-tracing: whatever tracer the
/// process bootstrapped (`easel serve --traces otlp` bootstraps swift-otel's OTLP exporter).
///
/// Off until `enable()`: then every check below is one relaxed atomic load, and nothing is
/// allocated, read from a task-local or handed to a tracer. On, the request's span context
/// follows its work onto the I/O threads (`BlockingIOPool` carries it), and each stage the
/// pipeline times (queue, fetch, decode, process, encode) becomes a child span.
package enum Traces {
    private static let on = Atomic<Bool>(false)

    /// Whether a tracer was bootstrapped for this process.
    package static var isEnabled: Bool { on.load(ordering: .relaxed) }

    /// Turns tracing on; call once, after `InstrumentationSystem.bootstrap`.
    package static func enable() { on.store(true, ordering: .relaxed) }

    /// The span of the request being answered (set by the server around its answer): what
    /// `annotate` writes to, and whether the request is sampled at all. A request whose span
    /// does not record (the sampler dropped its trace) gets no child spans and no attributes.
    @TaskLocal package static var requestSpan: (any Span)?

    /// Whether the request's trace is recorded, decided when its span began (a span reports
    /// false once it has ended, and work after the answer still belongs to the trace).
    @TaskLocal package static var requestRecorded = true

    /// Whether work done now should make spans: tracing is on and the request's trace (if the
    /// work belongs to one) is recorded.
    package static var isRecording: Bool { isEnabled && requestRecorded }

    /// Runs `body` as part of the request whose `span` it is (`requestSpan`, the span's context
    /// current, its sampling decision).
    package static func inRequest<T>(_ span: any Span, _ body: () async throws -> T) async rethrows -> T {
        try await $requestSpan.withValue(span) {
            try await $requestRecorded.withValue(span.isRecording) {
                try await InstrumentationContext.$current.withValue(span.context, operation: body)
            }
        }
    }

    /// What a detached task needs to carry on the current request's trace: `run` it there.
    package struct Carried: Sendable {
        let context: InstrumentationContext?
        let span: (any Span)?
        let recorded: Bool

        /// Runs `body` under the captured trace (as is, when nothing was captured).
        package func run(_ body: @Sendable () async -> Void) async {
            guard let context else { return await body() }
            await $requestSpan.withValue(span) {
                await $requestRecorded.withValue(recorded) {
                    await InstrumentationContext.$current.withValue(context) { await body() }
                }
            }
        }
    }

    /// Runs `body` outside the current request's trace: background work of its own (which
    /// other requests may join) makes no spans in the trace of the request that started it.
    package static func outsideRequests(_ body: () async -> Void) async {
        await $requestSpan.withValue(nil) { await $requestRecorded.withValue(false) { await body() } }
    }

    /// The current trace, for work that continues it in a detached task (nothing when off).
    package static func carry() -> Carried {
        guard isRecording, let context = InstrumentationContext.current else { return Carried(context: nil, span: nil, recorded: false) }
        return Carried(context: context, span: requestSpan, recorded: requestRecorded)
    }

    /// `job`, run with the context of the caller's span when tracing is on (work handed to a
    /// thread outside the concurrency pool would otherwise lose it); `job` itself when off.
    package static func carryingContext(_ job: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        guard isRecording, let context = InstrumentationContext.current else { return job }
        let span = requestSpan, recorded = requestRecorded
        return {
            $requestSpan.withValue(span) {
                $requestRecorded.withValue(recorded) { InstrumentationContext.$current.withValue(context) { job() } }
            }
        }
    }

    /// A finished span `name` that took `duration` and ended now: a child of `context`, or of
    /// the current span. Stages are timed where they run (often on an I/O thread); this turns
    /// the timing into a span without a second clock read at the start.
    package static func record(_ name: @autoclosure () -> String, took duration: Duration, kind: SpanKind = .internal,
                               context: InstrumentationContext? = nil, attributes: SpanAttributes = [:]) {
        guard isRecording, let context = context ?? InstrumentationContext.current else { return }
        let end = DefaultTracerClock.now
        let span = InstrumentationSystem.tracer.startSpan(name(), context: context, ofKind: kind, at: instant(duration, before: end))
        if !attributes.isEmpty { span.attributes = attributes }
        span.end(at: end)
    }

    /// The tracer's time `duration` before `end` (now by default): the start of work timed
    /// with a monotonic clock (negative durations count as none).
    package static func instant(_ duration: Duration, before end: DefaultTracerClock.Timestamp = DefaultTracerClock.now)
        -> DefaultTracerClock.Timestamp {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds < 0 ? 0 : UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        return DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: end.nanosecondsSinceEpoch - min(nanoseconds, end.nanosecondsSinceEpoch))
    }

    /// Runs `body` in a span `name`, a child of the current span, which is current meanwhile
    /// (work `body` starts, and requests it sends, are its children); `body` gets the span to
    /// add attributes to. Off, or outside any traced request, `body` runs alone with nil.
    package static func withSpan<T, Failure: Error>(
        _ name: @autoclosure () -> String, kind: SpanKind = .internal,
        _ body: (_ span: (any Span)?) async throws(Failure) -> T
    ) async throws(Failure) -> T {
        guard isRecording, let parent = InstrumentationContext.current else { return try await body(nil) }
        let span = InstrumentationSystem.tracer.startSpan(name(), context: parent, ofKind: kind)
        defer { span.end() }
        let result: Result<T, Failure> = await InstrumentationContext.$current.withValue(span.context) {
            do throws(Failure) { return .success(try await body(span)) } catch { return .failure(error) }
        }
        if case .failure(let error) = result {
            span.recordError(error)
            span.setStatus(.init(code: .error))
        }
        return try result.get()
    }

    /// A read of a cache tier as a span `easel.cache.read`: which store (`disk`, `shared`),
    /// which entry (`original`, `variant`, `encoded`), hit or miss, and the bytes read.
    package static func cacheRead(store: String, entry: String, _ read: () async -> Data?) async -> Data? {
        await withSpan("easel.cache.read") { span in
            let found = await read()
            span?.updateAttributes { attributes in
                attributes["easel.store"] = store
                attributes["easel.entry"] = entry
                attributes["easel.cache.result"] = found == nil ? "miss" : "hit"
                if let found { attributes["easel.bytes"] = found.count }
            }
            return found
        }
    }

    /// A write to a cache tier as a span `easel.cache.write`: store, entry, bytes, and whether
    /// it failed.
    package static func cacheWrite(store: String, entry: String, bytes: Int, _ write: () async throws -> Void) async {
        await withSpan("easel.cache.write") { span in
            span?.updateAttributes { attributes in
                attributes["easel.store"] = store
                attributes["easel.entry"] = entry
                attributes["easel.bytes"] = bytes
            }
            do { try await write() } catch {
                span?.recordError(error)
                span?.setStatus(.init(code: .error))
            }
        }
    }

    /// Sets `attribute` on the current span (the request's), when tracing is on.
    package static func annotate(_ attribute: String, _ value: @autoclosure () -> String) {
        guard isEnabled, let span = requestSpan, span.isRecording else { return }
        span.attributes[attribute] = value()
    }
}
