import EaselSupport
import EaselStorage
import EaselTestSupport
import Foundation
import Testing

extension ServeUnderLoad {
    /// `easel serve` as its own process, started with a low descriptor limit (as many systems set
    /// it), under thousands of idle connections.
    @Suite("easel serve under idle connections", .timeLimit(.minutes(2)))
    struct ServeConnectionTests {
        /// A running `easel serve` on a free port; terminated when released.
        static func server(openFiles: Int, cache: String) throws -> ListeningProcess {
            // `ulimit -n` sets the soft and hard limits: the server cannot raise them.
            try ListeningProcess(executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: ["-c", "ulimit -n \(openFiles) && cd \"$2\" && exec \"$0\" serve --port 0 --cache-dir \"$1\"",
                                             builtProduct("easel").path, cache,
                                             sampleURL("astronaut.jpg").deletingLastPathComponent().deletingLastPathComponent().path])
        }

        @Test func healthIsAnsweredUnderFiveThousandIdleConnectionsWithAThousandDescriptors() async throws {
            let available = Platform.raiseOpenFileLimit()
            try #require(available >= 5_300, "the test needs 5,300 descriptors for its own sockets (hard limit \(available))")
            let cache = try TemporaryDirectory()
            let server = try await BlockingIOPool.shared.run { try Self.server(openFiles: 1024, cache: cache.path) }
            let (idle, answer, took) = try await BlockingIOPool.shared.run { () throws -> ([RawSocket], (text: String, closed: Bool), Duration) in
                var idle: [RawSocket] = []
                idle.reserveCapacity(5_000)
                for _ in 0..<5_000 { idle.append(try RawSocket(port: server.port)) }
                let start = ContinuousClock.now
                let health = try RawSocket(port: server.port)
                try health.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let answer = health.readUntilClosed(within: .seconds(10))
                return (idle, answer, ContinuousClock.now - start)
            }
            #expect(answer.text.hasPrefix("HTTP/1.1 200"), "\(answer.text)")
            // Debug build, other suites running: the health check waits behind the accept queue of
            // 5,000 connections (scripts/load.sh measures the release server: under 100 ms).
            #expect(took < .seconds(10), "answered in \(took)")
            #expect(idle.count == 5_000)
            #expect(server.process.isRunning)
        }
    }
}
