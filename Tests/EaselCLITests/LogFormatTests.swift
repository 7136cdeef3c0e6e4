import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// `easel serve --log-format json --access-log` as its own process: every line it writes to
/// standard error is one JSON object, and each answer's access line carries the answer's
/// X-Request-ID (the client's when sent, a new one otherwise), route, status and duration.
@Suite("easel serve's JSON logs", .timeLimit(.minutes(2)))
struct LogFormatTests {
    @Test func everyLineIsOneJSONObjectAndAnswersCarryTheirRequestID() async throws {
        let work = try TemporaryDirectory(), cache = try TemporaryDirectory()
        let logURL = work.child("stderr.log")
        #expect(FileManager.default.createFile(atPath: logURL.path, contents: nil))
        let log = try FileHandle(forWritingTo: logURL)
        let origin = sampleURL("astronaut.jpg").deletingLastPathComponent().path
        let server = try await BlockingIOPool.shared.run {
            try ListeningProcess(executable: builtProduct("easel"),
                                 arguments: ["serve", "--port", "0", "--cache-dir", cache.path, "--origin", origin,
                                             "--log-format", "json", "--access-log"],
                                 standardError: log)
        }
        let port = server.port
        @Sendable func ask(_ target: String, _ fields: [String] = []) throws -> String {
            let socket = try RawSocket(port: port)
            try socket.send("GET \(target) HTTP/1.1\r\nHost: x\r\n" + fields.map { $0 + "\r\n" }.joined() + "Connection: close\r\n\r\n")
            return socket.readUntilClosed(within: .seconds(30)).text
        }
        func requestID(_ answer: String) -> String? {
            answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("x-request-id:") }
                .map { String($0.dropFirst("x-request-id:".count)).trimmingCharacters(in: .whitespaces) }
        }
        let (health, missing, thumb) = try await BlockingIOPool.shared.run {
            (try ask("/health", ["X-Request-ID: cli-log-1"]), try ask("/images/thumb/no-such.jpg"),
             try ask("/images/thumb/astronaut.jpg", ["X-Request-ID: " + String(repeating: "x", count: 200)]))
        }
        #expect(health.hasPrefix("HTTP/1.1 200") && requestID(health) == "cli-log-1", "\(health)")
        #expect(missing.hasPrefix("HTTP/1.1 404"))
        let madeForMissing = try #require(requestID(missing), "\(missing)")
        #expect(madeForMissing.count == 32 && madeForMissing.allSatisfy(\.isHexDigit))
        let madeForThumb = try #require(requestID(thumb))
        #expect(thumb.hasPrefix("HTTP/1.1 200") && madeForThumb.count == 32, "a 200-character ID is replaced")
        server.process.terminate()
        let exited = try await BlockingIOPool.shared.run { server.waitForExit(within: .seconds(30)) }
        #expect(exited)
        try log.close()

        let lines = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n")
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let parsed = try #require(object, "not a JSON object: \(line)")
            #expect(parsed["time"] is String && parsed["level"] is String && parsed["message"] is String && parsed["label"] is String,
                    "\(line)")
            objects.append(parsed)
        }
        func access(_ id: String) -> [String: Any]? {
            objects.first { $0["message"] as? String == "answered" && $0["request_id"] as? String == id }
        }
        let healthLine = try #require(access("cli-log-1"), "\(lines)")
        #expect(healthLine["route"] as? String == "health" && healthLine["status"] as? Int == 200 && healthLine["path"] as? String == "/health")
        #expect((healthLine["duration_ms"] as? Double).map { $0 >= 0 } == true)
        let missingLine = try #require(access(madeForMissing))
        #expect(missingLine["route"] as? String == "images" && missingLine["status"] as? Int == 404)
        #expect(access(madeForThumb)?["status"] as? Int == 200)
    }
}
