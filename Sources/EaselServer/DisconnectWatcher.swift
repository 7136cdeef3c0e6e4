import Hummingbird
import HummingbirdCore
import NIOCore

/// Notices a client leaving: Hummingbird keeps a request's handler running when its connection
/// closes (it allows half-closed connections), so this handler, added to every connection's
/// pipeline, completes `closed` on the first end of input or inactivity, and a request waiting
/// for expensive work can stop waiting.
///
/// `@unchecked Sendable`: `promise` is set in `handlerAdded` and completed in the channel
/// callbacks, all on the channel's event loop; other threads reach it only through
/// `closedFuture(on:)`, which hops to that event loop (`flatMap` on the pipeline's future).
final class DisconnectWatcher: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    private var promise: EventLoopPromise<Void>?

    func handlerAdded(context: ChannelHandlerContext) {
        promise = context.eventLoop.makePromise(of: Void.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise?.succeed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { promise?.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.succeed()
        context.fireChannelInactive()
    }

    /// Completes when `channel`'s client has gone; fails when the channel has no watcher.
    static func closedFuture(on channel: any Channel) -> EventLoopFuture<Void> {
        channel.pipeline.handler(type: DisconnectWatcher.self).flatMap { watcher in
            watcher.promise?.futureResult ?? channel.eventLoop.makeSucceededVoidFuture()
        }
    }
}

extension ImageServer {
    /// HTTP/1.1 with a `DisconnectWatcher` on every connection.
    public static var httpServer: HTTPServerBuilder {
        .http1(configuration: .init(additionalChannelHandlers: [DisconnectWatcher()]))
    }
}
