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

    /// `job`, run with the context of the caller's span when tracing is on (work handed to a
    /// thread outside the concurrency pool would otherwise lose it); `job` itself when off.
    package static func carryingContext(_ job: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        guard isEnabled, let context = InstrumentationContext.current else { return job }
        return { InstrumentationContext.$current.withValue(context) { job() } }
    }

    /// A finished span `name` that took `duration` and ended now: a child of `context`, or of
    /// the current span. Stages are timed where they run (often on an I/O thread); this turns
    /// the timing into a span without a second clock read at the start.
    package static func record(_ name: @autoclosure () -> String, took duration: Duration, kind: SpanKind = .internal,
                               context: InstrumentationContext? = nil, attributes: SpanAttributes = [:]) {
        guard isEnabled, let context = context ?? InstrumentationContext.current else { return }
        let end = DefaultTracerClock.now
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds < 0 ? 0 : UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        let start = DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: end.nanosecondsSinceEpoch - min(nanoseconds, end.nanosecondsSinceEpoch))
        let span = InstrumentationSystem.tracer.startSpan(name(), context: context, ofKind: kind, at: start)
        if !attributes.isEmpty { span.attributes = attributes }
        span.end(at: end)
    }

    /// Sets `attribute` on the current span (the request's), when tracing is on.
    package static func annotate(_ attribute: String, _ value: @autoclosure () -> String) {
        guard isEnabled, let context = InstrumentationContext.current,
              let span = InstrumentationSystem.tracer.activeSpan(identifiedBy: context) else { return }
        span.attributes[attribute] = value()
    }
}
