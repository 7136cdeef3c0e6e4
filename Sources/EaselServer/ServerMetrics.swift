import EaselSupport
import EaselPipeline
import EaselStorage
import Foundation
import Prometheus
import Synchronization

/// The server's own Prometheus metrics.
final class ServerMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    let queue: Prometheus.Gauge
    private let memoryBytes: Prometheus.Gauge
    private let diskBytes: Prometheus.Gauge
    private let openConnections: Prometheus.Gauge
    private let evictedConnections: Prometheus.Gauge

    static var inProgress: MetricNameDescriptor { MetricNameDescriptor(namespace: "easel", metricName: "requests_in", unitName: "progress",
                                                 helpText: "image requests being made or waiting") }
    static var cacheBytes: MetricNameDescriptor { MetricNameDescriptor(namespace: "easel", metricName: "cache", unitName: "bytes", helpText: "bytes in the caches") }
    static var requests: MetricNameDescriptor { MetricNameDescriptor(namespace: "easel", metricName: "http_requests", unitName: "total",
                                               helpText: "HTTP requests by route and status") }
    static var durations: MetricNameDescriptor { MetricNameDescriptor(namespace: "easel", metricName: "http_request_duration", unitName: "seconds",
                                                helpText: "HTTP request durations") }
    static var answers: MetricNameDescriptor { MetricNameDescriptor(namespace: "easel", metricName: "answers", unitName: "total",
                                              helpText: "image answers by the tier that had them") }

    static var connections: MetricNameDescriptor { MetricNameDescriptor(namespace: "easel", metricName: "connections", unitName: "open",
                                                  helpText: "open client connections") }
    static var evicted: MetricNameDescriptor { MetricNameDescriptor(namespace: "easel", metricName: "connections_evicted", unitName: "total",
                                              helpText: "idle connections closed to stay under maxConnections") }

    static let routes = ["gallery", "images", "purge"]
    static let commonStatuses = [200, 304, 400, 403, 404, 422, 429, 499, 500, 502, 503, 504]
    static let tiers = ImageTier.allCases.map(\.rawValue)

    private struct RouteStatus: Hashable {
        let route: String
        let status: Int
    }

    /// A count readable without a lock.
    private final class Tally: Sendable {
        let value = Atomic<Int>(0)
    }

    // Instruments made once, in dictionaries that never change after `init`: the hot path
    // (a cached image) reads them without taking a lock. Rare labels go to `otherCounters`.
    private let routeCounters: [RouteStatus: Prometheus.Counter]
    private let otherCounters = Locked<[RouteStatus: Prometheus.Counter]>([:])
    private let histograms: [String: DurationHistogram]
    private let answerCounters: [String: (counter: Prometheus.Counter, tally: Tally)]

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        queue = registry.makeGauge(descriptor: Self.inProgress, labels: [])
        memoryBytes = registry.makeGauge(descriptor: Self.cacheBytes, labels: [("store", "memory")])
        diskBytes = registry.makeGauge(descriptor: Self.cacheBytes, labels: [("store", "disk")])
        openConnections = registry.makeGauge(descriptor: Self.connections, labels: [])
        evictedConnections = registry.makeGauge(descriptor: Self.evicted, labels: [])
        var routeCounters: [RouteStatus: Prometheus.Counter] = [:]
        var histograms: [String: DurationHistogram] = [:]
        for route in Self.routes {
            for status in Self.commonStatuses {
                routeCounters[RouteStatus(route: route, status: status)] =
                    registry.makeCounter(descriptor: Self.requests, labels: [("route", route), ("status", String(status))])
            }
            histograms[route] = registry.makeDurationHistogram(
                descriptor: Self.durations, labels: [("route", route)],
                buckets: [.milliseconds(1), .milliseconds(5), .milliseconds(20), .milliseconds(100), .milliseconds(500), .seconds(2), .seconds(10)])
        }
        self.routeCounters = routeCounters
        self.histograms = histograms
        var answerCounters: [String: (counter: Prometheus.Counter, tally: Tally)] = [:]
        for tier in Self.tiers {
            answerCounters[tier] = (registry.makeCounter(descriptor: Self.answers, labels: [("tier", tier)]), Tally())
        }
        self.answerCounters = answerCounters
    }

    func record(route: String, status: Int, since start: ContinuousClock.Instant) {
        let name = RouteStatus(route: route, status: status)
        if let counter = routeCounters[name] {
            counter.increment()
        } else {
            let counter = otherCounters.withLock { counters in
                if let counter = counters[name] { return counter }
                let counter = registry.makeCounter(descriptor: Self.requests, labels: [("route", route), ("status", String(status))])
                counters[name] = counter
                return counter
            }
            counter.increment()
        }
        histograms[route]?.record(ContinuousClock.now - start)
    }

    func hit(_ tier: String) {
        guard let answer = answerCounters[tier] else { return }
        answer.tally.value.add(1, ordering: .relaxed)
        answer.counter.increment()
    }

    func hitCounts() -> [String: Int] { answerCounters.mapValues { $0.tally.value.load(ordering: .relaxed) } }

    func cacheBytes(memory: Int, disk: Int) {
        memoryBytes.set(Double(memory))
        diskBytes.set(Double(disk))
    }

    func connections(open: Int, evicted: Int) {
        openConnections.set(Double(open))
        evictedConnections.set(Double(evicted))
    }
}
