import ArgumentParser
import CMalloc
import EaselCodecs
import EaselServer
import EaselPipeline
import EaselSupport
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
        then the environment (EASEL_HOST, EASEL_PORT, EASEL_ORIGIN and the rest), then these flags: \
        `easel settings` lists every one with its default (docs/configuration.md). SIGTERM or SIGINT finishes \
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
    @Option(name: .customLong("memory-budget"), help: "Bytes the images being made may take together (300M, 2G; 0: none; default: a quarter of the machine's memory, EASEL_MEMORY_BUDGET).")
    var memoryBudget: String?
    @Flag(name: .customLong("jpeg-xl"), help: "Negotiate JPEG XL for clients that name image/jxl in Accept (off by default).") var jpegXL = false
    @Option(name: .customLong("log-format"), help: "text (default) or json: one object a line with time, level, label, message, request_id and the rest (EASEL_LOG_FORMAT).")
    var logFormat: String?
    @Flag(name: .customLong("access-log"), inversion: .prefixedNo,
          help: "One info line per answer: method, path, route, status, bytes, duration, tier, request ID, trace ID (on by default; EASEL_ACCESS_LOG=0 turns it off).")
    var accessLog: Bool?
    @Option(help: ArgumentHelp("none (default) or otlp: a span per request, with the pipeline's stages (queue, fetch, decode, process, encode) as its children, sent over OTLP/HTTP (EASEL_TRACES; OTEL_TRACES_EXPORTER=otlp also turns them on).",
                               discussion: "The receiver is OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318) or --otlp-endpoint; the other OTEL_* variables (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS, ...) apply as the OpenTelemetry specification says."))
    var traces: String?
    @Option(name: .customLong("otlp-endpoint"), help: "Where traces go: the OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces; turns traces on unless --traces none (EASEL_OTLP_ENDPOINT).")
    var otlpEndpoint: String?

    func run() async throws {
        easel_tune_malloc_for_server()
        let format = (logFormat ?? ProcessInfo.processInfo.environment["EASEL_LOG_FORMAT"] ?? "text").lowercased()
        guard format == "text" || format == "json" else { throw ValidationError("--log-format is text or json, not \(format)") }
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
        if jpegXL { configuration.jpegXL = true }
        if let accessLog { configuration.accessLog = accessLog }
        if let memoryBudget {
            guard let bytes = ServerConfiguration.byteCount(memoryBudget) else { throw ValidationError("--memory-budget is a byte count (300M, 2G), not \(memoryBudget)") }
            configuration.memoryBudget = bytes
        }
        bootstrapLogging(json: format == "json", secrets: configuration.secrets)
        defer { StandardErrorRelay.finish() }
        CommandRenderIsolation.start(configuration.renderWorkers, requestTimeout: configuration.requestTimeout)

        let tracing = try bootstrapTracing(environment: ProcessInfo.processInfo.environment)
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let server: ImageServer
        do { server = try ImageServer(configuration: configuration, registry: registry) } catch {
            throw ValidationError("\(error)")
        }
        try await server.run(services: tracing.map { [$0] } ?? [], onListening: format == "json" ? Self.announceAsJSON : ImageServer.announce)
    }

    /// Every log line through `RedactingLogHandler` (no secret in any line, whoever writes it),
    /// carrying the request ID of the request it was written for; GLib's messages as log lines;
    /// and, for JSON, the process's raw standard error through `StandardErrorRelay`, so that a C
    /// library's own lines are JSON too.
    func bootstrapLogging(json: Bool, secrets: [String]) {
        if json { StandardErrorRelay.start() }
        LoggingSystem.bootstrap({ label, provider in
            let handler: any LogHandler = json ? JSONLogHandler(label: label, metadataProvider: provider)
                : StreamLogHandler.standardError(label: label, metadataProvider: provider)
            return RedactingLogHandler(handler, secrets: secrets)
        }, metadataProvider: RequestID.metadataProvider)
        NativeLogs.route(to: Logger(label: "native"))
    }

    /// The address as one JSON log line on standard output (where the plain banner goes).
    static let announceAsJSON: @Sendable (String) -> Void = { address in
        let handler = JSONLogHandler(label: "easel.serve") { line in FileHandle.standardOutput.write(Data(line.utf8)) }
        handler.log(event: LogEvent(level: .notice, message: "easel serve: listening on http://\(address)/",
                                    metadata: ["address": .string("http://\(address)/")], source: "easel", file: #fileID, function: #function,
                                    line: #line))
    }

    /// Bootstraps swift-otel's tracer when traces are asked for; returns its exporting service,
    /// which runs beside the server and sends what is left when the server has stopped. Runs
    /// before the server is made: its HTTP clients take the tracer when they are created.
    ///
    /// Asked for by, first to last: `--traces`, `--otlp-endpoint`, `EASEL_TRACES`, then
    /// `EASEL_OTLP_ENDPOINT` or `otlp` among `OTEL_TRACES_EXPORTER`'s exporters;
    /// `OTEL_SDK_DISABLED=true` turns them off whatever asked.
    func bootstrapTracing(environment: [String: String]) throws -> (any Service)? {
        func value(_ name: String) -> String? { environment[name].map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        let exporters = value("OTEL_TRACES_EXPORTER")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        let choice = traces?.lowercased() ?? (otlpEndpoint != nil ? "otlp" : nil) ?? value("EASEL_TRACES")
            ?? (environment["EASEL_OTLP_ENDPOINT"] != nil || exporters.contains("otlp") ? "otlp" : "none")
        guard choice == "otlp" else {
            guard choice == "none" else { throw ValidationError("--traces is none or otlp, not \(choice)") }
            return nil
        }
        if value("OTEL_SDK_DISABLED") == "true" {
            Logger(label: "easel.serve").notice("OTEL_SDK_DISABLED=true: no traces")
            return nil
        }
        let transport = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? value("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf"
        guard transport == "http/protobuf" || transport == "http/json" else {
            throw ValidationError("traces go over OTLP/HTTP: the OTLP protocol is http/protobuf or http/json, not \(transport)")
        }
        // Ours over OpenTelemetry's variables: swift-otel reads the process's environment last,
        // so the endpoint goes there, in the per-signal variable, which it takes as it is.
        if let endpoint = otlpEndpoint ?? environment["EASEL_OTLP_ENDPOINT"] {
            SystemCalls.setEnvironment("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint)
        }
        var otel = OTel.Configuration.default
        // "easel" unless the operator named the service (OTEL_SERVICE_NAME, or service.name in
        // OTEL_RESOURCE_ATTRIBUTES, which the configuration's own name would hide).
        if environment["OTEL_SERVICE_NAME"] == nil, !(environment["OTEL_RESOURCE_ATTRIBUTES"] ?? "").contains("service.name=") {
            otel.serviceName = "easel"
        }
        otel.logs.enabled = false
        otel.metrics.enabled = false
        otel.traces.enabled = true
        otel.traces.exporter = .otlp
        // swift-otel's own lines (its configuration, a carrier it cannot read) through the
        // server's handler, JSON when JSON is asked for, and redacted like every line.
        otel.diagnosticLogger = .custom(Logger(label: "swift-otel"))
        let (tracer, service) = try OTel.makeTracingBackend(configuration: otel)
        InstrumentationSystem.bootstrap(tracer)
        EaselTracing.enable()
        return service
    }
}
