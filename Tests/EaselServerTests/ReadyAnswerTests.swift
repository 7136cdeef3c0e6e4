#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

/// Runs `body` against `server` on a real loopback socket served by one event loop, so that
/// every connection reads and fills the same shard of ready answers (named as `easel serve` is).
func liveOnOneLoop(_ server: TestServer, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let app = Application(router: server.server.router(), server: server.server.httpServer(),
                          configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "easel"), eventLoopGroupProvider: .shared(group))
    do {
        try await app.test(.live) { client in try await body(client.port!) }
    } catch {
        await server.server.shutdown()
        try? await group.shutdownGracefully()
        throw error
    }
    await server.server.shutdown()
    try await group.shutdownGracefully()
}

/// Threads for the blocking client sockets of these tests: never the server's own I/O pool,
/// which a test waiting for an answer would otherwise keep from making it.
let wirePool = BlockingIOPool(threadCount: 12)

/// Runs `body` on one keep-alive connection to `server` (served by one event loop; its port given
/// for more), on a thread of `wirePool`.
func onOneConnection(_ server: TestServer, _ body: @escaping @Sendable (RawSocket, inout WireReader, _ port: Int) throws -> Void) async throws {
    try await liveOnOneLoop(server) { port in
        try await wirePool.run {
            let socket = try RawSocket(port: port)
            var reader = WireReader(socket)
            try body(socket, &reader, port)
        }
    }
}

/// One HTTP/1.1 answer as it came over the wire: header fields in their order.
struct WireAnswer: Sendable {
    var status: Int
    var fields: [(name: String, value: String)]
    var body: [UInt8]

    func field(_ name: String) -> String? { fields.first { $0.name.lowercased() == name.lowercased() }?.value }
    /// The fields with `Date`'s value left out (it is made anew for each answer).
    /// The fields in their order, without the values that differ from answer to answer by design:
    /// `Date` and `X-Request-ID` (each answer's own).
    var fieldsWithoutDateValue: [String] {
        fields.map { ["date", "x-request-id"].contains($0.name.lowercased()) ? $0.name.lowercased() : "\($0.name.lowercased()): \($0.value)" }
    }
}

/// Reads answers one by one from a keep-alive connection (blocking: use it from `BlockingIOPool`).
struct WireReader {
    let socket: RawSocket
    private var pending: [UInt8] = []

    init(_ socket: RawSocket) { self.socket = socket }

    private mutating func fill(_ deadline: ContinuousClock.Instant) throws {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw POSIXError(.ECONNRESET) }
            pending += buffer[..<count]
            return
        }
        throw POSIXError(.ETIMEDOUT)
    }

    /// The next answer; `head` for an answer to HEAD (no body whatever Content-Length says).
    mutating func next(head: Bool = false, within limit: Duration = .seconds(30)) throws -> WireAnswer {
        let deadline = ContinuousClock.now + limit
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var end: Int?
        while end == nil {
            if pending.count >= 4 {
                end = (0...(pending.count - 4)).first { pending[$0..<$0 + 4].elementsEqual(separator) }
            }
            if end == nil { try fill(deadline) }
        }
        let headText = String(decoding: pending[..<end!], as: UTF8.self)
        pending.removeFirst(end! + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let status = Int(lines.removeFirst().split(separator: " ")[1]) ?? 0
        let fields = lines.map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var answer = WireAnswer(status: status, fields: fields, body: [])
        let length = head || status == 304 ? 0 : Int(answer.field("content-length") ?? "0") ?? 0
        while pending.count < length { try fill(deadline) }
        answer.body = Array(pending[..<length])
        pending.removeFirst(length)
        return answer
    }
}

func wireRequest(_ method: String = "GET", _ target: String, _ fields: [String] = []) -> String {
    "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
}

@Suite struct ReadyAnswerTests {
    @Test func aRepeatRequestIsAnsweredInThePipelineWithTheSameHeadersAndBytes() async throws {
        let server = try TestServer()
        let ready = server.server.readyAnswers
        try await onOneConnection(server) { socket, reader, port in
            var gets: [WireAnswer] = []
            for _ in 0..<3 {
                try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
                gets.append(try reader.next())
            }
            #expect(ready.replayCount == 2, "the second and third GET were replayed")
            #expect(gets.allSatisfy { $0.status == 200 && $0.body == gets[0].body && $0.fieldsWithoutDateValue == gets[0].fieldsWithoutDateValue },
                    "\(gets.map(\.fieldsWithoutDateValue))")
            #expect(gets[0].field("content-type") == "image/jpeg" && gets[0].field("x-content-type-options") == "nosniff")
            #expect(gets[0].field("server") == "easel" && gets[0].field("vary") == "Accept")
            for answer in gets {
                #expect(answer.field("easel-ready-answer") == nil, "the route's mark never leaves the server")
                let date = try #require(answer.field("date"))
                #expect(date.range(of: #"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$"#,
                                   options: .regularExpression) != nil, "\(date)")
            }
            // HEAD is its own answer: the same fields, no body.
            try socket.send(wireRequest("HEAD", "/images/thumb/cat.jpg"))
            let firstHead = try reader.next(head: true)
            try socket.send(wireRequest("HEAD", "/images/thumb/cat.jpg"))
            let secondHead = try reader.next(head: true)
            #expect(ready.replayCount == 3)
            #expect(firstHead.fieldsWithoutDateValue == secondHead.fieldsWithoutDateValue)
            #expect(secondHead.field("content-length") == gets[0].field("content-length"))
            // Another Accept is another answer (negotiated by the route, then replayed).
            for _ in 0..<2 {
                try socket.send(wireRequest("GET", "/images/thumb/cat.jpg", ["Accept: image/webp,*/*"]))
                let webp = try reader.next()
                #expect(webp.field("content-type") == "image/webp")
            }
            #expect(ready.replayCount == 4)
            // Replays are counted like the route's answers.
            try socket.send(wireRequest("GET", "/metrics"))
            let metrics = String(decoding: try reader.next().body, as: UTF8.self)
            #expect(metrics.contains(#"easel_http_requests_total{route="images",status="200"} 7"#), "\(metrics)")
            #expect(metrics.contains(#"easel_pipeline_requests_total{tier="encodedMemory"} 5"#), "\(metrics)")
            #expect(metrics.contains(#"easel_http_request_duration_seconds_count{route="images"} 7"#))
        }
    }

    /// The index is keyed by the `Accept` header's decision class, not its spelling: another
    /// spelling of the same preferences is replayed; preferences that decide another answer are not.
    @Test func anotherSpellingOfTheSameAcceptIsTheSameReadyAnswer() async throws {
        let server = try TestServer()
        let ready = server.server.readyAnswers
        try await onOneConnection(server) { socket, reader, port in
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg", ["Accept: image/avif,image/webp,*/*"]))
            let first = try reader.next()
            #expect(first.field("content-type") == "image/avif" && ready.replayCount == 0)
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg", ["Accept: image/webp;q=1.0, IMAGE/AVIF, */*;q=1"]))
            let respelt = try reader.next()
            #expect(ready.replayCount == 1, "the same class: replayed")
            #expect(respelt.body == first.body && respelt.fieldsWithoutDateValue == first.fieldsWithoutDateValue)
            // No AVIF: another class, answered by the route (WebP), then replayed under its own.
            for _ in 0..<2 {
                try socket.send(wireRequest("GET", "/images/thumb/cat.jpg", ["Accept: image/avif;q=0,image/webp,*/*"]))
                #expect(try reader.next().field("content-type") == "image/webp")
            }
            #expect(ready.replayCount == 2)
        }
    }

    @Test func aPurgeRemovesTheAnswersMadeFromTheSource() async throws {
        let server = try TestServer { $0.adminToken = "ready-answers-admin-0123" }
        let ready = server.server.readyAnswers
        let other = try Data(contentsOf: sampleURL("astronaut.jpg"))
        try await onOneConnection(server) { socket, reader, port in
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            let before = try reader.next()
            try socket.send(wireRequest("GET", "/images/thumb/sub%20dir/cat%202.jpg"))
            let untouched = try reader.next()
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            #expect(try reader.next().field("etag") == before.field("etag"))
            #expect(ready.replayCount == 1)
            // The file changes: the memory tier's answer (fresh for an hour, as for any file
            // origin) stands until the source is purged, and so does the ready one.
            try other.write(to: server.origin.child("cat.jpg"))
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            #expect(try reader.next().field("etag") == before.field("etag"))
            try socket.send(wireRequest("DELETE", "/images/cat.jpg", ["Authorization: Bearer ready-answers-admin-0123"]))
            #expect(try reader.next().status == 200)
            // The index holds no bytes: its entry for cat.jpg now points at nothing in the memory
            // tier, where only the other source's answer is left.
            #expect(server.server.pipeline.encodedMemoryCount == 1, "only the other source's answer is left")
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            let after = try reader.next()
            #expect(after.status == 200 && after.field("etag") != before.field("etag") && after.body != before.body)
            #expect(ready.replayCount == 2, "made again after the purge, not replayed")
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            #expect(try reader.next().field("etag") == after.field("etag"))
            try socket.send(wireRequest("GET", "/images/thumb/sub%20dir/cat%202.jpg"))
            #expect(try reader.next().field("etag") == untouched.field("etag"))
            #expect(ready.replayCount == 4)
        }
    }

    @Test func aWatermarkPurgeRemovesTheAnswersThatUseIt() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true; $0.adminToken = "ready-answers-admin-0123" }
        try solidMark([0, 0, 255]).write(to: server.origin.child("mark.png"))
        let ready = server.server.readyAnswers
        try await onOneConnection(server) { socket, reader, port in
            let url = "/thumbor/unsafe/fit-in/100x100/filters:watermark(mark.png,-0,-0,0):format(png)/cat.jpg"
            func corner() throws -> [UInt8] {
                try socket.send(wireRequest("GET", url))
                let image = try ImageDecoder.decode(Data(try reader.next().body))
                return image.pixel(x: image.width - 1, y: image.height - 1)
            }
            #expect(try corner() == [0, 0, 255, 255])
            #expect(try corner() == [0, 0, 255, 255])
            #expect(ready.replayCount == 1)
            #expect(server.server.pipeline.encodedMemoryCount == 1)
            try solidMark([255, 0, 0]).write(to: server.origin.child("mark.png"))
            try socket.send(wireRequest("DELETE", "/images/mark.png", ["Authorization: Bearer ready-answers-admin-0123"]))
            #expect(try reader.next().status == 200)
            // The pipeline's purge index knows the answer was made with the mark: it is gone
            // from the encoded memory tier too, not only from the ready answers.
            #expect(server.server.pipeline.encodedMemoryCount == 0)
            #expect(try corner() == [255, 0, 0, 255], "the answer made with the old mark is gone")
            #expect(try corner() == [255, 0, 0, 255])
            #expect(ready.replayCount == 2)
        }
    }

    @Test func conditionalRequestsAndRequestsWithABodyGoTheNormalWay() async throws {
        let server = try TestServer()
        let ready = server.server.readyAnswers
        try await onOneConnection(server) { socket, reader, port in
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            let first = try reader.next()
            let etag = try #require(first.field("etag"))
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg", ["If-None-Match: \(etag)"]))
            let revalidated = try reader.next()
            #expect(revalidated.status == 304 && revalidated.body.isEmpty)
            try socket.send("GET /images/thumb/cat.jpg HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
            let withBody = try reader.next()
            #expect(withBody.status == 200 && withBody.body == first.body)
            #expect(ready.replayCount == 0)
            // A plain request: replayed (the first GET's answer was indexed).
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            #expect(try reader.next().body == first.body)
            #expect(ready.replayCount == 1)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let server = try TestServer()
        let ready = server.server.readyAnswers
        try await onOneConnection(server) { socket, reader, port in
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            let thumb = try reader.next()
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            _ = try reader.next()
            #expect(ready.replayCount == 1)
            // Ready (replayed: nothing before it), one still to be made (the router), ready
            // again (behind it: the router too), the second again: four answers in the order asked.
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg") + wireRequest("GET", "/images/small/cat.jpg")
                            + wireRequest("GET", "/images/thumb/cat.jpg") + wireRequest("HEAD", "/images/small/cat.jpg"))
            let thumbFirst = try reader.next()
            let small = try reader.next()
            let thumbAgain = try reader.next()
            let smallHead = try reader.next(head: true)
            #expect(ready.replayCount == 2, "only the first of the four was replayed")
            #expect(thumbFirst.body == thumb.body && thumbFirst.field("etag") == thumb.field("etag"))
            #expect(small.status == 200 && small.body != thumb.body && small.field("etag") != thumb.field("etag"))
            #expect(thumbAgain.body == thumb.body && thumbAgain.field("etag") == thumb.field("etag"))
            #expect(smallHead.field("etag") == small.field("etag"))
        }
    }

    @Test func connectionCloseAndHTTP10ApplyToReplays() async throws {
        let server = try TestServer()
        let ready = server.server.readyAnswers
        try await onOneConnection(server) { socket, reader, port in
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            let first = try reader.next()
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg", ["Connection: close"]))
            let closing = socket.readUntilClosed(within: .seconds(10))
            #expect(ready.replayCount == 1)
            #expect(closing.closed && closing.text.lowercased().contains("connection: close"), "\(closing.text.prefix(400))")
            // HTTP/1.0 without keep-alive: the answer, then the server closes.
            let old = try RawSocket(port: port)
            try old.send("GET /images/thumb/cat.jpg HTTP/1.0\r\n\r\n")
            let answer = old.readUntilClosed(within: .seconds(10))
            #expect(ready.replayCount == 2)
            #expect(answer.closed && answer.text.lowercased().contains("connection: close"))
            #expect(answer.text.contains(" 200 OK\r\n") && answer.text.contains(first.field("etag")!))
            // HTTP/1.0 with keep-alive: replayed as the framework answers (HTTP/1.1, no
            // `Connection` field), and the connection stays open for the next one.
            let kept = try RawSocket(port: port)
            var keptReader = WireReader(kept)
            for _ in 0..<2 {
                try kept.send("GET /images/thumb/cat.jpg HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                let again = try keptReader.next()
                #expect(again.status == 200 && again.field("etag") == first.field("etag") && again.field("connection") == nil)
            }
            #expect(ready.replayCount == 4)
        }
    }

    /// Replays reach no handler after the connection guard, so the guard keeps the idle
    /// timeout: a connection busy with replayed answers for longer than it is never idle, and
    /// one that goes quiet after them is closed.
    @Test func aConnectionAnsweredByReplaysIsNotIdle() async throws {
        let server = try TestServer { $0.idleTimeout = 1 }
        let ready = server.server.readyAnswers
        try await onOneConnection(server) { socket, reader, port in
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            #expect(try reader.next().status == 200)
            // Eight replays, 250 ms apart: 2 s in all, twice the idle timeout.
            for index in 0..<8 {
                try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
                #expect(try reader.next().status == 200, "replay \(index)")
                #expect(!socket.readUntilClosed(within: .milliseconds(250)).closed, "closed after replay \(index)")
            }
            #expect(ready.replayCount == 8)
            #expect(socket.readUntilClosed(within: .seconds(10)).closed, "quiet for the idle timeout: closed")
        }
    }

    @Test func answersWhoseHeadersDependOnTheTimeAreNeverKept() async throws {
        let server = try TestServer { $0.signingKeys = [keyA]; $0.signingSalt = salt }
        let ready = server.server.readyAnswers
        let expires = Int64(Date().timeIntervalSince1970) + 3600
        let url = try SignedURLs.native(path: "/images/w=120,h=80/cat.jpg", keyHex: keyA, saltHex: salt, expires: expires)
        try await onOneConnection(server) { socket, reader, port in
            for _ in 0..<3 {
                // max-age is the lifetime left when the answer was made: between what was left
                // when the request went out and what is left once it is read (a second's
                // rounding either way), however slowly a loaded machine runs the test.
                let sent = Int64(Date().timeIntervalSince1970)
                try socket.send(wireRequest("GET", url))
                let answer = try reader.next()
                let read = Int64(Date().timeIntervalSince1970)
                #expect(answer.status == 200)
                let maxAge = Int64(answer.field("cache-control")!.split(separator: "=").last!)!
                #expect(maxAge <= expires - sent + 1 && maxAge >= expires - read - 1, "max-age \(maxAge), \(expires - read)…\(expires - sent) left")
            }
            #expect(ready.replayCount == 0 && ready.usage.answers == 0)
        }
    }

    @Test func aLimitOfZeroTurnsReadyAnswersOff() async throws {
        let server = try TestServer { $0.readyAnswerLimit = 0 }
        let ready = server.server.readyAnswers
        #expect(!ready.isEnabled)
        try await onOneConnection(server) { socket, reader, port in
            for _ in 0..<3 {
                try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
                let answer = try reader.next()
                #expect(answer.status == 200)
            }
            #expect(ready.replayCount == 0)
        }
    }

    @Test func nothingPrivateTravelsBetweenTheRouteAndTheHandler() async throws {
        let server = try TestServer()
        try await onOneConnection(server) { socket, reader, port in
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            let first = try reader.next()
            try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
            let replayed = try reader.next()
            // Every field the client gets is one the route or the middleware set (the request's
            // own X-Request-ID included; the cache tag every answer carries) or the framework adds.
            let names = Set(first.fields.map { $0.name.lowercased() })
            #expect(names == ["content-type", "etag", "cache-control", "vary", "content-length", "x-content-type-options", "x-request-id",
                              "date", "server", "surrogate-key"],
                    "\(names)")
            #expect(replayed.fieldsWithoutDateValue == first.fieldsWithoutDateValue && replayed.body == first.body)
            #expect(server.server.readyAnswers.replayCount == 1)
        }
    }

    @Test func answersTheMemoryTierMayNotKeepAreNeverReplayed() async throws {
        let origin = Origin()
        origin.serve("/private.jpg", .file(catJPEG, headers: ["Cache-Control": "no-store"]))
        try await origin.run { base in
            let server = try TestServer { $0.origin = base.absoluteString }
            let ready = server.server.readyAnswers
            try await onOneConnection(server) { socket, reader, port in
                for _ in 0..<3 {
                    try socket.send(wireRequest("GET", "/images/thumb/private.jpg"))
                    #expect(try reader.next().status == 200)
                }
                #expect(ready.replayCount == 0 && ready.usage.answers == 0)
            }
            #expect(origin.count("/private.jpg") == 3, "fetched for every request, as the origin asked")
        }
    }

    @Test func aGetAnnouncingABodyIsAnsweredWithoutWaitingForIt() async throws {
        let server = try TestServer()
        try await onOneConnection(server) { socket, reader, port in
            try socket.send("GET /images/thumb/cat.jpg HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
            // The body is never sent: any answer proves it was not awaited. The bound (the
            // suite's usual 30 s) only keeps a broken server from hanging the test; a cold
            // decode shares the process's two decoding threads with every other suite.
            #expect(try reader.next().status == 200, "answered before the body was sent")
        }
    }

    // MARK: The table alone

    static func answer(_ bytes: Int) -> ByteBuffer { ByteBuffer(repeating: 7, count: bytes) }

    @Test func theIndexKeepsToItsBudgetOldestFirst() throws {
        let answers = ReadyAnswers(limit: 10_000, loops: 1) { _, _ in Self.answer(10) }
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let shard = answers.shard(for: loop)
        func file(_ target: String, fields: HTTPHeaders = HTTPHeaders([("Content-Type", "image/jpeg"), ("ETag", "\"e\"")])) {
            let key = ReadyAnswers.Key(head: false, target: target, accept: nil)
            answers.offer(key, .init(memoryKey: "m", etag: "\"e\""), on: loop)
            answers.file(key, headers: fields, route: "images", in: shard)
        }
        for index in 0..<100 {
            file("/images/thumb/\(index).jpg")
            #expect(answers.usage.bytes <= 10_000)
        }
        #expect(answers.usage.answers < 100 && answers.usage.answers > 10)
        #expect(answers.replay(.init(head: false, target: "/images/thumb/0.jpg", accept: nil), from: shard) == nil, "the oldest went first")
        let newest = try #require(answers.replay(.init(head: false, target: "/images/thumb/99.jpg", accept: nil), from: shard))
        #expect(newest.body.readableBytes == 10 && newest.answer.route == "images", "the body is the memory tier's")
        let second = Int(Date().timeIntervalSince1970)
        #expect([HTTPDate.format(time_t(second)), HTTPDate.format(time_t(second - 1))].contains(newest.answer.fields.first { $0.0.lowercased() == "date" }?.1 ?? ""), "a Date for now")
        // Filing one key again and again leaves no trail of stale pairs behind.
        for _ in 0..<5_000 { file("/again") }
        #expect(shard.state.withLock { $0.order.count - $0.orderStart } <= 2 * shard.state.withLock { $0.answers.count } + 65)
        // Not offered by the route, or without an ETag: never filed.
        answers.file(.init(head: false, target: "/unoffered", accept: nil), headers: HTTPHeaders([("ETag", "\"e\"")]), route: nil, in: shard)
        #expect(answers.replay(.init(head: false, target: "/unoffered", accept: nil), from: shard) == nil)
        file("/no-etag", fields: HTTPHeaders([("Content-Type", "image/jpeg")]))
        #expect(answers.replay(.init(head: false, target: "/no-etag", accept: nil), from: shard) == nil)
        // Fields of other bytes than the offered variant's (another ETag): not filed.
        file("/other-bytes", fields: HTTPHeaders([("ETag", "\"x\"")]))
        // A closing answer is no template for a kept connection: not filed.
        file("/closing", fields: HTTPHeaders([("ETag", "\"e\""), ("Connection", "close")]))
        #expect(answers.replay(.init(head: false, target: "/closing", accept: nil), from: shard) == nil)
        #expect(answers.replay(.init(head: false, target: "/other-bytes", accept: nil), from: shard) == nil)
        // Withdrawn by the route: not filed.
        let withdrawn = ReadyAnswers.Key(head: false, target: "/withdrawn", accept: nil)
        answers.offer(withdrawn, .init(memoryKey: "m", etag: "\"e\""), on: loop)
        answers.withdraw(withdrawn, on: loop)
        answers.file(withdrawn, headers: HTTPHeaders([("ETag", "\"e\"")]), route: nil, in: shard)
        #expect(answers.replay(withdrawn, from: shard) == nil)
    }

    @Test func anAnswerGoesWithItsMemoryTierEntry() throws {
        let current = Atomic<Bool>(true)
        let answers = ReadyAnswers(limit: 1 << 20, loops: 1) { key, etag in
            key == "m" && etag == "\"e\"" && current.load(ordering: .relaxed) ? Self.answer(10) : nil
        }
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let shard = answers.shard(for: loop)
        let key = ReadyAnswers.Key(head: false, target: "/images/thumb/a.jpg", accept: nil)
        answers.offer(key, .init(memoryKey: "m", etag: "\"e\""), on: loop)
        answers.file(key, headers: HTTPHeaders([("ETag", "\"e\"")]), route: nil, in: shard)
        #expect(answers.replay(key, from: shard) != nil)
        current.store(false, ordering: .relaxed)  // expired, evicted, replaced or purged in the tier
        #expect(answers.replay(key, from: shard) == nil && answers.usage.answers == 0, "removed with it")
        current.store(true, ordering: .relaxed)
        #expect(answers.replay(key, from: shard) == nil, "not back by itself")
    }

    /// The handler reads NIO's request head, the route the framework's conversion of it: both
    /// give the same key (or none), or an offer would never be filed.
    @Test func theHandlersKeyIsTheRoutesKey() throws {
        func head(_ uri: String, _ headers: [(String, String)] = [], method: NIOHTTP1.HTTPMethod = .GET,
                  version: HTTPVersion = .http1_1) -> HTTPRequestHead {
            HTTPRequestHead(version: version, method: method, uri: uri, headers: HTTPHeaders([("Host", "example.com")] + headers))
        }
        let heads = [
            head("/images/thumb/cat.jpg"),
            head("/images/thumb/cat.jpg?s=1", method: .HEAD),
            head("http://example.com/images/thumb/cat.jpg?x=1"),
            head("/images/thumb/cat.jpg", [("Accept", "image/avif"), ("accept", "image/webp, */*")]),
            head("/images/thumb/cat.jpg", [("IF-NONE-MATCH", "\"x\"")]),
            head("/images/thumb/cat.jpg", [("Content-Length", "0")]),
            head("/images/thumb/cat.jpg", [("Content-Length", "5")]),
            head("/images/thumb/cat.jpg", [("Range", "bytes=0-1")]),
            head("/images/thumb/cat.jpg", method: .POST),
            head("*"),
            head("/images/thumb/cat.jpg", [("Accept", String(repeating: "a", count: 2000))]),
            head("/images/thumb/cat.jpg", version: .http1_0),
        ]
        for request in heads {
            let routeKey = ReadyAnswers.routeView(request).flatMap { ReadyAnswers.Key($0) }
            #expect(ReadyAnswers.Key(request) == routeKey, "\(request)")
        }
        #expect(ReadyAnswers.Key(heads[2])?.target == "/images/thumb/cat.jpg?x=1", "absolute form: the path, as the route sees it")
        #expect(ReadyAnswers.Key(heads[3])?.accept == "image/avif, image/webp, */*")
    }

    @Test func keysReadWhatTheyWrite() throws {
        var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/images/thumb/cat.jpg?s=1")
        #expect(ReadyAnswers.Key(request)?.target == "/images/thumb/cat.jpg?s=1")
        request.headerFields[.ifNoneMatch] = "\"x\""
        #expect(ReadyAnswers.Key(request) == nil)
        #expect(ReadyAnswers.Key(HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/images/thumb/cat.jpg")) == nil)
        #expect(ReadyAnswers.Key(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "http://host/images/thumb/cat.jpg")) == nil)
        #expect(ReadyAnswers.Key(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/" + String(repeating: "a", count: 3000))) == nil)
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}
