import EaselSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

extension ImageServer {
    /// Listens until SIGTERM or SIGINT, then stops accepting, lets the requests in flight finish,
    /// writes the caches (`shutdown()`) and returns. Prints the address once listening.
    public func run(onListening: @escaping @Sendable (String) -> Void = ImageServer.announce) async throws {
        let drain = ListenerDrain()
        let app = Application(
            router: router(),
            server: httpServer(),
                        // A deep accept queue: a burst of connections waits in the kernel instead of having
            // its SYNs dropped (and retried a second later) while the cap recycles idle ones.
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "easel", backlog: 4096),
            services: [CacheFlusher(server: self)],
            onServerRunning: { channel in
                drain.listening(on: channel)
                let address = channel.localAddress
                onListening("\(address?.ipAddress ?? "?"):\(address?.port ?? 0)")
            },
            logger: Logger(label: "easel.serve"))
        // Shut down in reverse order: the listener's accept queue is drained first, then the
        // HTTP server stops (closing the listener, finishing what is in flight).
        let logger = Logger(label: "easel.serve")
        let group = ServiceGroup(configuration: .init(services: [app, drain], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// At shutdown, before the HTTP server closes its listener: new connections are refused at the
/// door and the connections the kernel has already completed are accepted (and then served and
/// closed as every other), instead of being reset when the listener closes under them. Linux;
/// elsewhere, or when the options fail, the listener simply closes.
final class ListenerDrain: Service, Sendable {
    private let channel = Mutex<(any Channel)?>(nil)

    /// How long the accept queue may take to empty.
    static let limit: Duration = .seconds(1)

    func listening(on channel: any Channel) { self.channel.withLock { $0 = channel } }

    func run() async throws {
        try? await gracefulShutdown()
        guard let provider = channel.withLock({ $0 }) as? any SocketOptionProvider else { return }
        do {
            try await provider.unsafeSetSocketOption(level: ListenerSocket.socketLevel, name: ListenerSocket.attachFilter,
                                                     value: ListenerSocket.dropNewConnections).get()
            // Empty twice in a row, 10 ms apart: handshakes under way have landed and been taken.
            let end = ContinuousClock.now + Self.limit
            var empty = 0
            while empty < 2, ContinuousClock.now < end {
                let info: ListenerSocket.InfoPrefix = try await provider.unsafeGetSocketOption(
                    level: ListenerSocket.tcpLevel, name: ListenerSocket.tcpInfo).get()
                empty = info.acceptQueueLength == 0 ? empty + 1 : 0
                try await Task.sleep(for: .milliseconds(10))
            }
        } catch {
            Logger(label: "easel.serve").debug("listener drain skipped: \(error)")
        }
    }
}

extension ImageServer {
    /// Prints the address at once (unbuffered: a supervisor reading a pipe sees it).
    public static let announce: @Sendable (String) -> Void = { address in
        FileHandle.standardOutput.write(Data("easel serve: listening on http://\(address)/\n".utf8))
    }
}

/// Waits for the graceful shutdown, then writes the caches.
struct CacheFlusher: Service {
    let server: ImageServer
    func run() async throws {
        try? await gracefulShutdown()
        await server.shutdown()
    }
}
