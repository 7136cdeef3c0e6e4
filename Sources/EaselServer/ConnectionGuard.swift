import EaselSupport
import EaselStorage
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Synchronization

/// Keeps the open connections under a cap, so that idle sockets can never use up the file
/// descriptors the server needs: when a new connection would pass the cap, the oldest
/// connection with no request in progress is closed. A client holding thousands of idle sockets
/// therefore only recycles its own sockets, and a new client (a health check) is still served.
///
/// Idle and half-sent requests are closed by the guard's idle timeout
/// (`ServerConfiguration.idleTimeout`), which counts from the connection's start or its last
/// answer until a complete request head has arrived: a slowloris client trickling header bytes
/// is closed when it passes. (The guard keeps it, not Hummingbird's connection-state handler:
/// replayed ready answers never reach that handler, and the guard sees every request.)
final class ConnectionRegistry: Sendable {
    private struct Entry {
        let channel: any Channel
        let activity: ConnectionActivity
    }
    private struct State {
        var entries: [UInt64: Entry] = [:]
        var next: UInt64 = 0
        var evicted = 0
    }
    private let state = Locked(State())
    let limit: Int

    init(limit: Int) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// Open connections.
    var count: Int { state.withLock { $0.entries.count } }
    /// Connections closed so far to make room for new ones.
    var evictedCount: Int { state.withLock { $0.evicted } }

    /// Records a new connection; closes the oldest idle ones while the cap is passed.
    /// - Complexity: O(1), plus O(open connections) when one must be evicted.
    func register(_ channel: any Channel, activity: ConnectionActivity) -> UInt64 {
        let (id, victims) = state.withLock { state -> (UInt64, [any Channel]) in
            state.next += 1
            state.entries[state.next] = Entry(channel: channel, activity: activity)
            var victims: [any Channel] = []
            while state.entries.count > limit {
                // The oldest connection with no request in progress; never the new one.
                var oldest: UInt64?
                for (key, entry) in state.entries where key != state.next && !entry.activity.isBusy && key < (oldest ?? .max) {
                    oldest = key
                }
                guard let oldest, let victim = state.entries.removeValue(forKey: oldest) else { break }
                state.evicted += 1
                victims.append(victim.channel)
            }
            return (state.next, victims)
        }
        for victim in victims { victim.close(promise: nil) }
        return id
    }

    func unregister(_ id: UInt64) {
        let removed = state.withLock { $0.entries.removeValue(forKey: id) }
        _ = removed  // released outside the lock
    }

    /// The cap for this process: `configured`, but never closer than `reserve` descriptors to
    /// the soft `RLIMIT_NOFILE` (files, the disk cache, origin connections need the rest).
    static func limit(configured: Int, reserve: Int = 256) -> Int {
        let descriptors = Platform.openFileLimit()
        return max(16, min(configured, descriptors - reserve))
    }
}

/// Requests in progress on one connection (pipelined requests count one each).
final class ConnectionActivity: Sendable {
    private let inProgress = Atomic<Int>(0)
    var isBusy: Bool { inProgress.load(ordering: .relaxed) > 0 }
    func began() { inProgress.add(1, ordering: .relaxed) }
    func ended() { inProgress.subtract(1, ordering: .relaxed) }
}

/// The per-connection half of `ConnectionRegistry`, between NIO's HTTP/1 codec and the
/// conversion to HTTP types (where the request's version is still known): registers the
/// connection, tracks its requests, unregisters it when it closes, and answers HTTP/1.0
/// requests that did not ask for keep-alive (and any request saying `Connection: close`) with
/// `Connection: close`, closing the connection after the answer. At shutdown it ends each
/// connection after its last answer in progress, with a FIN and a drain (never a reset).
///
/// Not `Sendable`: it lives on its channel's event loop like every channel handler; what other
/// threads see of it is its `ConnectionActivity` (atomic) and the registry (locked).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let registry: ConnectionRegistry
    private let activity = ConnectionActivity()

    /// What follows a request's answer.
    private enum After {
        case keepOpen
        /// Close (HTTP/1.0, `Connection: close`).
        case close
        /// Close with a FIN, then read out what the client still sends (see `drain`): after a
        /// request whose body cannot be framed, and during shutdown.
        case drain
    }
    /// Per request in arrival order (requests may be pipelined); decided for good when its
    /// answer's head is written (what the head says is what happens).
    private var after: [After] = []
    /// The server is shutting down: the last answer in progress closes the connection.
    private var quiescing = false
    /// Our side is closing (FIN once everything written has gone) and what the client still
    /// sends is read and dropped, so the final close never finds unread bytes (which would make
    /// the kernel send a reset).
    private var draining = false
    /// Our FIN is out (the output close completed).
    private var outputClosed = false
    /// The client closed its side while our output was still closing: close once it has.
    private var closeWhenOutputClosed = false
    /// Timers to cancel when the connection goes (so a closed one is not kept alive by them).
    private var timers: [Scheduled<Void>] = []
    /// How long a connection may wait for a complete request head (nil: for ever).
    private let idleTimeout: TimeAmount?
    /// Since when the connection waits for a request (its start, or its last answer); nil while
    /// a request is in progress.
    private var idleSince: NIODeadline? = .now()
    /// Checks `idleSince` when it may have passed the timeout: one timer per connection, moved on
    /// when it fires early, rather than one scheduled and cancelled per request.
    private var idleTimer: Scheduled<Void>?

    init(registry: ConnectionRegistry, idleTimeout: TimeAmount? = nil) {
        self.registry = registry
        self.idleTimeout = idleTimeout
    }

    /// Starts the idle timer, once the connection is active.
    private func startIdleTimer(_ context: ChannelHandlerContext) {
        guard let idleTimeout, idleTimer == nil, context.channel.isActive else { return }
        scheduleIdleCheck(context, at: (idleSince ?? .now()) + idleTimeout)
    }

    private func scheduleIdleCheck(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.idleTimer = nil
            guard let idleTimeout = self.idleTimeout, !self.draining, context.channel.isActive else { return }
            guard let since = self.idleSince else {
                // A request in progress: look again a timeout from now.
                self.scheduleIdleCheck(context, at: .now() + idleTimeout)
                return
            }
            if since + idleTimeout <= .now() {
                context.close(promise: nil)
            } else {
                self.scheduleIdleCheck(context, at: since + idleTimeout)
            }
        }
    }

    private func stopIdleTimer() {
        idleTimer?.cancel()
        idleTimer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        startIdleTimer(context)
        context.fireChannelActive()
    }

    /// How long an idle connection stays open once shutdown begins, for a request the client
    /// already sent (it is answered, with `Connection: close`).
    static let quiesceGrace: TimeAmount = .milliseconds(250)
    /// How long a draining connection waits for the client's end, once our FIN is out.
    static let drainLimit: TimeAmount = .seconds(1)
    /// The most a draining connection stays open in all (a client that does not read its answer).
    static let drainCap: TimeAmount = .seconds(30)

    func handlerAdded(context: ChannelHandlerContext) {
        let id = registry.register(context.channel, activity: activity)
        context.channel.closeFuture.whenComplete { [registry] _ in registry.unregister(id) }
        startIdleTimer(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopIdleTimer()
    }

    func channelInactive(context: ChannelHandlerContext) {
        for timer in timers { timer.cancel() }
        timers = []
        stopIdleTimer()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            // Graceful shutdown (the listener is already closed). Hummingbird would close an idle
            // connection at once, and a busy one right after its answer — a reset whenever a
            // request is on its way. Instead (the event stops here): an idle connection waits
            // `quiesceGrace` for a request already sent, and every connection ends after its last
            // answer in progress (sent with `Connection: close`) with a FIN and a drain.
            guard !quiescing else { return }
            quiescing = true
            // Answers still to come that were to close end with a drain instead.
            after = after.map { $0 == .close ? .drain : $0 }
            if !activity.isBusy { drainWhenIdle(context) }
            return
        }
        if draining, let event = event as? ChannelEvent, event == .inputClosed {
            if outputClosed { context.close(promise: nil) } else { closeWhenOutputClosed = true }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// During shutdown: drains the connection after `quiesceGrace` unless a request came.
    private func drainWhenIdle(_ context: ChannelHandlerContext) {
        timers.append(context.eventLoop.assumeIsolated().scheduleTask(in: Self.quiesceGrace) {
            guard !self.activity.isBusy, !self.draining, context.channel.isActive else { return }
            self.drain(context)
        })
    }

    /// Closes our side once everything written has gone, drops what the client still sends, and
    /// closes when the client closes its side (or `drainLimit` after our FIN; `drainCap` in all).
    private func drain(_ context: ChannelHandlerContext) {
        guard !draining else { return }
        draining = true
        let loop = context.eventLoop.assumeIsolated()
        let done = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: done)
        done.futureResult.assumeIsolated().whenComplete { _ in
            self.outputClosed = true
            if self.closeWhenOutputClosed { context.close(promise: nil); return }
            self.timers.append(loop.scheduleTask(in: Self.drainLimit) { if context.channel.isActive { context.close(promise: nil) } })
        }
        timers.append(loop.scheduleTask(in: Self.drainCap) { if context.channel.isActive { context.close(promise: nil) } })
        context.read()  // keep reading: the framework asks for no more once it has stopped
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if draining {
            context.read()
            return
        }
        if case .head(var head) = unwrapInboundIn(data) {
            // HTTP/1.1 requires exactly one Host (RFC 9112 §3.2): a request with none or several
            // is marked for the router's 400 (`MetricsMiddleware`), and no ready answer takes it.
            // (A health check without one, as some load balancers send, is let through.)
            if head.version.major == 1, head.version.minor >= 1, case let count = Self.hostCount(head.headers), count != 1,
               count > 1 || head.uri != "/health" {
                head.headers.remove(name: "host")
                head.headers.replaceOrAdd(name: Self.invalidHostMarker, value: count == 0 ? "missing" : "repeated")
                return handleHead(context: context, head: head, data: wrapInboundOut(.head(head)))
            }
            return handleHead(context: context, head: head, data: data)
        }
        context.fireChannelRead(data)
    }

    /// The field that marks a request whose Host was missing or repeated.
    static let invalidHostMarker = "easel-invalid-host"
    static let invalidHostField = HTTPField.Name(invalidHostMarker)!

    /// How many Host fields a request has (a scan without allocating: this runs on every request).
    static func hostCount(_ headers: HTTPHeaders) -> Int {
        var count = 0
        for (name, _) in headers where name.utf8.count == 4 && name.lowercased() == "host" { count += 1 }
        return count
    }

    private func handleHead(context: ChannelHandlerContext, head: HTTPRequestHead, data: NIOAny) {
        activity.began()
        idleSince = nil
        // HTTP/1.1 keeps the connection unless told otherwise: skip the header scan then.
        let close = head.version.minor == 0 || head.headers.contains(name: "connection") ? !head.isKeepAlive : false
        // A transfer coding other than chunked is answered 501 (`MetricsMiddleware`), and its
        // body cannot be framed: the connection closes after the answer, reading out the rest.
        var unframed = false
        if head.headers.contains(name: "transfer-encoding") {
            let codings = head.headers[canonicalForm: "transfer-encoding"]
            unframed = !(codings.count == 1 && Self.isChunkedOnly(codings[0]))
        }
        after.append(unframed || quiescing ? .drain : close ? .close : .keepOpen)
        context.fireChannelRead(data)
    }

    /// Whether a `Transfer-Encoding` value names exactly the chunked coding.
    static func isChunkedOnly(_ value: some StringProtocol) -> Bool {
        value.trimmingCharacters(in: .whitespaces).lowercased() == "chunked"
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            // While shutting down, the last answer in progress ends the connection: decided here,
            // so a head that says close is always followed by a close.
            if quiescing, after.count == 1, after[0] == .keepOpen { after[0] = .drain }
            var changed = false
            if after.isEmpty, !head.headers.contains(name: "x-request-id") {
                // The framework's own 400 for a request it could not parse never met the router's
                // middleware: its X-Request-ID is added here.
                head.headers.add(name: "X-Request-ID", value: RequestID.make())
                changed = true
            }
            if let first = after.first, first != .keepOpen {
                head.headers.replaceOrAdd(name: "connection", value: "close")
                changed = true
            }
            if changed {
                context.write(wrapOutboundOut(.head(head)), promise: promise)
            } else {
                context.write(data, promise: promise)
            }
        case .end:
            // (An answer with no request head — the framework's 400 for an unparseable one —
            // has no entry, and no request was counted for it.)
            guard !after.isEmpty else {
                context.write(data, promise: promise)
                return
            }
            activity.ended()
            switch after.removeFirst() {
            case .keepOpen:
                context.write(data, promise: promise)
                // Shutting down and idle now: the same grace as an idle connection's.
                if quiescing, after.isEmpty { drainWhenIdle(context) }
                // The last answer in progress: the wait for the next request begins.
                if after.isEmpty { idleSince = .now() }
            case .close:
                // Closed once the kernel has taken the whole answer (a close with writes still
                // pending would drop them: a large image cut short); a client that never reads
                // it is closed by the idle timeout, counted from here.
                if after.isEmpty { idleSince = .now() }
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.cascade(to: promise)
                context.writeAndFlush(data, promise: written)
                written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            case .drain:
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.cascade(to: promise)
                context.writeAndFlush(data, promise: written)
                written.futureResult.assumeIsolated().whenComplete { _ in self.drain(context) }
            }
        default:
            context.write(data, promise: promise)
        }
    }
}

/// Hummingbird's HTTP/1 channel with a `ConnectionGuard` in front of its type conversion and,
/// when ready answers are on, a `ReadyAnswerHandler` right after the guard.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let registry: ConnectionRegistry
    /// The guard's idle timeout (Hummingbird's own is off: see `ConnectionGuard`).
    var idleTimeout: TimeAmount?
    var ready: (answers: ReadyAnswers, metrics: ServerMetrics, accessLog: Logger?)?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { [registry, ready, idleTimeout] value in
            let operations = channel.pipeline.syncOperations
            let codec = try operations.handler(type: HTTP1ToHTTPServerCodec.self)
            try operations.addHandler(ConnectionGuard(registry: registry, idleTimeout: idleTimeout), position: .before(codec))
            if let ready, ready.answers.isEnabled {
                let handler = ReadyAnswerHandler(answers: ready.answers, shard: ready.answers.shard(for: channel.eventLoop), metrics: ready.metrics,
                                                 accessLog: ready.accessLog)
                try operations.addHandler(handler, position: .before(codec))
            }
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
