import EaselSupport
import EaselTestSupport
import Foundation
import HTTPTypes
import Testing

/// `easel serve --traces otlp` against a real OTLP/HTTP receiver (`scripts/otlp-receiver.py`,
/// which decodes what it is sent with OpenTelemetry's own message definitions): each answer is
/// a server span continuing the caller's W3C trace, the pipeline's stages are its children, and
/// a replayed (ready) answer is traced like any other. Without the option nothing is sent.
@Suite("easel serve's traces", .timeLimit(.minutes(2)))
struct TraceTests {
    /// One span as the receiver wrote it.
    struct Span: Decodable {
        var trace_id: String
        var span_id: String
        var parent_span_id: String
        var name: String
        var kind: Int
        var start: UInt64
        var end: UInt64
        var service: String?
        var attributes: [String: Attribute]
        func text(_ key: String) -> String? { if case .text(let value) = attributes[key] { value } else { nil } }
        func number(_ key: String) -> Int? { if case .number(let value) = attributes[key] { value } else { nil } }
    }

    enum Attribute: Decodable {
        case text(String), number(Int), other
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let value = try? container.decode(Int.self) { self = .number(value) }
            else if let value = try? container.decode(String.self) { self = .text(value) }
            else { self = .other }
        }
    }

    /// The receiver, started for one test; it stops when its standard input closes.
    final class Receiver: Sendable {
        let endpoint: String
        let spansFile: URL
        private let service: ScriptService

        init(in directory: TemporaryDirectory) throws {
            spansFile = directory.child("spans.jsonl")
            service = try ScriptService(script: "scripts/otlp-receiver.py", arguments: [spansFile.path],
                                        needs: "is opentelemetry-proto installed? run `make deps-test`")
            endpoint = try #require(service.announcement["endpoint"])
        }

        func spans() throws -> [Span] {
            guard let text = try? String(contentsOf: spansFile, encoding: .utf8) else { return [] }
            return try text.split(separator: "\n").map { try JSONDecoder().decode(Span.self, from: Data($0.utf8)) }
        }

        deinit { service.stop() }
    }

    /// Blocking: one request on its own connection; the whole answer as text.
    static func ask(_ port: Int, _ target: String, _ fields: [String] = []) throws -> String {
        let socket = try RawSocket(port: port)
        try socket.send("GET \(target) HTTP/1.1\r\nHost: x\r\n" + fields.map { $0 + "\r\n" }.joined() + "Connection: close\r\n\r\n")
        return socket.readUntilClosed(within: .seconds(30)).text
    }

    static func requestID(_ answer: String) -> String? {
        answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("x-request-id:") }
            .map { String($0.dropFirst("x-request-id:".count)).trimmingCharacters(in: .whitespaces) }
    }

    /// Starts `easel serve` on the samples with `flags`, asks `requests`, stops it (SIGTERM:
    /// the exporter sends what is left) and returns the answers.
    static func serve(_ flags: [String], origin: String? = nil, environment: [String: String] = [:],
                      _ requests: [(String, [String])]) async throws -> [String] {
        let cache = try TemporaryDirectory()
        let origin = origin ?? sampleURL("astronaut.jpg").deletingLastPathComponent().path
        let server = try await BlockingIOPool.shared.run {
            try ListeningProcess(executable: builtProduct("easel"),
                                 arguments: ["serve", "--port", "0", "--cache-dir", cache.path, "--origin", origin] + flags,
                                 environment: environment)
        }
        let port = server.port
        let answers = try await BlockingIOPool.shared.run { try requests.map { try ask(port, $0.0, $0.1) } }
        server.process.terminate()
        let exited = try await BlockingIOPool.shared.run { server.waitForExit(within: .seconds(30)) }
        #expect(exited && server.process.terminationStatus == 0)
        return answers
    }

    @Test func eachAnswerIsASpanWithThePipelinesStagesAsChildren() async throws {
        let work = try TemporaryDirectory()
        let receiver = try Receiver(in: work)
        let (cold, replayed) = ("0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736")
        let parent = "b7ad6b7169203331"
        // The source comes from a real HTTP origin, which records what it is sent.
        let origin = Origin()
        origin.serve("/astronaut.jpg", .file(try Data(contentsOf: sampleURL("astronaut.jpg")), headers: ["Content-Type": "image/jpeg"]))
        let collected = Locked<[String]>([])
        try await origin.run { base in
            let got = try await Self.serve(["--traces", "otlp", "--otlp-endpoint", receiver.endpoint], origin: base.absoluteString + "/", [
                ("/images/thumb/astronaut.jpg", ["traceparent: 00-\(cold)-\(parent)-01"]),
                ("/images/thumb/astronaut.jpg", ["traceparent: 00-\(replayed)-\(parent)-01"]),
                ("/images/thumb/astronaut.jpg?x=1", []),
                ("/images/thumb/no-such.jpg", []),
            ])
            collected.withLock { $0 = got }
        }
        let answers = collected.withLock { $0 }
        #expect(answers[0...2].allSatisfy { $0.hasPrefix("HTTP/1.1 200") } && answers[3].hasPrefix("HTTP/1.1 404"), "\(answers.map { $0.prefix(40) })")
        let spans = try receiver.spans()
        #expect(spans.allSatisfy { $0.service == "easel" })
        let servers = spans.filter { $0.kind == 2 }  // SPAN_KIND_SERVER
        #expect(servers.count == 4, "\(spans.map(\.name))")

        // The cold answer continues the caller's trace; its stages are its children, inside it.
        let first = try #require(servers.first { $0.trace_id == cold }, "\(servers.map(\.trace_id))")
        #expect(first.parent_span_id == parent && first.name == "GET images")
        #expect(first.text("http.route") == "images" && first.number("http.response.status_code") == 200)
        #expect(first.text("http.request.id") == Self.requestID(answers[0]))
        #expect(first.text("easel.tier") == "network" && first.text("url.path") == "/images/thumb/astronaut.jpg")
        #expect(first.text("http.response.header.content-type") == "image/jpeg" && (first.number("http.response.body.size") ?? 0) > 1000)
        let stages = spans.filter { $0.parent_span_id == first.span_id }
        let encode = try #require(stages.first { $0.name == "easel.encode" })
        #expect(encode.text("easel.format") == "jpeg" && encode.number("easel.bytes") == first.number("http.response.body.size"))
        #expect(stages.first { $0.name == "easel.decode" }?.text("easel.format") == "jpeg")
        #expect(Set(stages.map(\.name)).isSuperset(of: ["easel.fetch", "easel.decode", "easel.process", "easel.encode", "easel.cache.read"]),
                "\(stages.map(\.name))")
        for stage in stages {
            #expect(stage.trace_id == cold && stage.kind == (stage.name == "easel.fetch" ? 3 : 1))  // CLIENT, INTERNAL
            #expect(stage.start >= first.start && stage.start <= stage.end, "\(stage.name)")
        }
        // What the answer waited for ended inside it; what follows the answer (the family's
        // other formats, copies to the tiers) may end after it, still in its trace.
        let late = stages.filter { $0.end > first.end }.map(\.name)
        #expect(!late.contains { ["easel.fetch", "easel.decode", "easel.encode"].contains($0) }, "\(late)")
        #expect(stages.contains { $0.name == "easel.cache.read" && $0.text("easel.cache.result") == "miss" && $0.text("easel.entry") == "encoded" })
        #expect(spans.contains { $0.name == "easel.cache.write" && $0.trace_id == cold && $0.text("easel.store") == "disk" && ($0.number("easel.bytes") ?? 0) > 0 })

        // The origin was asked once, by the HTTP client's span within the fetch span: the trace
        // goes on to the origin.
        let fetch = try #require(stages.first { $0.name == "easel.fetch" })
        #expect(fetch.text("server.address") == "127.0.0.1" && (fetch.number("easel.bytes") ?? 0) > 1000)
        let asked = origin.all.filter { $0.path == "/astronaut.jpg" }
        #expect(asked.count == 1)
        let traceparent = try #require(asked.first?.headers[values: HTTPField.Name("traceparent")!], "\(asked)")
        #expect(traceparent.count == 1, "one traceparent: \(traceparent)")
        let request = try #require(spans.first { $0.parent_span_id == fetch.span_id && $0.kind == 3 }, "the HTTP client's span")
        #expect(traceparent.first == "00-\(cold)-\(request.span_id)-01")

        // The repeat is answered from memory (a replay of the filed answer): still its caller's
        // trace, its own request ID, and no stage.
        let second = try #require(servers.first { $0.trace_id == replayed })
        #expect(second.parent_span_id == parent && second.name == "GET images" && second.text("easel.tier") == "encodedMemory")
        #expect(second.attributes["easel.replayed"] != nil, "answered by the ready-answer handler")
        #expect(first.attributes["easel.replayed"] == nil)
        #expect(second.text("http.request.id") == Self.requestID(answers[1]) && second.number("http.response.status_code") == 200)
        #expect(second.text("http.response.header.content-type") == "image/jpeg"
                && second.number("http.response.body.size") == first.number("http.response.body.size"))
        #expect(!spans.contains { $0.parent_span_id == second.span_id })

        // No traceparent: a trace of its own. A miss: its status.
        let roots = servers.filter { $0.parent_span_id.isEmpty }
        #expect(roots.count == 2 && Set(roots.map(\.trace_id)).count == 2 && !roots.contains { [cold, replayed].contains($0.trace_id) })
        #expect(roots.contains { $0.number("http.response.status_code") == 404 && $0.text("url.path") == "/images/thumb/no-such.jpg" })
        #expect(roots.contains { $0.text("url.query") == "x=1" })
    }

    /// An S3 origin (an S3-compatible endpoint on loopback that records what it is sent: the
    /// request path is what S3's path-style addressing asks for) gets the trace as an HTTP one does.
    @Test func anS3OriginGetsTheTraceToo() async throws {
        let work = try TemporaryDirectory()
        let receiver = try Receiver(in: work)
        let trace = "5bf92f3577b34da6a3ce929d0e0e4736", parent = "c7ad6b7169203331"
        let origin = Origin()
        origin.serve("/photos/originals/astronaut.jpg",
                     .file(try Data(contentsOf: sampleURL("astronaut.jpg")), headers: ["Content-Type": "image/jpeg", "ETag": "\"a1\""]))
        let collected = Locked<[String]>([])
        try await origin.run { base in
            let got = try await Self.serve(["--traces", "otlp", "--otlp-endpoint", receiver.endpoint], origin: "s3://photos/originals/",
                                           environment: ["EASEL_S3_ENDPOINT": base.absoluteString, "AWS_ACCESS_KEY_ID": "test",
                                                         "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"],
                                           [("/images/thumb/astronaut.jpg", ["traceparent: 00-\(trace)-\(parent)-01"])])
            collected.withLock { $0 = got }
        }
        let answers = collected.withLock { $0 }
        #expect(answers.first?.hasPrefix("HTTP/1.1 200") == true, "\(answers.map { $0.prefix(60) })")
        let asked = origin.all.filter { $0.path == "/photos/originals/astronaut.jpg" }
        #expect(asked.count == 1, "\(origin.all.map(\.path))")
        #expect(asked.first?.headers[.authorization]?.hasPrefix("AWS4-HMAC-SHA256") == true, "a signed S3 request")
        let traceparent = try #require(asked.first?.headers[values: HTTPField.Name("traceparent")!])
        #expect(traceparent.count == 1, "\(traceparent)")
        let spans = try receiver.spans()
        let fetch = try #require(spans.first { $0.name == "easel.fetch" && $0.trace_id == trace }, "\(spans.map(\.name))")
        let request = try #require(spans.first { $0.parent_span_id == fetch.span_id && $0.kind == 3 }, "the HTTP client's span")
        #expect(traceparent.first == "00-\(trace)-\(request.span_id)-01")
    }

    @Test func nothingIsSentUnlessTracesAreAskedFor() async throws {
        let work = try TemporaryDirectory()
        let receiver = try Receiver(in: work)
        // The endpoint alone turns traces on; `--traces none` keeps them off.
        _ = try await Self.serve(["--traces", "none", "--otlp-endpoint", receiver.endpoint],
                                 [("/images/thumb/astronaut.jpg", ["traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"])])
        #expect(try receiver.spans().isEmpty)
        _ = try await Self.serve(["--otlp-endpoint", receiver.endpoint], [("/health", [])])
        #expect(try receiver.spans().map(\.name) == ["GET health"])
    }
}
