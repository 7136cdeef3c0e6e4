import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// SIGTERM under keep-alive traffic: the listener stops, every connection ends with an answer or
/// a clean FIN — never a reset a client would report as "connection reset by peer".
@Suite("easel serve shuts down without resetting connections", .timeLimit(.minutes(2)))
struct ShutdownTests {
    @Test func requestsRacingSIGTERMGetAnAnswerOrACleanCloseNeverAReset() async throws {
        let origin = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try catJPEG.write(to: origin.child("cat.jpg"))
        let server = try await BlockingIOPool.shared.run {
            try ChildServer(arguments: ["--origin", origin.path, "--cache-dir", cache.path])
        }
        let outcomes = try await BlockingIOPool.shared.run { () throws -> [(text: String, end: RawSocket.End)] in
            // Keep-alive connections, each with one answer behind it: idle when SIGTERM comes.
            var sockets: [RawSocket] = []
            for _ in 0..<24 {
                let socket = try RawSocket(port: server.port)
                try socket.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                let first = socket.read(until: "\r\n\r\nok\n", within: .seconds(10))
                try #require(first.end == .marker, "the first answer: \(first.text)")
                sockets.append(socket)
            }
            kill(server.process.processIdentifier, SIGTERM)
            // Each sends its next request at once: it races the shutdown.
            for socket in sockets { socket.trySend("GET /health HTTP/1.1\r\nHost: x\r\n\r\n") }
            return sockets.map { $0.read(until: nil, within: .seconds(10)) }
        }
        for (index, outcome) in outcomes.enumerated() {
            #expect(outcome.end == .closed, "connection \(index) ended with \(outcome.end): \(outcome.text)")
            // An answer, if any, is whole (answered before the shutdown began, or within the grace
            // with `Connection: close`).
            if !outcome.text.isEmpty {
                #expect(outcome.text.hasPrefix("HTTP/1.1 200") && outcome.text.hasSuffix("\r\n\r\nok\n"), "\(outcome.text)")
            }
        }
        // It exits (the suite's time limit bounds the wait).
        let status = try await BlockingIOPool.shared.run { () -> Int32 in
            server.process.waitUntilExit()
            return server.process.terminationStatus
        }
        #expect(status == 0, "the server exits cleanly after SIGTERM (status \(status))")
    }
}
