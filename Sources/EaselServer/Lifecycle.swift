import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

extension ImageServer {
    /// Listens until SIGTERM or SIGINT, then stops accepting, lets the requests in flight finish,
    /// writes the caches (`shutdown()`) and returns. Prints the address once listening.
    public func run(onListening: @escaping @Sendable (String) -> Void = { print("easel serve: listening on http://\($0)/") }) async throws {
        let app = Application(
            router: router(),
            server: Self.httpServer,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "easel"),
            services: [CacheFlusher(server: self)],
            onServerRunning: { channel in
                let address = channel.localAddress
                onListening("\(address?.ipAddress ?? "?"):\(address?.port ?? 0)")
            },
            logger: Logger(label: "easel.serve"))
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
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
