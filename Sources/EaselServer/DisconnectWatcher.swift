import EaselSupport
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Notices a client leaving: Hummingbird keeps a request's handler running when its connection
/// closes (it allows half-closed connections), so this handler, added to every connection's
/// pipeline, resumes the requests waiting on that connection at the first end of input or
/// inactivity, and a request waiting for expensive work can stop waiting. Waiters deregister
/// when they finish, so a long keep-alive connection does not accumulate them.
///
/// `@unchecked Sendable`: `closed` and `waiters` are read and written only on the channel's
/// event loop — in the channel callbacks and in the `whenSuccess` callbacks of
/// `pipeline.handler(type:)`, which complete on that event loop.
final class DisconnectWatcher: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    private var closed = false
    private var waiters: [ObjectIdentifier: OnceContinuation] = [:]

    private func fire() {
        closed = true
        let all = waiters
        waiters = [:]
        for waiter in all.values { waiter.resume() }
    }

    func handlerRemoved(context: ChannelHandlerContext) { fire() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { fire() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fire()
        context.fireChannelInactive()
    }

    /// Resumes `waiter` when `channel`'s client has gone (at once if it already has). A channel
    /// without a watcher (a test router) never resumes it.
    static func watch(_ channel: any Channel, _ waiter: OnceContinuation) {
        channel.pipeline.handler(type: DisconnectWatcher.self).whenSuccess { watcher in
            if watcher.closed { waiter.resume() } else { watcher.waiters[ObjectIdentifier(waiter)] = waiter }
        }
    }

    /// Forgets `waiter` (its request is done).
    static func unwatch(_ channel: any Channel, _ waiter: OnceContinuation) {
        channel.pipeline.handler(type: DisconnectWatcher.self).whenSuccess { watcher in
            watcher.waiters.removeValue(forKey: ObjectIdentifier(waiter))
        }
    }
}

extension ImageServer {
    /// HTTP/1.1 with a `DisconnectWatcher` on every connection, the idle timeout and the
    /// connection cap (`ConnectionGuard`) and the warm path's ready answers (`ReadyAnswerHandler`).
    public func httpServer() -> HTTPServerBuilder {
        // The idle timeout is the guard's, which sees replayed requests too.
        let configuration = HTTP1Channel.Configuration(additionalChannelHandlers: [DisconnectWatcher()], idleTimeout: nil)
        let idleTimeout = TimeAmount.milliseconds(Int64(checked: self.configuration.idleTimeout * 1000))
        let registry = connections
        let ready = (answers: readyAnswers, metrics: metrics, accessLog: self.configuration.accessLog ? Logger(label: "easel.server") : nil)
        return HTTPServerBuilder { responder in
            GuardedHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: configuration), registry: registry,
                                idleTimeout: idleTimeout, ready: ready)
        }
    }
}
