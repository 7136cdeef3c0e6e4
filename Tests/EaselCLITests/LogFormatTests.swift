import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// `easel serve --log-format json` as its own process: every line it writes to standard error is
/// one JSON object, and the access log (on by default) has a line per answer carrying the
/// answer's X-Request-ID (the client's when sent, a new one otherwise), route, status, bytes,
/// duration, the tier the image came from and, with traces on, the trace ID.
@Suite("easel serve's JSON logs", .timeLimit(.minutes(2)))
struct LogFormatTests {
    @Test func everyLineIsOneJSONObjectAndAnswersCarryTheirRequestID() async throws {
        let served = try await JSONLoggingServer()
        let port = served.server.port
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
        let again = try await BlockingIOPool.shared.run { try ask("/images/thumb/astronaut.jpg", ["X-Request-ID: cli-log-again"]) }
        #expect(again.hasPrefix("HTTP/1.1 200"))
        #expect(health.hasPrefix("HTTP/1.1 200") && requestID(health) == "cli-log-1", "\(health)")
        #expect(missing.hasPrefix("HTTP/1.1 404"))
        let madeForMissing = try #require(requestID(missing), "\(missing)")
        #expect(madeForMissing.count == 32 && madeForMissing.allSatisfy(\.isHexDigit))
        let madeForThumb = try #require(requestID(thumb))
        #expect(thumb.hasPrefix("HTTP/1.1 200") && madeForThumb.count == 32, "a 200-character ID is replaced")
        let lines = try await served.stop().split(separator: "\n")
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
        #expect(missingLine["tier"] == nil && missingLine["trace_id"] == nil, "no image, no traces")
        let thumbLine = try #require(access(madeForThumb))
        #expect(thumbLine["status"] as? Int == 200 && thumbLine["tier"] as? String == "file", "made from the origin's file: \(thumbLine)")
        let length = thumb.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
        #expect(length != nil && thumbLine["bytes"] as? Int == length, "the body's length: \(thumbLine)")
        let againLine = try #require(access("cli-log-again"))
        #expect(againLine["tier"] as? String == "encodedMemory" && againLine["bytes"] as? Int == length, "from memory: \(againLine)")
    }

    /// `--no-access-log` (and `EASEL_ACCESS_LOG=0`): answers write no line.
    @Test(arguments: [(["--no-access-log"], [String: String]()), ([], ["EASEL_ACCESS_LOG": "0"])])
    func theAccessLogTurnsOff(flags: [String], environment: [String: String]) async throws {
        let served = try await JSONLoggingServer(flags, environment: environment)
        let port = served.server.port
        let answers = try await BlockingIOPool.shared.run { () throws -> [String] in
            try ["/health", "/images/thumb/astronaut.jpg", "/no-such-route"].map { target in
                let socket = try RawSocket(port: port)
                try socket.send("GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                return socket.readUntilClosed(within: .seconds(30)).text
            }
        }
        #expect(answers[0].hasPrefix("HTTP/1.1 200") && answers[1].hasPrefix("HTTP/1.1 200"))
        let text = try await served.stop()
        #expect(!text.contains("\"message\":\"answered\""), "\(text.prefix(600))")
    }

    /// With traces on (an OTLP endpoint that refuses), JSON logs and the access log: every line on
    /// standard output and standard error is one JSON object, and none holds the request's
    /// `Authorization` or `Cookie`, the admin token, or a 30 KB `tracestate`.
    @Test func withTracesOnEveryLineIsJSONAndNoneHoldsASecret() async throws {
        let token = "admin-token-7f3a9c2e51"
        let served = try await JSONLoggingServer(["--traces", "otlp", "--otlp-endpoint", "http://127.0.0.1:1/v1/traces"],
                                                 environment: ["EASEL_ADMIN_TOKEN": token, "OTEL_EXPORTER_OTLP_HEADERS": "api-key=collector-secret-99"])
        let port = served.server.port
        let state = String(repeating: "vendor=abcdefgh,", count: 2000)
        let answers = try await BlockingIOPool.shared.run { () throws -> [String] in
            try ["/images/thumb/astronaut.jpg", "/images/small/astronaut.jpg", "/no-such-route", "/admin/purge/x"].map { target in
                let socket = try RawSocket(port: port)
                try socket.send("GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nCookie: session=cookie-secret-42\r\n"
                    + "traceparent: not-a-trace-parent\r\ntracestate: \(state)\r\nConnection: close\r\n\r\n")
                return socket.readUntilClosed(within: .seconds(30)).text
            }
        }
        #expect(answers[0].hasPrefix("HTTP/1.1 200"), "\(answers[0].prefix(100))")
        let lines = [served.server.firstLine] + (try await served.stop()).split(separator: "\n").map(String.init)
        #expect(lines.count > 4)
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not one JSON object: \(line.prefix(300))")
            for secret in [token, "cookie-secret-42", "collector-secret-99", "vendor=abcdefgh,vendor"] {
                #expect(!line.contains(secret), "\(secret) in \(line.prefix(300))")
            }
        }
        #expect(lines.contains { $0.contains("\"label\":\"swift-otel\"") }, "swift-otel's lines are among them")
        let accessLines = lines.filter { $0.contains("\"message\":\"answered\"") }
        #expect(accessLines.count >= 4, "an access line per answer")
        for line in accessLines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let traceID = object["trace_id"] as? String
            #expect(traceID?.count == 32 && traceID?.allSatisfy(\.isHexDigit) == true, "the answer's trace: \(line.prefix(300))")
        }
    }

    /// `easel log-relay` (what a JSON server's raw standard error goes through): a JSON line as it
    /// is, any other line wrapped in one.
    @Test func theRelayWritesEveryLineAsOneJSONObject() async throws {
        let process = Process()
        process.executableURL = builtProduct("easel")
        process.arguments = ["log-relay"]
        let input = ChildProcesses.pipe(), output = ChildProcesses.pipe()
        process.standardInput = input
        process.standardOutput = output
        try ChildProcesses.run(process)
        let json = #"{"time":"t","level":"info","label":"x","message":"kept"}"#
        input.fileHandleForWriting.write(Data((json + "\n./lib/jxl/decode.cc:12: JXL_FAILURE: \"quoted\"\n\tno newline at the end").utf8))
        try input.fileHandleForWriting.close()
        let text = try await BlockingIOPool.shared.run { String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first == json)
        let wrapped = lines.dropFirst().compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(wrapped.count == 2 && wrapped[0]["label"] as? String == "stderr" && wrapped[0]["level"] as? String == "warning")
        #expect((wrapped.first?["message"] as? String)?.contains("JXL_FAILURE: \"quoted\"") == true)
    }
}

/// `easel serve --log-format json` (and `flags`) as its own process on the samples, with a cache
/// of its own and its standard error in a file.
struct JSONLoggingServer {
    let work: TemporaryDirectory, cache: TemporaryDirectory
    let logURL: URL, log: FileHandle
    let server: ListeningProcess

    init(_ flags: [String] = [], environment: [String: String] = [:]) async throws {
        work = try TemporaryDirectory()
        cache = try TemporaryDirectory()
        logURL = work.child("stderr.log")
        #expect(FileManager.default.createFile(atPath: logURL.path, contents: nil))
        let log = try FileHandle(forWritingTo: logURL)
        self.log = log
        let arguments = ["serve", "--port", "0", "--cache-dir", cache.path,
                         "--origin", sampleURL("astronaut.jpg").deletingLastPathComponent().path, "--log-format", "json"] + flags
        server = try await BlockingIOPool.shared.run {
            try ListeningProcess(executable: builtProduct("easel"), arguments: arguments, standardError: log, environment: environment)
        }
    }

    /// Stops the server (SIGTERM; it must exit within 30 s) and returns what it wrote to
    /// standard error.
    func stop() async throws -> String {
        server.process.terminate()
        let exited = try await BlockingIOPool.shared.run { [server] in server.waitForExit(within: .seconds(30)) }
        #expect(exited)
        try log.close()
        return try String(contentsOf: logURL, encoding: .utf8)
    }
}
