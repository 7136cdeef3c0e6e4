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

    /// New connections arriving all through a SIGTERM: each is answered, or refused before it is
    /// established — none is reset (the listener's accept queue is drained before it closes).
    @Test func newConnectionsRacingSIGTERMAreAnsweredOrRefusedNeverReset() async throws {
        let origin = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try catJPEG.write(to: origin.child("cat.jpg"))
        let server = try await BlockingIOPool.shared.run {
            try ChildServer(arguments: ["--origin", origin.path, "--cache-dir", cache.path])
        }
        struct Counts { var answered = 0, refused = 0, reset = 0, other: [String] = [] }
        let counts = Locked(Counts())
        let port = server.port, pid = server.process.processIdentifier
        try await BlockingIOPool.shared.run {
            let group = DispatchGroup()
            for _ in 0..<16 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    // Bounded: until the server refuses (it has stopped listening), 10 s, or 5,000 tries.
                    let end = ContinuousClock.now + .seconds(10)
                    for _ in 0..<5_000 where ContinuousClock.now < end {
                        let socket: RawSocket
                        do { socket = try RawSocket(port: port) } catch let error as POSIXError where error.code == .ECONNREFUSED {
                            counts.withLock { $0.refused += 1 }
                            return
                        } catch {
                            counts.withLock { $0.other.append("connect: \(error)") }
                            return
                        }
                        socket.trySend("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        let answer = socket.read(until: nil, within: .seconds(10))
                        let answered = counts.withLock { counts -> Int in
                            switch answer.end {
                            case .closed where answer.text.hasSuffix("ok\n"): counts.answered += 1
                            case .reset: counts.reset += 1
                            default: counts.other.append("\(answer.end): \(answer.text.prefix(60))")
                            }
                            return counts.answered
                        }
                        // SIGTERM once traffic is flowing (by count, not by time).
                        if answered == 200 { kill(pid, SIGTERM) }
                    }
                }.start()
            }
            group.wait()
        }
        let result = counts.withLock { $0 }
        #expect(result.reset == 0, "\(result.reset) connections reset")
        #expect(result.answered >= 200 && result.refused > 0, "answered \(result.answered), refused \(result.refused)")
        #expect(result.other.isEmpty, "\(result.other.prefix(5))")
        let status = try await BlockingIOPool.shared.run { () -> Int32 in
            server.process.waitUntilExit()
            return server.process.terminationStatus
        }
        #expect(status == 0)
    }
}
