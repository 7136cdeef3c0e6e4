import EaselCodecs
import EaselPipeline
import EaselSupport
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Tracing

/// Bad input is a 4xx with a short reason; only our own failures are 5xx. Upstream details are
/// logged by the pipeline, never sent. `switch` without `default`: a new case forces a decision.
extension PipelineError {
    /// `body`, with a library that could not be loaded (a codec's, the face plugin) thrown as
    /// the server's typed error (`.decoding(.libraryUnavailable)`: a logged 500 naming it) by
    /// routes that analyse pixels outside the pipeline (`/info`, thumbor's `meta`).
    static func typingLibraryFailures<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as CodecError {
            if case .libraryUnavailable = error { throw PipelineError.decoding(error) }
            throw error
        }
    }
}

extension PipelineError: HTTPResponseError {
    public var status: HTTPResponse.Status {
        switch self {
        case .fileNotFound, .noSource, .unknownFormat, .notCached, .httpStatus(404, _), .httpStatus(410, _): .notFound
        case .decoding(.rendererUnavailable): .serviceUnavailable
        case .decoding(.libraryUnavailable): .internalServerError
        case .httpStatus, .tooManyRedirects, .network: .badGateway
        case .decoding, .tooLarge, .processing: .unprocessableContent
        case .forbiddenURL, .unsupportedURL: .forbidden
        case .timedOut: .gatewayTimeout
        case .cancelled: .serviceUnavailable
        case .overloaded: .tooManyRequests
        case .overMemoryBudget: .unprocessableContent
        case .storage: .internalServerError
        }
    }

    /// What a client is told.
    var publicMessage: String {
        switch self {
        case .fileNotFound, .noSource, .unknownFormat, .notCached, .httpStatus(404, _), .httpStatus(410, _): "no such image"
        case .httpStatus: "the origin answered with an error"
        case .tooManyRedirects: "the origin redirected too often"
        case .network: "the origin could not be reached"
        case .decoding(.rendererUnavailable): "no renderer is available now; try again shortly"
        case .decoding(.libraryUnavailable(let library, _)): "this server cannot do that now: \(library) could not be loaded (its log says why)"
        case .decoding(let codec): "unsupported or corrupt image: \(codec)"
        case .tooLarge(let limit, _, _): "the source is larger than \(limit) bytes"
        case .processing(let reason): "cannot process the image: \(reason)"
        case .forbiddenURL: "source refused"
        case .unsupportedURL: "source refused: unsupported scheme"
        case .timedOut: "the image took too long"
        case .cancelled: "cancelled"
        case .overloaded: "too many requests; try again shortly"
        case .overMemoryBudget: description
        case .storage: "cache error"
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        ImageServer.text(status, publicMessage)
    }
}

/// Counts every answer by route and status with its duration, turns every error into its
/// answer — `HTTPError` and other `HTTPResponseError`s as short text, a client that left as 499
/// (never a server error), anything unexpected as a logged 500 — and adds
/// `X-Content-Type-Options: nosniff` to every answer (error bodies echo parts of the request as
/// text: a browser must never sniff them into HTML). One middleware, not two: each layer costs
/// an async call on every request.
///
/// It also gives every answer its `X-Request-ID` (`RequestID`), which every log line written
/// while the request is handled carries (`RequestID.current`), and writes one access-log line
/// per answer when `accessLog` is on. With tracing on, each answer is also a server span
/// (`ServerSpan`), under which the pipeline records its stages.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    let logger: Logger
    var accessLog = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let requestID = RequestID.of(request.headers)
        guard Traces.isEnabled else {
            return try await RequestID.$current.withValue(requestID) {
                try await answer(request, context: context, next: next, requestID: requestID, traceID: nil)
            }
        }
        // Traced: the answer is a server span, and the pipeline's stages become its children.
        let span = ServerSpan.start(method: request.method, target: request.uri.description, fields: request.headers)
        let traceID = accessLog ? AccessLog.traceID(of: span) : nil
        return try await Traces.inRequest(span) {
            let answer: Response
            do {
                answer = try await RequestID.$current.withValue(requestID) {
                    try await self.answer(request, context: context, next: next, requestID: requestID, traceID: traceID)
                }
            } catch {
                // (`answer` turns every error into a response; a span is never left open.)
                ServerSpan.finish(span, route: Self.route(request), requestID: requestID, .init(status: 500))
                throw error
            }
            ServerSpan.finish(span, route: Self.route(request), requestID: requestID, peer: (context as? EaselRequestContext)?.remoteAddress,
                              .init(status: Int(answer.status.code), contentType: answer.headers[.contentType], bytes: answer.body.contentLength))
            return answer
        }
    }

    private func answer(_ request: Request, context: Context, next: (Request, Context) async throws -> Response,
                        requestID: String, traceID: String?) async throws -> Response {
        let start = ContinuousClock.now
        let route = Self.route(request)
        let note = accessLog ? AccessLog.Note() : nil
        let response: Response
        do {
            // The only transfer coding a request may use is chunked (RFC 9112 §6.1: a coding the
            // server does not understand is a 501); `ConnectionGuard` closes such a connection
            // after the answer, as its body cannot be framed.
            if let coding = request.headers[.transferEncoding], !ConnectionGuard.isChunkedOnly(coding) {
                throw RequestError.notImplemented("transfer coding not supported: only chunked is")
            }
            if let host = request.headers[ConnectionGuard.invalidHostField] {
                throw RequestError.invalid("an HTTP/1.1 request carries exactly one Host (this one's is \(host == "missing" ? "missing" : "repeated"))")
            }
            if let note {
                response = try await AccessLog.Note.$current.withValue(note) { try await next(request, context) }
            } else {
                response = try await next(request, context)
            }
        } catch is ClientGone {
            response = ImageServer.text(.init(code: ClientGone.status, reasonPhrase: "Client Closed Request"), "the client left")
        } catch let error as HTTPError {
            var text = ImageServer.text(error.status, error.body ?? error.status.reasonPhrase)
            for field in error.headers { text.headers.append(field) }
            response = text
        } catch let error as any HTTPResponseError {
            // The server's own failures (a library that could not be loaded, the cache's storage)
            // are logged with what the client is not told.
            if error.status == .internalServerError {
                logger.error("server error", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            }
            response = try error.response(from: request, context: context)
        } catch {
            logger.error("unexpected error", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            response = ImageServer.text(.internalServerError, "internal error")
        }
        if let route { metrics.record(route: route, status: Int(response.status.code), since: start) }
        var answer = response
        answer.headers[Self.noSniff] = "nosniff"
        answer.headers[RequestID.field] = requestID
        if let note {
            // (The request ID comes from `RequestID.current`, as on every line of the request.)
            let entry = AccessLog.Entry(method: request.method, path: request.uri.path, route: route, status: Int(response.status.code),
                                        bytes: response.body.contentLength, tier: note.tier, traceID: traceID)
            AccessLog.write(logger, entry, since: start)
        }
        return answer
    }

    static var noSniff: HTTPField.Name { HTTPField.Name("X-Content-Type-Options")! }

    /// The route label: images, purge, imgproxy, thumbor, info, gallery, health or metrics; a
    /// fixed set, whatever the path (anything else is not counted).
    static func route(_ request: Request) -> String? { route(path: Substring(request.uri.path), method: request.method) }

    /// The route label of a request for `path` (without the query); the ready-answer handler
    /// counts its replays with it.
    static func route(path: Substring, method: HTTPRequest.Method) -> String? {
        // Byte comparisons: this runs on every answer, replays included.
        let bytes = path.utf8
        if bytes.starts(with: "/images/".utf8) { return method == .delete ? "purge" : "images" }
        if bytes.starts(with: "/info/".utf8) || bytes.starts(with: "/imgproxy/info/".utf8) { return "info" }
        if bytes.starts(with: "/imgproxy/".utf8) { return "imgproxy" }
        if bytes.starts(with: "/thumbor/".utf8) { return "thumbor" }
        switch path {
        case "/": return "gallery"
        case "/health": return "health"
        case "/metrics": return "metrics"
        default: return nil
        }
    }
}

/// The server span of an answer, when tracing is on: one per request, whichever path answers
/// it (the router, or a replay of a ready answer), named `METHOD ROUTE` and continuing the
/// caller's trace from its W3C `traceparent`.
enum ServerSpan {
    /// Starts the span of a request, as a child of the trace its fields carry, if any.
    static func start(method: HTTPRequest.Method, target: String, fields: HTTPFields, at instant: DefaultTracerClock.Timestamp = DefaultTracerClock.now) -> any Span {
        var context = InstrumentationContext.topLevel
        InstrumentationSystem.instrument.extract(TraceCarrier(fields), into: &context, using: TraceCarrier.Extractor())
        let span = InstrumentationSystem.tracer.startSpan(method.rawValue, context: context, ofKind: .server, at: instant)
        guard span.isRecording else { return span }  // not sampled: nothing more to spend on it
        span.updateAttributes { attributes in
            attributes["http.request.method"] = method.rawValue
            attributes["url.path"] = String(target.prefix { $0 != "?" })
            if let query = target.firstIndex(of: "?") { attributes["url.query"] = String(target[target.index(after: query)...]) }
            attributes["user_agent.original"] = fields[.userAgent]
        }
        return span
    }

    /// What a span records of the answer.
    struct Answered {
        var status: Int
        var contentType: String?
        var bytes: Int?
        /// The tier a ready answer came from.
        var tier: String?
        /// Answered by the ready-answer handler, before the router.
        var replayed = false
    }

    /// Names the span after its route, records the answer and ends it.
    static func finish(_ span: any Span, route: String?, requestID: String, peer: SocketAddress? = nil, _ answered: Answered) {
        guard span.isRecording else { return span.end() }
        let (status, tier, replayed) = (answered.status, answered.tier, answered.replayed)
        if let route { span.operationName = "\(span.operationName) \(route)" }
        span.updateAttributes { attributes in
            attributes["http.route"] = route
            attributes["http.response.status_code"] = status
            attributes["http.request.id"] = requestID
            if let tier { attributes["easel.tier"] = tier }
            if replayed { attributes["easel.replayed"] = true }
            attributes["http.response.header.content-type"] = answered.contentType
            attributes["http.response.body.size"] = answered.bytes
            if let address = peer?.ipAddress { attributes["client.address"] = address }
        }
        if status >= 500 { span.setStatus(.init(code: .error)) }
        span.end()
    }

    /// What a trace is continued from: the W3C `traceparent` and `tracestate` alone, never the
    /// request's other fields. A tracer that cannot read them may log its carrier (swift-otel
    /// does, at warning): it then prints these two, capped, not `Authorization` or `Cookie`.
    struct TraceCarrier: CustomStringConvertible {
        /// The longest `tracestate` passed on (W3C allows dropping a longer one: 32 entries of
        /// at most 256 characters make 512 in practice).
        static let maxStateLength = 512
        let traceparent: String?
        let tracestate: String?

        init(_ fields: HTTPFields) {
            traceparent = fields[HTTPField.Name("traceparent")!].map { String($0.prefix(64)) }
            tracestate = fields[HTTPField.Name("tracestate")!].flatMap { $0.count <= Self.maxStateLength ? $0 : nil }
        }

        var description: String { "traceparent: \(traceparent ?? "none"), tracestate: \(tracestate?.count ?? 0) characters" }

        struct Extractor: Tracing.Extractor {
            func extract(key: String, from carrier: TraceCarrier) -> String? {
                switch key.lowercased() {
                case "traceparent": carrier.traceparent
                case "tracestate": carrier.tracestate
                default: nil
                }
            }
        }
    }
}
