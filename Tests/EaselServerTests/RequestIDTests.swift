@testable import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// X-Request-ID on every answer (routed, refused, replayed), and the JSON log lines that carry it.
@Suite struct RequestIDTests {
    static func isMade(_ id: String?) -> Bool { id.map { $0.count == 32 && $0.allSatisfy(\.isHexDigit) } ?? false }

    @Test func everyAnswerHasOneTheClientsWhenUsable() async throws {
        let server = try TestServer()
        try await server.test { client in
            let made = try await get(client, "/health")
            #expect(made.status == .ok && Self.isMade(made.headers[RequestID.field]))
            let other = try await get(client, "/health")
            #expect(other.headers[RequestID.field] != made.headers[RequestID.field], "a new ID per request")
            let given = try await get(client, "/health", headers: [RequestID.field: "edge-7f3a:42"])
            #expect(given.headers[RequestID.field] == "edge-7f3a:42")
            for bad in [String(repeating: "a", count: 129), "with space", "quote\"d", "back\\slash", ""] {
                let answer = try await get(client, "/health", headers: [RequestID.field: bad])
                #expect(Self.isMade(answer.headers[RequestID.field]), "\(bad) is replaced")
            }
            let refused = try await get(client, "/images/thumb/no-such.jpg", headers: [RequestID.field: "r-404"])
            #expect(refused.status == .notFound && refused.headers[RequestID.field] == "r-404")
            let bad = try await get(client, "/images/w=1,w=2/cat.jpg", headers: [RequestID.field: "r-400"])
            #expect(bad.status == .badRequest && bad.headers[RequestID.field] == "r-400")
        }
    }

    @Test func readyAnswersCarryTheirOwnRequestsID() async throws {
        let server = try TestServer()
        let ready = server.server.readyAnswers
        try await onOneConnection(server) { socket, reader, _ in
            var answers: [WireAnswer] = []
            for index in 0..<3 {
                try socket.send(wireRequest("GET", "/images/thumb/cat.jpg", ["X-Request-ID: ready-\(index)"]))
                answers.append(try reader.next())
            }
            for _ in 0..<2 {
                try socket.send(wireRequest("GET", "/images/thumb/cat.jpg"))
                answers.append(try reader.next())
            }
            #expect(ready.replayCount == 4, "every answer after the first was replayed")
            #expect(answers.prefix(3).map { $0.field("x-request-id") } == ["ready-0", "ready-1", "ready-2"])
            let made = answers.suffix(2).map { $0.field("x-request-id") }
            #expect(made.allSatisfy(Self.isMade) && made[0] != made[1], "\(made)")
            #expect(answers.filter { $0.field("x-request-id") == nil }.isEmpty)
        }
    }

    @Test func theFrameworksOwn400ForAnUnparseableRequestHasOneToo() async throws {
        let server = try TestServer()
        try await onOneConnection(server) { socket, reader, _ in
            try socket.send("GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n")
            let answer = try reader.next()
            #expect(answer.status == 400)
            #expect(Self.isMade(answer.field("x-request-id")), "\(answer.fields)")
        }
    }

    @Test func idsAreUniqueInAProcess() {
        let ids = (0..<10_000).map { _ in RequestID.make() }
        #expect(Set(ids).count == ids.count && ids.allSatisfy(Self.isMade))
    }

    @Test func jsonLinesAreObjectsWithTheRequestIDOfTheirTask() throws {
        let lines = Locked<[String]>([])
        var logger = Logger(label: "easel.test") { label in
            JSONLogHandler(label: label, metadataProvider: RequestID.metadataProvider) { line in lines.withLock { $0.append(line) } }
        }
        logger[metadataKey: "component"] = "tests"
        RequestID.$current.withValue("id-1") {
            logger.warning("a \"quoted\"\nline\twith\u{1} controls", metadata: [
                "status": .stringConvertible(404), "ratio": .stringConvertible(0.5), "flag": .stringConvertible(true),
                "bytes": .stringConvertible(UInt64(1) << 40), "nan": .stringConvertible(Double.nan), "delete": "a\u{7F}b",
                "path": "/images/123", "nested": ["list": ["a", "b"], "inner": ["k": "v"]],
            ])
        }
        logger.info("outside a request")
        let written = lines.withLock { $0 }
        #expect(written.count == 2 && written.allSatisfy { $0.hasSuffix("}\n") && !$0.dropLast().contains("\n") })
        let first = try #require(try JSONSerialization.jsonObject(with: Data(written[0].utf8)) as? [String: Any])
        #expect(first["message"] as? String == "a \"quoted\"\nline\twith\u{1} controls")
        #expect(first["level"] as? String == "warning" && first["label"] as? String == "easel.test")
        #expect(first["request_id"] as? String == "id-1" && first["component"] as? String == "tests")
        #expect(first["status"] as? Int == 404 && first["ratio"] as? Double == 0.5 && first["flag"] as? Bool == true)
        #expect(first["path"] as? String == "/images/123", "a string of digits stays a string")
        #expect((first["bytes"] as? NSNumber)?.int64Value == 1 << 40 && first["nan"] as? String == "nan" && first["delete"] as? String == "a\u{7F}b")
        #expect(first["source"] is String, "the module that logged")
        let nested = try #require(first["nested"] as? [String: Any])
        #expect(nested["list"] as? [String] == ["a", "b"] && (nested["inner"] as? [String: String]) == ["k": "v"])
        let time = try #require(first["time"] as? String)
        #expect(time.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil, "\(time)")
        let second = try #require(try JSONSerialization.jsonObject(with: Data(written[1].utf8)) as? [String: Any])
        #expect(second["request_id"] == nil && second["message"] as? String == "outside a request")
    }
}
