import EaselPipeline
import EaselSupport
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import Tracing

/// Answers repeat requests from `ReadyAnswers` in the channel pipeline, and files in the index
/// the header fields of the answers the framework writes for variants the route offered.
///
/// It sits last before the framework's own handlers, after the HTTP codec, the connection guard
/// and Hummingbird's connection-state handler, so a replayed answer passes through everything a
/// framework answer passes through on its way out: `Connection: close` for HTTP/1.0 and
/// `Connection: close` requests, the idle timer, graceful shutdown, the open-connection count.
///
/// A request is replayed only when nothing before it on the connection is still being answered
/// (pipelined answers stay in order), the connection is writable (a client that does not read
/// gets the framework's back-pressure), the request has ended without a body, and its key is in
/// the index (and the memory tier still holds its bytes). Everything else is passed on
/// unchanged; nothing private travels between the route and this handler.
///
/// Not `Sendable`: it lives on its channel's event loop like every channel handler.
final class ReadyAnswerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let answers: ReadyAnswers
    private let shard: ReadyAnswers.Shard
    private let metrics: ServerMetrics
    /// Counts a replay as an answer of the pipeline's encoded memory tier (whose bytes it is).
    private let answered: @Sendable () -> Void
    /// Where a replay's access-log line goes (nil: access logging is off).
    private let accessLog: Logger?

    /// A request passed on to the framework, until the end of its answer has been written.
    private struct Passed {
        var key: ReadyAnswers.Key?
    }
    private var passed = CircularBuffer<Passed>()
    /// A request head that may be replayed, held until its end (or a body) arrives.
    private var held: (request: HTTPRequest, key: ReadyAnswers.Key, start: ContinuousClock.Instant)?
    private var unflushed = false

    init(answers: ReadyAnswers, shard: ReadyAnswers.Shard, metrics: ServerMetrics, answered: @escaping @Sendable () -> Void,
         accessLog: Logger? = nil) {
        self.answers = answers
        self.shard = shard
        self.metrics = metrics
        self.answered = answered
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
                // Each answer gets its own request's ID, in the place the filed answer had one.
                var fields = answer.fields
                let requestID = RequestID.of(held.request.headerFields)
                fields[RequestID.field] = requestID
                context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: fields))), promise: nil)
                if !held.key.head { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                context.write(wrapOutboundOut(.end(nil)), promise: nil)
                unflushed = true
                if let route = answer.route { metrics.record(route: route, status: 200, since: held.start) }
                if let accessLog {
                    MetricsMiddleware<EaselRequestContext>.logAnswer(accessLog, method: held.request.method, path: String((held.request.path ?? "").prefix { $0 != "?" }),
                                                                     route: answer.route, status: 200, since: held.start, requestID: requestID)
                }
                if Traces.isEnabled {
                    let span = ServerSpan.start(method: held.request.method, target: held.request.path ?? "", fields: held.request.headerFields,
                                                at: Traces.instant(.now - held.start))
                    ServerSpan.finish(span, route: answer.route, status: 200, requestID: requestID,
                                      peer: context.channel.remoteAddress, tier: ImageTier.encodedMemory.rawValue,
                                      contentType: fields[.contentType], bytes: body.readableBytes, replayed: true)
                }
                answered()
                return
            }
            pass(context, held.request, key: held.key)
            context.fireChannelRead(data)
        }
    }

    private func pass(_ context: ChannelHandlerContext, _ request: HTTPRequest, key: ReadyAnswers.Key?) {
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
                answers.file(key, fields: response.headerFields,
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
