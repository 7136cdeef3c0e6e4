import EaselPipeline
import EaselSupport
import Foundation
import Metrics
import Prometheus

/// The server's metrics, through swift-metrics with the server's own Prometheus factory (the
/// registry `/metrics` exports; the pipeline's metrics go to the same factory). One family per
/// event: answers by tier are the pipeline's `easel_pipeline_requests_total`; this counts HTTP.
final class ServerMetrics: Sendable {
    let factory: PrometheusMetricsFactory
    /// Image requests being made or waiting (the admission's count).
    let queue: Metrics.Gauge
    private let memoryBytes: Metrics.Gauge
    private let diskBytes: Metrics.Gauge
    private let openConnections: Metrics.Gauge
    private let evictedConnections: Metrics.Gauge
    private let memoryBudget: Metrics.Gauge
    private let reservedBytes: Metrics.Gauge
    private let peakReservedBytes: Metrics.Gauge

    static let requestsLabel = "easel_http_requests_total"
    static let durationsLabel = "easel_http_request_duration_seconds"
    /// Every route, by its endpoint: the native image path, purge, the imgproxy, thumbor and
    /// info styles, the gallery, health and metrics.
    static let routes = ["gallery", "images", "purge", "imgproxy", "thumbor", "info", "health", "metrics"]
    static let commonStatuses = [200, 304, 400, 403, 404, 422, 429, 499, 500, 502, 503, 504]
    static let durationBuckets: [Duration] = [.milliseconds(1), .milliseconds(5), .milliseconds(20), .milliseconds(100),
                                              .milliseconds(500), .seconds(2), .seconds(10)]

    private struct RouteStatus: Hashable {
        let route: String
        let status: Int
    }

    // Instruments made once, in dictionaries that never change after `init`: the hot path
    // (a cached image) reads them without taking a lock. Rare labels go to `otherCounters`.
    private let routeCounters: [RouteStatus: Metrics.Counter]
    private let otherCounters = Locked<[RouteStatus: Metrics.Counter]>([:])
    private let durations: [String: Metrics.Timer]

    init(registry: PrometheusCollectorRegistry) {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Self.durationsLabel] = Self.durationBuckets
        self.factory = factory
        queue = Metrics.Gauge(label: "easel_requests_in_progress", factory: factory)
        memoryBytes = Metrics.Gauge(label: "easel_cache_bytes", dimensions: [("store", "memory")], factory: factory)
        diskBytes = Metrics.Gauge(label: "easel_cache_bytes", dimensions: [("store", "disk")], factory: factory)
        openConnections = Metrics.Gauge(label: "easel_connections_open", factory: factory)
        evictedConnections = Metrics.Gauge(label: "easel_connections_evicted_total", factory: factory)
        memoryBudget = Metrics.Gauge(label: "easel_memory_budget_bytes", factory: factory)
        reservedBytes = Metrics.Gauge(label: "easel_memory_reserved_bytes", factory: factory)
        peakReservedBytes = Metrics.Gauge(label: "easel_memory_reserved_peak_bytes", factory: factory)
        var routeCounters: [RouteStatus: Metrics.Counter] = [:]
        var durations: [String: Metrics.Timer] = [:]
        for route in Self.routes {
            for status in Self.commonStatuses {
                routeCounters[RouteStatus(route: route, status: status)] =
                    Metrics.Counter(label: Self.requestsLabel, dimensions: [("route", route), ("status", String(status))], factory: factory)
            }
            durations[route] = Metrics.Timer(label: Self.durationsLabel, dimensions: [("route", route)], factory: factory)
        }
        self.routeCounters = routeCounters
        self.durations = durations
    }

    func record(route: String, status: Int, since start: ContinuousClock.Instant) {
        let name = RouteStatus(route: route, status: status)
        if let counter = routeCounters[name] {
            counter.increment()
        } else {
            let counter = otherCounters.withLock { counters in
                if let counter = counters[name] { return counter }
                let counter = Metrics.Counter(label: Self.requestsLabel, dimensions: [("route", route), ("status", String(status))], factory: factory)
                counters[name] = counter
                return counter
            }
            counter.increment()
        }
        durations[route]?.record(duration: ContinuousClock.now - start)
    }

    /// The memory budget (0: none) and the estimated bytes of the work under way, now and at
    /// most.
    func budget(_ budget: Int?, reserved: Int, peak: Int) {
        memoryBudget.record(budget ?? 0)
        reservedBytes.record(reserved)
        peakReservedBytes.record(peak)
    }

    func cacheBytes(memory: Int, disk: Int) {
        memoryBytes.record(memory)
        diskBytes.record(disk)
    }

    func connections(open: Int, evicted: Int) {
        openConnections.record(open)
        evictedConnections.record(evicted)
    }
}
