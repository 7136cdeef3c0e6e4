import EaselSupport
import Crypto
import EaselCodecs
import EaselPipeline
import EaselRemote
import EaselStorage
import EaselTables
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus
import Synchronization

/// The image server behind `easel serve`: Hummingbird routes over an `ImagePipeline`.
///
/// Routes:
/// - `GET /` — a gallery of the file origin's images (thumbnails linking to a larger format)
///   with cache statistics;
/// - `GET|HEAD /images/{format}/{source path}` — a named format; `/images/w=…,h=…,fit=…,q=…,f=…/…`
///   — an ad-hoc size (signed, unless `allowUnsignedAdHoc`); signatures go in `?s=`;
/// - `DELETE /images/{source path}` — purge every variant (`Authorization: Bearer <adminToken>`);
/// - `GET /health`, `GET /metrics` (Prometheus).
public final class ImageServer: Sendable {
    /// The configuration the server was made with.
    public let configuration: ServerConfiguration
    let pipeline: ImagePipeline
    /// Whether the server made its pipeline (and closes it on `shutdown()`); false for a
    /// caller's own.
    let ownsPipeline: Bool
    let origin: Origin
    let signer: URLSigner
    let registry: PrometheusCollectorRegistry
    let admission: Admission
    let metrics: ServerMetrics
    /// Open connections, capped (see `ConnectionGuard`).
    let connections: ConnectionRegistry
    let galleryListing: GalleryListing
    /// The file origin's root path without a trailing slash ("" for an http origin).
    let rootPath: String
    /// "file://" and the root path, escaped as `sourceKey` escapes (made once).
    let fileKeyPrefix: String
    let formatsByName: [String: ServerConfiguration.Format]
    /// One signer per imgproxy key/salt pair.
    let imgproxySigners: [URLSigner]
    /// How imgproxy URLs are read: presets, separator and `ImgproxySettings`.
    let imgproxySettings: ImgproxyURL.Settings
    /// The types of the sources `skip_processing` has looked at.
    let knownTypes = KnownSourceTypes()
    /// Where answers name their cache tags (nil: nowhere).
    let cacheTagField: HTTPField.Name?
    /// The fallback image (`DeliverySettings.fallbackImage`): a file or an http(s) URL.
    let fallbackURL: URL?
    /// Which remote sources may be read (`allowHosts`, the http origin); the fetchers check
    /// every URL with it, and a URL's own fallback is checked with it up front.
    let sourcePolicy: SourcePolicy
    /// The configured watermark image (`watermark`): read through the pipeline like a source.
    let configuredMark: URL?
    /// Text marks drawn so far (`textMark(_:)`).
    let textMarks = TextMarks()
    let cacheControl: String
    /// The ready-answer index: repeat requests answered in the channel pipeline from the memory
    /// tier (`ReadyAnswerHandler`).
    let readyAnswers: ReadyAnswers
    let logger = Logger(label: "easel.server")

    /// The S3 client of an S3 origin and the shared tier (nil when neither is configured).
    let s3: S3Client?
    /// The shared result tier, when configured.
    let sharedStore: S3Store?
    /// Relays purges to peers and bans purged sources in a CDN (nil when neither is configured).
    let purgeRelay: PurgeRelay?

    /// Where sources come from.
    enum Origin: Sendable {
        case directory(URL)
        case http(URL)
        case s3(S3Location)
    }

    /// Opens the caches and the origin that `configuration` names.
    /// - Parameters:
    ///   - configuration: what to serve and how.
    ///   - registry: where `/metrics` reads the server's and the pipeline's metrics.
    ///   - environment: where S3 credentials and endpoint are read (`AWS_*`,
    ///     `EASEL_S3_ENDPOINT`), when the origin or the shared cache is in S3.
    public convenience init(configuration: ServerConfiguration, registry: PrometheusCollectorRegistry = PrometheusMetricsFactory.defaultRegistry,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        try self.init(configuration: configuration, pipeline: nil, registry: registry, environment: environment)
    }

    /// A server over a pipeline of the caller's own: its fetchers, tiers, formats and limits
    /// answer every route, and the caller closes it (`shutdown()` does not). The configuration
    /// still says how URLs are read, signed and answered (styles, keys, limits on what a URL may
    /// ask, headers); its origin only names where source paths point (a directory becomes file
    /// URLs under it, which the pipeline's `FileFetcher` must serve), and its cache, S3 and
    /// download settings are the pipeline's business. Remote sources are checked against
    /// `allowHosts` before they reach the pipeline; addresses are checked only by a pipeline
    /// whose `HTTPFetcher` has a `urlPolicy` that does.
    ///
    /// ```swift
    /// let pipeline = try ImagePipeline(configuration: .init(fetchers: [FileFetcher(root: photos)]))
    /// let images = try ImageServer(configuration: configuration, pipeline: pipeline)
    /// router.addRoutes(images.imgproxyRoutes(), atPath: "/img")
    /// ```
    public convenience init(configuration: ServerConfiguration, pipeline: ImagePipeline,
                            registry: PrometheusCollectorRegistry = PrometheusMetricsFactory.defaultRegistry) throws {
        try self.init(configuration: configuration, pipeline: .some(pipeline), registry: registry, environment: [:])
    }

    private init(configuration: ServerConfiguration, pipeline own: ImagePipeline?, registry: PrometheusCollectorRegistry,
                 environment: [String: String]) throws {
        try configuration.validate()
        let presets = try Self.checkedPresets(configuration)
        let files = try Self.configuredFiles(configuration)
        configuredMark = files.mark
        fallbackURL = files.fallback
        self.configuration = configuration
        self.registry = registry
        origin = try Self.origin(configuration)
        var originURL: URL?
        if case .http(let url) = origin { originURL = url }
        let policy = SourcePolicy(allowHosts: configuration.allowHosts, origin: originURL)
        sourcePolicy = policy
        // S3 settings first: nothing that needs shutting down exists yet if they are wrong.
        let s3Settings = own == nil ? try Self.s3Settings(configuration, origin: origin, environment: environment) : (nil, nil)
        let metrics = ServerMetrics(registry: registry)
        self.metrics = metrics
        purgeRelay = configuration.peers.isEmpty && configuration.cdnBanURLs.isEmpty && configuration.delivery.purgeByTag.isEmpty ? nil
            : PurgeRelay(peers: configuration.peers, banURLs: configuration.cdnBanURLs, tagEndpoints: configuration.delivery.purgeByTag,
                         token: configuration.adminToken ?? "")
        if let own {
            (pipeline, ownsPipeline, s3, sharedStore) = (own, false, nil, nil)
        } else {
            ownsPipeline = true
            (pipeline, s3, sharedStore) = try Self.ownPipeline(configuration, origin: origin, files: files, policy: policy,
                                                               s3Settings: s3Settings, metrics: metrics, relay: purgeRelay)
        }
        imgproxySigners = zip(configuration.imgproxyKeys, configuration.imgproxySalts).compactMap { key, salt in
            guard let key = Data(hex: key), let salt = Data(hex: salt) else { return nil }
            return URLSigner(keys: [key], salt: salt)
        }
        cacheTagField = configuration.delivery.cacheTagHeader.isEmpty ? nil : HTTPField.Name(configuration.delivery.cacheTagHeader)
        imgproxySettings = Self.imgproxySettings(configuration, presets: presets)
        signer = URLSigner(keys: configuration.signingKeys.compactMap { Data(hex: $0) }, salt: Data(hex: configuration.signingSalt) ?? Data())
        admission = Admission(limit: configuration.processingConcurrency + configuration.maxQueue) { metrics.queue.record($0) }
        var byName: [String: ServerConfiguration.Format] = [:]
        for format in configuration.formats { byName[format.name] = format }
        formatsByName = byName
        cacheControl = "public, max-age=\(configuration.maxAge)"
        readyAnswers = ReadyAnswers(limit: configuration.readyAnswerLimit) { [pipeline] memoryKey, etag in
            pipeline.replayableBytes(memoryKey: memoryKey, etag: etag)
        }
        // As servers do at start: the soft descriptor limit up to the hard one, then the
        // connection cap below it.
        Platform.raiseOpenFileLimit()
        connections = ConnectionRegistry(limit: ConnectionRegistry.limit(configured: configuration.maxConnections))
        if case .directory(let root) = origin { galleryListing = GalleryListing(root: root) } else { galleryListing = GalleryListing(root: nil) }
        if case .directory(let root) = origin {
            rootPath = root.path.hasSuffix("/") && root.path.count > 1 ? String(root.path.dropLast()) : root.path
        } else {
            rootPath = ""
        }
        fileKeyPrefix = "file://" + Self.escapingNonASCII(rootPath) + "/"
    }

    /// `Samples/` of the working directory, else of the source tree this binary was built from.
    static var bundledSamples: URL {
        let local = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Samples")
        if FileManager.default.fileExists(atPath: local.path) { return local }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Samples")
    }

    /// Writes the tables to disk, then closes the pipeline (its connections, and its tables'
    /// file locks: a new server on the same cache directory can start at once).
    public func shutdown() async {
        let tables = configuration.formats.compactMap { pipeline.table(forFormat: $0.name) }
        _ = try? await BlockingIOPool.shared.run { for table in tables { try? table.flush() } } // msync and fsync: not on the cooperative pool
        if ownsPipeline { await pipeline.close() }
        await sharedStore?.drainBackgroundWork()
        try? await s3?.shutdown()
        await purgeRelay?.shutdown()
    }

    // MARK: Router

    /// Routes grouped by concern; cross-cutting work is middleware: metrics (route, status,
    /// duration), every error turned into its status (`PipelineError` through its
    /// `HTTPResponseError` conformance), `nosniff` on every answer.
    public func router() -> Router<EaselRequestContext> {
        let router = Router(context: EaselRequestContext.self)
        if !configuration.delivery.corsAllowOrigins.isEmpty {
            router.add(middleware: CORSMiddleware(origins: configuration.delivery.corsAllowOrigins, maxAge: configuration.delivery.corsMaxAge))
        }
        router.add(middleware: MetricsMiddleware(metrics: metrics, logger: logger, accessLog: configuration.accessLog))
        router.get("/") { request, _ in try await self.gallery(request) }
        router.get("/health") { _, _ in Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "ok\n"))) }
        router.get("/metrics") { _, _ in try await self.metricsPage() }
        // Each URL style is a route collection at its own path; each parses into the one
        // `ImagePlan` (or a named format) and ends in the same `answer`.
        router.addRoutes(nativeRoutes(), atPath: "/images")
        router.addRoutes(imgproxyRoutes(), atPath: "/imgproxy")
        router.addRoutes(thumborRoutes(), atPath: "/thumbor")
        router.addRoutes(infoRoutes(), atPath: "/info")
        return router
    }

    /// Native URLs: a named format or an ad-hoc spec, then the source (`GET`, `HEAD`); a purge
    /// of the source (`DELETE`). `router()` mounts them at `/images`; mount them at a path of
    /// your own on a router of your own (its context ``EaselRequestContext``) with
    /// `addRoutes(_:atPath:)`. Each URL style's routes parse and verify their URL, make the
    /// plan and hand it to this server's pipeline; middleware (metrics, CORS) is the router's.
    public func nativeRoutes() -> RouteCollection<EaselRequestContext> {
        let routes = RouteCollection(context: EaselRequestContext.self)
        routes.get("**") { request, context in try await self.image(request, context, head: false) }
        routes.head("**") { request, context in try await self.image(request, context, head: true) }
        routes.delete("**") { request, context in try await self.purge(request, context) }
        return routes
    }

    /// imgproxy-compatible URLs (its `/info/` too), signed as the configuration says; `router()`
    /// mounts them at `/imgproxy` (see `nativeRoutes()` for mounting them elsewhere).
    public func imgproxyRoutes() -> RouteCollection<EaselRequestContext> {
        let routes = RouteCollection(context: EaselRequestContext.self)
        routes.get("**") { request, context in try await self.imgproxy(request, context, head: false) }
        routes.head("**") { request, context in try await self.imgproxy(request, context, head: true) }
        return routes
    }

    /// thumbor-compatible URLs; `router()` mounts them at `/thumbor` (see `nativeRoutes()`).
    public func thumborRoutes() -> RouteCollection<EaselRequestContext> {
        let routes = RouteCollection(context: EaselRequestContext.self)
        routes.get("**") { request, context in try await self.thumbor(request, context, head: false) }
        routes.head("**") { request, context in try await self.thumbor(request, context, head: true) }
        return routes
    }

    /// The info endpoint: a source's size, type and placeholders as JSON; `router()` mounts it at
    /// `/info` (see `nativeRoutes()`).
    public func infoRoutes() -> RouteCollection<EaselRequestContext> {
        let routes = RouteCollection(context: EaselRequestContext.self)
        routes.get("**") { request, context in try await self.info(request, context) }
        return routes
    }

    static func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    // MARK: Images

    /// What an image path asks for.
    struct ImagePath {
        enum Processing {
            case named(ServerConfiguration.Format)
            case adHoc(ImagePlan)
        }
        var processing: Processing
        var source: Source
        var spec: String
    }

    private func image(_ request: Request, _ context: EaselRequestContext, head: Bool) async throws -> Response {
        let canonical = Self.canonicalPath(request, context, under: "/images")
        let (spec, source) = try Self.split(canonical, prefix: "/images/")
        guard let spec else { throw RequestError.noSuchImage }
        let path = try parse(spec: spec, source: source)
        let signed = try checkNativeSignature(request, path: canonical)
        let lifetime = Self.remainingLifetime(request)
        switch path.processing {
        case .named(let format):
            if configuration.signNamedFormats, !signed { throw RequestError.badSignature }
            var output = OutputPolicy(format: format.output.flatMap(ImageEncoding.Format.init(name:)), quality: format.quality)
            output.bestFormat = format.output == "best"
            output.autoQuality = format.qualityTarget.map { configuration.autoQuality.settings(target: $0) }
            var spec = AnswerSpec(source: path.source, processing: .format(format.name), output: output)
            spec.lifetime = lifetime
            return try await answer(request, context, head: head, spec)
        case .adHoc(var options):
            if !signed, !configuration.allowUnsignedAdHoc { throw RequestError.badSignature }
            let vary = applyHints(&options, request)
            return try await answer(request, context, head: head, source: path.source, options: options,
                                    rules: StyleRules(vary: vary, lifetime: lifetime))
        }
    }

    // MARK: Purge

    private func purge(_ request: Request, _ context: EaselRequestContext) async throws -> Response {
        guard let token = configuration.adminToken,
              let given = request.headers[.authorization], given.lowercased().hasPrefix("bearer "),
              URLSigner.secretsEqual(String(given.dropFirst(7)), token) else {
            throw RequestError.refused("purging needs the admin token")
        }
        // The image's own URL works too: a leading format (or ad-hoc spec) is not part of the
        // source, which is then read as a GET reads it (a path or an absolute URL).
        let path = Self.canonicalPath(request, context, under: "/images")
        // (Bytes, as `split` reads the path.)
        let rest = path[path.utf8.index(path.startIndex, offsetBy: min("/images/".utf8.count, path.utf8.count))...]
        let first = rest[..<(rest.utf8.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex)]
        let decodedFirst = first.utf8.contains(UInt8(ascii: "%")) ? String(first).removingPercentEncoding ?? "" : String(first)
        let withSpec = first.endIndex < rest.endIndex && (formatsByName[decodedFirst] != nil || decodedFirst.utf8.contains(UInt8(ascii: "=")))
        let (_, source) = try Self.split(path, prefix: "/images/", withSpec: withSpec)
        let url = try resolve(source)
        let key = sourceKey(source)
        // A relayed purge purges this instance's own tiers only: the first instance has already
        // purged the shared tier, and carries the purge to the peers and the CDN.
        let relayed = request.headers[Self.relayField] != nil
        // A failing local disk is this instance's failure (500). A shared tier that failed or
        // did not answer in time is named in a 202 (the local tiers are purged; the peers and
        // the CDN are told either way): never a 5xx a balancer would retry elsewhere.
        // Ready answers replay the memory tier's bytes, which the pipeline's purge removes — for
        // the source and for everything made with it (`ImageRequest.madeWith`: a watermark,
        // whose prepared image the pipeline forgets too; what was being made with the purged
        // mark is not kept).
        let sourceIdentity = purgeIdentity(url: url, key: key)
        let report = try await pipeline.purge(ImageRequest(url: url, cacheKey: key), scope: relayed ? .local : .everywhere,
                                              sharedStoreTimeLimit: Self.sharedPurgeTimeLimit)
        var unreached = report.unreachedSharedStores.map { "shared tier (\($0))" }
        if let purgeRelay, !relayed {
            // (The path as it came: the peers mount the routes where this instance does.)
            var target = request.uri.path
            if let query = request.uri.query { target += "?" + query }
            unreached += await purgeRelay.relay(path: target, surrogateKey: PurgeRelay.surrogateKey(forSource: sourceIdentity))
        }
        guard unreached.isEmpty else {
            // 202, not a 5xx: the purge is done here but not yet everywhere, and a balancer in
            // front must not take this instance for a failed one and retry the purge elsewhere.
            var answer = Self.text(.accepted, "purged here; not reached (retry the purge): " + unreached.joined(separator: " "))
            answer.headers[Self.unreachedField] = unreached.joined(separator: ", ")
            return answer
        }
        guard let purgeRelay, !relayed else { return Self.text(.ok, "purged") }
        return Self.text(.ok, "purged here and at \(purgeRelay.peers.count) peers and \(purgeRelay.banURLs.count + purgeRelay.tagEndpoints.count) CDN URLs")
    }

    /// How long a purge waits for the shared tier before answering 202 without it.
    static let sharedPurgeTimeLimit: Duration = .seconds(5)

    static let relayField = HTTPField.Name(PurgeRelay.relayHeader)!
    /// `Content-Security-Policy` of SVG answers: no script, no load but inline styles and `data:`
    /// images (what the cleaned document may still hold).
    static let svgPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
    static let unreachedField = HTTPField.Name("Easel-Purge-Unreached")!
}
