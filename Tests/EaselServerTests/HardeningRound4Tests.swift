import EaselCodecs
@testable import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// Round 4's smaller findings, each with the request that showed it.
@Suite(.timeLimit(.minutes(2))) struct HardeningRound4Tests {
    @Test func anHTTP11RequestWithoutOneHostIsA400AndHTTP10NeedsNone() async throws {
        let server = try TestServer()
        try await live(server) { port in
            @Sendable func ask(_ head: String) throws -> String {
                let socket = try RawSocket(port: port)
                try socket.send(head + "Connection: close\r\n\r\n")
                return socket.readUntilClosed(within: .seconds(30)).text
            }
            let answers = try await BlockingIOPool.shared.run {
                (missing: try ask("GET /images/thumb/cat.jpg HTTP/1.1\r\n"), twice: try ask("GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n"),
                 one: try ask("GET /health HTTP/1.1\r\nHost: a\r\n"), old: try ask("GET /health HTTP/1.0\r\n"),
                 image: try ask("GET /images/thumb/cat.jpg HTTP/1.1\r\nHost: a\r\nHost: a\r\n"),
                 probe: try ask("GET /health HTTP/1.1\r\n"))
            }
            #expect(answers.missing.hasPrefix("HTTP/1.1 400") && answers.missing.contains("missing"), "\(answers.missing.prefix(200))")
            #expect(answers.twice.hasPrefix("HTTP/1.1 400") && answers.twice.contains("repeated"), "\(answers.twice.prefix(200))")
            #expect(answers.image.hasPrefix("HTTP/1.1 400"), "\(answers.image.prefix(200))")
            #expect(answers.one.hasPrefix("HTTP/1.1 200"))
            #expect(answers.probe.hasPrefix("HTTP/1.1 200"), "a load balancer's health check without Host is let through")
            #expect(answers.old.hasPrefix("HTTP/1.1 200") || answers.old.hasPrefix("HTTP/1.0 200"), "\(answers.old.prefix(100))")
        }
    }

    @Test func aFileNameLosesItsBidiAndControlCharacters() {
        let value = ImageServer.contentDisposition("invoice\u{202E}gpj.exe\u{0007}", fileExtension: "jpg", attachment: true)
        #expect(!value.unicodeScalars.contains { ImageServer.isHiddenControl($0) })
        #expect(!value.contains("%E2%80%AE"), "no right-to-left override in filename* either: \(value)")
        #expect(value == "attachment; filename=\"invoicegpj.exe.jpg\"", "\(value)")
        // Other Unicode stays, in filename*.
        #expect(ImageServer.contentDisposition("café", fileExtension: "png", attachment: false).contains("filename*=UTF-8''caf%C3%A9.png"))
    }

    @Test func scriptTextInACDATASectionDoesNotSurviveCleaning() throws {
        let source = Data("""
            <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text><![CDATA[<script>alert(1)</script>]]></text>\
            <text><![CDATA[a < b]]></text><style><![CDATA[rect { fill: red }]]></style><rect width="10" height="10"/></svg>
            """.utf8)
        let cleaned = String(decoding: try SVGSanitizer.sanitize(source), as: UTF8.self)
        #expect(!cleaned.lowercased().contains("script"), "\(cleaned)")
        #expect(!cleaned.contains("CDATA"), "CDATA becomes escaped text: \(cleaned)")
        #expect(cleaned.contains("a &lt; b") && cleaned.contains("fill: red"), "\(cleaned)")
    }

    @Test func logLinesKeepNoSecrets() {
        let lines = Locked([String]())
        var logger = Logger(label: "test") { label in
            RedactingLogHandler(JSONLogHandler(label: label) { line in lines.withLock { $0.append(line) } }, secrets: ["admin-token-0123456789"])
        }
        logger.logLevel = .debug
        logger[metadataKey: "carrier"] = "Authorization: Bearer abc"
        logger.warning("Failed: [\"authorization\": \"Bearer abc\", \"cookie\": \"session=1\"] x-amz-signature=deadbeef token admin-token-0123456789",
                       metadata: ["headers": "Cookie: a=b", "set-cookie": "c=d", "path": "/ok", "environment_value": "k=v",
                                  "long": .string(String(repeating: "x", count: 5000))])
        let line = lines.withLock { $0.joined() }
        for secret in ["Bearer abc", "session=1", "deadbeef", "admin-token-0123456789", "a=b", "c=d", "k=v"] {
            #expect(!line.contains(secret), "\(secret) in \(line)")
        }
        #expect(line.contains("\"path\":\"/ok\""), "ordinary metadata stays")
        #expect(line.count < 4000, "long values are cut")
        #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any])
    }
}
