import EaselSupport

/// The switch for Easel's spans in your process.
///
/// Easel records spans through swift-distributed-tracing: a server span per answer of an
/// `ImageServer`, and under it (or under whatever span is current when you call the pipeline)
/// the pipeline's work: `easel.queue`, `easel.cache.read`, `easel.fetch`, `easel.decode`,
/// `easel.process`, `easel.encode`, `easel.cache.write`. They go to the tracer your process
/// bootstrapped with `InstrumentationSystem.bootstrap` (swift-otel's, say), once you call
/// ``enable()``; until then every check costs one atomic load and nothing else. A request whose
/// span the tracer does not record (its sampler dropped the trace) gets no child spans.
public enum EaselTracing {
    /// Turns Easel's spans on; call once, after bootstrapping the tracer. Bootstrap the tracer
    /// before creating an `ImagePipeline` or a server: their HTTP clients take it when they are
    /// made (without it they send no `traceparent` to the origin).
    public static func enable() { Traces.enable() }

    /// Whether ``enable()`` was called.
    public static var isEnabled: Bool { Traces.isEnabled }
}
