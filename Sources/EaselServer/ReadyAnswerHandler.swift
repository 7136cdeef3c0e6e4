import EaselPipeline
import EaselSupport
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import Tracing

/// Answers repeat requests from `ReadyAnswers` in the channel pipeline, and files in the index
/// the header fields of the answers the framework writes for variants the route offered.
///
/// It sits right after the connection guard, before Hummingbird's type conversion (the HTTP
/// codec between NIO's HTTP/1 types and HTTP Types), its connection-state handler and everything
/// after them: a replay costs no conversion either way. What a replayed answer needs of those
/// it gets from the connection guard, which sees every request and answer: `Connection: close`
/// for HTTP/1.0 and `Connection: close` requests (with the close after the answer), the idle
/// timeout, graceful shutdown and the open-connection count.
///
/// A request is replayed only when nothing before it on the connection is still being answered
/// (pipelined answers stay in order), the connection is writable (a client that does not read
/// gets the framework's back-pressure), the request has ended without a body, and its key is in
/// the index (and the memory tier still holds its bytes). Everything else is passed on
/// unchanged; nothing private travels between the route and this handler.
///
/// Not `Sendable`: it lives on its channel's event loop like every channel handler.
final class ReadyAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let answers: ReadyAnswers
    private let shard: ReadyAnswers.Shard
    private let metrics: ServerMetrics
    /// Where a replay's access-log line goes (nil: access logging is off).
    private let accessLog: Logger?

    /// A request passed on to the framework, until the end of its answer has been written.
    private struct Passed {
        var key: ReadyAnswers.Key?
    }
    private var passed = CircularBuffer<Passed>()
    /// A request head that may be replayed, held until its end (or a body) arrives.
    private var held: (request: HTTPRequestHead, key: ReadyAnswers.Key, start: ContinuousClock.Instant)?
    private var unflushed = false

    init(answers: ReadyAnswers, shard: ReadyAnswers.Shard, metrics: ServerMetrics, accessLog: Logger? = nil) {
        self.answers = answers
        self.shard = shard
        self.metrics = metrics
        self.accessLog = accessLog
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if passed.isEmpty, held == nil, let key = ReadyAnswers.Key(request) {
                held = (request, key, .now)
                return
            }
            pass(context, request, key: nil)
        case .body:
            if let held {
                // A body: the route never reads one, but a replay would not be an answer to this.
                self.held = nil
                pass(context, held.request, key: nil)
            }
            context.fireChannelRead(data)
        case .end:
            guard let held else {
                context.fireChannelRead(data)
                return
            }
            self.held = nil
            if context.channel.isActive, context.channel.isWritable, let (answer, body) = answers.replay(held.key, from: shard) {
                replay(context, held.request, answer: answer, body: body, key: held.key, start: held.start)
                return
            }
            pass(context, held.request, key: held.key)
            context.fireChannelRead(data)
        }
    }

    /// Writes the filed answer with this request's own `X-Request-ID` (in the place the filed
    /// one had) and the memory tier's bytes; flushed at the end of the read.
    private func replay(_ context: ChannelHandlerContext, _ request: HTTPRequestHead, answer: ReadyAnswers.Answer, body: ByteBuffer,
                        key: ReadyAnswers.Key, start: ContinuousClock.Instant) {
        // The client's ID when it sent one usable line (several lines are one joined value to the
        // route, which refuses it, as here).
        let sent = request.headers["x-request-id"]
        let requestID = (sent.count == 1 ? RequestID.accepted(sent[0]) : nil) ?? RequestID.make()
        var fields = answer.fields
        if let index = answer.requestIDIndex { fields[index].1 = requestID } else { fields.append(("X-Request-ID", requestID)) }
        // As the framework answers: HTTP/1.1 whatever the request's version, the connection's
        // fate (`Connection: close` and the close) the guard's.
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: HTTPHeaders(fields))
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !key.head { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        unflushed = true
        if let route = answer.route { metrics.record(route: route, status: 200, since: start) }
        // The access log and the trace read the request as the route would (the framework's own
        // conversion), only when either is on.
        if accessLog != nil || Traces.isEnabled, let routed = ReadyAnswers.routeView(request) {
            var traceID: String?
            if Traces.isEnabled {
                let span = ServerSpan.start(method: routed.method, target: request.uri, fields: routed.headerFields, at: Traces.instant(.now - start))
                if accessLog != nil { traceID = AccessLog.traceID(of: span) }
                ServerSpan.finish(span, route: answer.route, requestID: requestID, peer: context.channel.remoteAddress,
                                  .init(status: 200, contentType: head.headers.first(name: "content-type"), bytes: body.readableBytes,
                                        tier: ImageTier.encodedMemory.rawValue, replayed: true))
            }
            if let accessLog {
                let entry = AccessLog.Entry(method: routed.method, path: String(request.uri.prefix { $0 != "?" }), route: answer.route, status: 200,
                                            bytes: key.head ? 0 : body.readableBytes, tier: ImageTier.encodedMemory.rawValue,
                                            requestID: requestID, traceID: traceID)
                AccessLog.write(accessLog, entry, since: start)
            }
        }
    }

    private func pass(_ context: ChannelHandlerContext, _ request: HTTPRequestHead, key: ReadyAnswers.Key?) {
        passed.append(Passed(key: key))
        context.fireChannelRead(wrapInboundOut(.head(request)))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if unflushed {
            unflushed = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            // The answer to the oldest request passed on (answers go out in order): filed when
            // it could be replayed and the route offered its variant.
            if response.status == .ok, !passed.isEmpty, let key = passed[passed.startIndex].key {
                let path = key.target.prefix { $0 != "?" }
                answers.file(key, headers: response.headers,
                             route: MetricsMiddleware<EaselRequestContext>.route(path: path, method: key.head ? .head : .get), in: shard)
            }
        case .body:
            break
        case .end:
            if !passed.isEmpty { passed.removeFirst() }
        }
        context.write(data, promise: promise)
    }
}
