import ArgumentParser
import EaselServer
import EaselPipeline
import Foundation
import Hummingbird
import Logging
import Metrics
import OTel
import Prometheus
import ServiceLifecycle
import Tracing

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve images over HTTP: named formats, signed ad-hoc sizes, a gallery, /health and /metrics.",
        discussion: """
        Defaults: the bundled Samples/ directory as origin, 127.0.0.1:8080, cache under $XDG_CACHE_HOME/easel/serve, \
        formats thumb (fit 256), small (fit 512) and square (fill 256). Settings come from --config FILE (JSON), \
        then the environment (EASEL_HOST, EASEL_PORT, EASEL_ORIGIN, EASEL_SHARED_CACHE, EASEL_PEERS, \
        EASEL_CDN_BAN_URLS, EASEL_CACHE_DIR, EASEL_ALLOW_HOSTS, EASEL_SIGNING_KEYS, EASEL_SIGNING_SALT, EASEL_ADMIN_TOKEN), \
        then these flags. SIGTERM or SIGINT finishes \
        the requests in flight, writes the caches and exits.
        """)

    @Option(help: "Address to listen on.") var host: String?
    @Option(help: "Port to listen on (0: any free port).") var port: Int?
    @Option(help: "Source images: a directory, an http(s) base URL or s3://BUCKET/PREFIX/ (credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION; endpoint from EASEL_S3_ENDPOINT).")
    var origin: String?
    @Option(name: .customLong("shared-cache"), help: "A result tier shared by several instances: s3://BUCKET/PREFIX/.")
    var sharedCache: String?
    @Option(name: .customLong("peer"), help: "Base URL of another instance a purge is relayed to (repeatable; needs the admin token).")
    var peer: [String] = []
    @Option(name: .customLong("cdn-ban-url"), help: "A Varnish (see docs/varnish.vcl) that purges also BAN (repeatable).")
    var cdnBanURL: [String] = []
    @Option(name: .customLong("cache-dir"), help: "Cache directory.") var cacheDir: String?
    @Option(help: "A JSON configuration file.") var config: String?
    @Option(name: .customLong("allow-host"), help: "A host remote sources may come from (repeatable).") var allowHost: [String] = []
    @Flag(name: .customLong("allow-unsigned-ad-hoc"), help: "Serve ad-hoc sizes without signatures (development only).") var allowUnsignedAdHoc = false
    @Option(name: .customLong("log-format"), help: "text (default) or json: one object a line with time, level, label, message, request_id and the rest (EASEL_LOG_FORMAT).")
    var logFormat: String?
    @Flag(name: .customLong("access-log"), help: "One log line per answer: method, path, route, status, duration, request ID (EASEL_ACCESS_LOG=1).")
    var accessLog = false
    @Option(help: ArgumentHelp("none (default) or otlp: a span per request, with the pipeline's stages (queue, fetch, decode, process, encode) as its children, sent over OTLP/HTTP (EASEL_TRACES; OTEL_TRACES_EXPORTER=otlp also turns them on).",
                               discussion: "The receiver is OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) or --otlp-endpoint; the other OTEL_* variables (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS, ...) apply as the OpenTelemetry specification says."))
    var traces: String?
    @Option(name: .customLong("otlp-endpoint"), help: "Where traces go: the OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces; turns traces on unless --traces none (EASEL_OTLP_ENDPOINT).")
    var otlpEndpoint: String?

    func run() async throws {
        let format = (logFormat ?? ProcessInfo.processInfo.environment["EASEL_LOG_FORMAT"] ?? "text").lowercased()
        guard format == "text" || format == "json" else { throw ValidationError("--log-format is text or json, not \(format)") }
        // Every log line written while a request is handled carries its X-Request-ID.
        LoggingSystem.bootstrap({ label, provider in
            format == "json" ? JSONLogHandler(label: label, metadataProvider: provider) as any LogHandler
                : StreamLogHandler.standardError(label: label, metadataProvider: provider)
        }, metadataProvider: RequestID.metadataProvider)
        var configuration: ServerConfiguration
        do {
            configuration = try config.map { try ServerConfiguration.load(file: $0) } ?? ServerConfiguration()
            try configuration.apply(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError("\(error)")
        }
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if let origin { configuration.origin = origin }
        if let sharedCache { configuration.sharedCache = sharedCache }
        configuration.peers += peer
        configuration.cdnBanURLs += cdnBanURL
        if let cacheDir { configuration.cacheDirectory = cacheDir }
        configuration.allowHosts += allowHost
        if allowUnsignedAdHoc { configuration.allowUnsignedAdHoc = true }
        if accessLog { configuration.accessLog = true }

        let tracing = try bootstrapTracing(environment: ProcessInfo.processInfo.environment)
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let server: ImageServer
        do { server = try ImageServer(configuration: configuration, registry: registry) } catch {
            throw ValidationError("\(error)")
        }
        try await server.run(services: tracing.map { [$0] } ?? [])
    }

    /// Bootstraps swift-otel's tracer when traces are asked for; returns its exporting service,
    /// which runs beside the server and sends what is left when the server has stopped.
    func bootstrapTracing(environment: [String: String]) throws -> (any Service)? {
        let endpoint = otlpEndpoint ?? environment["EASEL_OTLP_ENDPOINT"]
        // An endpoint named for Easel, or OpenTelemetry's own switch, asks for traces too.
        let asked = endpoint != nil || environment["OTEL_TRACES_EXPORTER"] == "otlp"
        let choice = (traces ?? environment["EASEL_TRACES"] ?? (asked ? "otlp" : "none")).lowercased()
        guard choice == "otlp" else {
            guard choice == "none" else { throw ValidationError("--traces is none or otlp, not \(choice)") }
            return nil
        }
        var otel = OTel.Configuration.default
        otel.serviceName = "easel"
        otel.logs.enabled = false
        otel.metrics.enabled = false
        otel.traces.enabled = true
        otel.traces.exporter = .otlp
        if let endpoint { otel.traces.otlpExporter.endpoint = endpoint }
        let (tracer, service) = try OTel.makeTracingBackend(configuration: otel)
        InstrumentationSystem.bootstrap(tracer)
        EaselTracing.enable()
        return service
    }
}
