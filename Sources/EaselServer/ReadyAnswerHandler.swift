import EaselPipeline
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers repeat requests from `ReadyAnswers` in the channel pipeline, and fills the table
/// from the answers the framework writes.
///
/// It sits last before the framework's own handlers, after the HTTP codec, the connection guard
/// and Hummingbird's connection-state handler, so a replayed answer passes through everything a
/// framework answer passes through on its way out: `Connection: close` for HTTP/1.0 and
/// `Connection: close` requests, the idle timer, graceful shutdown, the open-connection count.
///
/// A request is replayed only when nothing before it on the connection is still being answered
/// (pipelined answers stay in order), the connection is writable (a client that does not read
/// gets the framework's back-pressure), the request has ended without a body, and its key is in
/// the table. Everything else is passed on unchanged, except that a request that could be
/// replayed next time carries `ReadyAnswers.fillField` with the process's nonce, and that header
/// is always removed from what clients send and from what the route answers.
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

    /// A request passed on to the framework, until the end of its answer has been written.
    private struct Passed {
        var key: ReadyAnswers.Key?
        var ticket: ReadyAnswers.Ticket?
        var fields = HTTPFields()
        var body: ByteBuffer?
    }
    private var passed = CircularBuffer<Passed>()
    /// A request head that may be replayed, held until its end (or a body) arrives.
    private var held: (request: HTTPRequest, key: ReadyAnswers.Key, start: ContinuousClock.Instant)?
    private var unflushed = false

    init(answers: ReadyAnswers, shard: ReadyAnswers.Shard, metrics: ServerMetrics, answered: @escaping @Sendable () -> Void) {
        self.answers = answers
        self.shard = shard
        self.metrics = metrics
        self.answered = answered
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var request):
            if request.headerFields[ReadyAnswers.fillField] != nil { request.headerFields[ReadyAnswers.fillField] = nil }
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
            if context.channel.isActive, context.channel.isWritable, let answer = answers.replay(held.key, from: shard) {
                context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: answer.fields))), promise: nil)
                if !held.key.head, let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                context.write(wrapOutboundOut(.end(nil)), promise: nil)
                unflushed = true
                if let route = answer.route { metrics.record(route: route, status: 200, since: held.start) }
                answered()
                return
            }
            var request = held.request
            request.headerFields[ReadyAnswers.fillField] = answers.nonce
            pass(context, request, key: held.key)
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
        case .head(var response):
            guard let mark = response.headerFields[ReadyAnswers.fillField] else { break }
            response.headerFields[ReadyAnswers.fillField] = nil
            if !passed.isEmpty, passed[passed.startIndex].key != nil, response.status == .ok, let ticket = ReadyAnswers.Ticket(headerValue: mark) {
                passed[passed.startIndex].ticket = ticket
                passed[passed.startIndex].fields = response.headerFields
            }
            context.write(wrapOutboundOut(.head(response)), promise: promise)
            return
        case .body(let buffer):
            guard !passed.isEmpty, passed[passed.startIndex].ticket != nil else { break }
            if passed[passed.startIndex].body == nil {
                passed[passed.startIndex].body = buffer
            } else {
                var whole = passed[passed.startIndex].body!
                var more = buffer
                whole.writeBuffer(&more)
                passed[passed.startIndex].body = whole
            }
            if passed[passed.startIndex].body!.readableBytes > answers.perShard { passed[passed.startIndex].ticket = nil }  // never kept: do not gather it
        case .end:
            guard !passed.isEmpty else { break }
            let done = passed.removeFirst()
            if let key = done.key, let ticket = done.ticket {
                let path = key.target.prefix { $0 != "?" }
                answers.store(key, fields: done.fields, body: done.body, route: MetricsMiddleware<EaselRequestContext>.route(path: path, method: key.head ? .head : .get),
                              ticket: ticket, in: shard)
            }
        }
        context.write(data, promise: promise)
    }
}
