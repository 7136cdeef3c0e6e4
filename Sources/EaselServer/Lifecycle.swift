import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

extension ImageServer {
    /// Listens until SIGTERM or SIGINT, then stops accepting, lets the requests in flight finish,
    /// writes the caches (`shutdown()`) and returns. Prints the address once listening.
    public func run(onListening: @escaping @Sendable (String) -> Void = ImageServer.announce) async throws {
        let app = Application(
            router: router(),
            server: httpServer(),
                        // A deep accept queue: a burst of connections waits in the kernel instead of having
            // its SYNs dropped (and retried a second later) while the cap recycles idle ones.
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "easel", backlog: 4096),
            services: [CacheFlusher(server: self)],
            onServerRunning: { channel in
                let address = channel.localAddress
                onListening("\(address?.ipAddress ?? "?"):\(address?.port ?? 0)")
            },
            logger: Logger(label: "easel.serve"))
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
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
