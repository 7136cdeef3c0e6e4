import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// SIGTERM under traffic: the listener stops, every connection ends with an answer, a clean FIN
/// or a refusal before it was established — never a reset a client would report as "connection
/// reset by peer". Blocking waits run on threads of their own, each bounded.
@Suite("easel serve shuts down without resetting connections", .timeLimit(.minutes(3)))
struct ShutdownTests {
    static func start() async throws -> (ChildServer, TemporaryDirectory, TemporaryDirectory) {
        let origin = try TemporaryDirectory(), cache = try TemporaryDirectory()
        try catJPEG.write(to: origin.child("cat.jpg"))
        let server = try await onOwnThread { try ChildServer(arguments: ["--origin", origin.path, "--cache-dir", cache.path]) }
        return (server, origin, cache)
    }

    /// Exits cleanly, within a bound (killed past it).
    static func expectCleanExit(_ server: ChildServer) async throws {
        let exited = try await onOwnThread { server.waitForExit(within: .seconds(60)) }
        #expect(exited, "the server exits after SIGTERM")
        if exited { #expect(server.process.terminationStatus == 0, "exit status \(server.process.terminationStatus)") }
    }

    @Test func keepAliveConnectionsRacingSIGTERMGetAnAnswerOrACleanClose() async throws {
        let (server, _, _) = try await Self.start()
        let outcomes = try await onOwnThread { () throws -> [(text: String, end: RawSocket.End)] in
            // Keep-alive connections, each with one answer behind it: idle when SIGTERM comes,
            // and a third of them with a request in progress.
            var sockets: [RawSocket] = []
            for _ in 0..<24 {
                let socket = try RawSocket(port: server.port)
                try socket.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                let first = socket.read(until: "\r\n\r\nok\n", within: .seconds(10))
                try #require(first.end == .marker, "the first answer: \(first.text)")
                sockets.append(socket)
            }
            for socket in sockets.prefix(8) { socket.trySend("GET /images/small/cat.jpg HTTP/1.1\r\nHost: x\r\n\r\n") }
            kill(server.process.processIdentifier, SIGTERM)
            // The others send their next request at once: it races the shutdown.
            for socket in sockets.dropFirst(8) { socket.trySend("GET /health HTTP/1.1\r\nHost: x\r\n\r\n") }
            return sockets.map { $0.read(until: nil, within: .seconds(4)) }
        }
        for (index, outcome) in outcomes.enumerated() {
            #expect(outcome.end == .closed, "connection \(index) ended with \(outcome.end): \(outcome.text.prefix(200))")
            // An answer, if any, is whole: an image with its length, or the health text.
            if !outcome.text.isEmpty { #expect(outcome.text.hasPrefix("HTTP/1.1 "), "\(outcome.text.prefix(200))") }
            if index >= 8, !outcome.text.isEmpty { #expect(outcome.text.hasSuffix("\r\n\r\nok\n"), "\(outcome.text.prefix(200))") }
        }
        try await Self.expectCleanExit(server)
    }

    /// New connections arriving all through a SIGTERM: each is answered, closed cleanly before a
    /// request reached it, or refused before it was established — none is reset (the listener's
    /// accept queue is drained before it closes).
    @Test func newConnectionsRacingSIGTERMAreAnsweredOrRefusedNeverReset() async throws {
        let (server, _, _) = try await Self.start()
        struct Counts { var answered = 0, closed = 0, refused = 0, reset = 0, signalled = false, other: [String] = [] }
        let counts = Locked(Counts())
        let port = server.port, pid = server.process.processIdentifier
        try await onOwnThread {
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
                        let signal = counts.withLock { counts -> Bool in
                            switch answer.end {
                            case .closed where answer.text.hasSuffix("ok\n"): counts.answered += 1
                            case .closed where answer.text.isEmpty: counts.closed += 1
                            case .reset: counts.reset += 1
                            default: counts.other.append("\(answer.end): \(answer.text.prefix(60))")
                            }
                            // SIGTERM once traffic is flowing (by count, not by time), once.
                            guard counts.answered >= 200, !counts.signalled else { return false }
                            counts.signalled = true
                            return true
                        }
                        if signal { kill(pid, SIGTERM) }
                    }
                }.start()
            }
            group.wait()
        }
        let result = counts.withLock { $0 }
        #expect(result.reset == 0, "\(result.reset) connections reset")
        #expect(result.answered >= 200 && result.refused > 0, "answered \(result.answered), refused \(result.refused)")
        #expect(result.other.isEmpty, "\(result.other.prefix(5))")
        try await Self.expectCleanExit(server)
    }
}
