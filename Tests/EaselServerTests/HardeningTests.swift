import EaselSupport
import AsyncHTTPClient
import EaselPipeline
@testable import EaselServer
import EaselStorage
import EaselTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import Testing

/// Runs `body` against `server` listening on a real loopback socket (its port given).
func live(_ server: TestServer, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    let app = Application(router: server.server.router(), server: server.server.httpServer(),
                          configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    do {
        try await app.test(.live) { client in try await body(client.port!) }
    } catch {
        await server.server.shutdown()  // its HTTP clients must be shut down before they go
        throw error
    }
    await server.server.shutdown()
}

/// Like `live`, on a fixed port (Hummingbird's test framework always binds port 0): a restarted
/// instance comes back where its peers expect it.
func live(_ server: TestServer, port: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    let (started, running) = AsyncStream<Void>.makeStream()
    let app = Application(router: server.server.router(), server: server.server.httpServer(),
                          configuration: .init(address: .hostname("127.0.0.1", port: port)),
                          onServerRunning: { _ in running.yield() })
    let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "test")))
    do {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { running.finish() }  // a failed bind ends the wait below
                try await group.run()
            }
            guard await started.first(where: { true }) != nil else {
                try await tasks.waitForAll()  // throws the bind's error
                throw CancellationError()
            }
            do { try await body() } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    } catch {
        await server.server.shutdown()
        throw error
    }
    await server.server.shutdown()
}

/// Findings of an adversarial test of `easel serve`, one test each.
@Suite(.timeLimit(.minutes(2))) struct HardeningTests {
    @Test func idleAndSlowlyWrittenConnectionsAreClosed() async throws {
        let server = try TestServer { $0.idleTimeout = 0.5 }
        try await live(server) { port in
            try await BlockingIOPool.shared.run {
                // Connected, never a byte sent.
                let idle = try RawSocket(port: port)
                #expect(idle.readUntilClosed(within: .seconds(10)).closed, "an idle connection is closed")
                // Keep-alive: one answer, then silence.
                let kept = try RawSocket(port: port)
                try kept.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                let answer = kept.readUntilClosed(within: .seconds(10))
                #expect(answer.closed && answer.text.hasPrefix("HTTP/1.1 200"), "\(answer.text)")
                // Slowloris: a header byte every 100 ms never completes the request.
                let slow = try RawSocket(port: port)
                try slow.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                let start = ContinuousClock.now
                var closed = false
                for _ in 0..<100 where !closed {
                    do { try slow.send("a") } catch { closed = true }
                    closed = closed || slow.readUntilClosed(within: .milliseconds(100)).closed
                }
                #expect(closed, "a half-sent request is closed")
                #expect(ContinuousClock.now - start < .seconds(5))
            }
        }
    }

    @Test func http10WithoutKeepAliveGetsConnectionClose() async throws {
        try await live(try TestServer()) { port in
            try await BlockingIOPool.shared.run {
                let socket = try RawSocket(port: port)
                try socket.send("GET /health HTTP/1.0\r\n\r\n")
                let answer = socket.readUntilClosed(within: .seconds(10))
                #expect(answer.closed, "the server closes after the answer")
                #expect(answer.text.lowercased().contains("connection: close"), "\(answer.text)")
                // Keep-alive asked for: the connection stays, and a second request on it is answered
                // (no fixed read window: under ThreadSanitizer the first answer took over 300 ms).
                let kept = try RawSocket(port: port)
                try kept.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                let first = kept.read(until: "\r\n\r\nok", within: .seconds(10))
                #expect(first.end == .marker && !first.text.lowercased().contains("connection: close"), "\(first.text)")
                try kept.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                let second = kept.read(until: "\r\n\r\nok", within: .seconds(10))
                #expect(second.end == .marker, "\(second.text)")
            }
        }
    }

    @Test func theOldestIdleConnectionsMakeRoomPastTheCap() async throws {
        let server = try TestServer { $0.maxConnections = 20 }
        try await live(server) { port in
            let sockets = try await BlockingIOPool.shared.run { try (0..<60).map { _ in try RawSocket(port: port) } }
            // A new client is still served, on a new connection, while 60 idle ones were opened.
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/health"), timeout: .seconds(10))
            #expect(response.status == .ok)
            // Every connection accepted (bounded by the suite's time limit): 61 opened, 20 kept.
            while server.server.connections.evictedCount < 41 { await Task.yield() }
            #expect(server.server.connections.count <= 20)
            // The oldest were closed.
            let first = try await BlockingIOPool.shared.run { sockets[0].readUntilClosed(within: .seconds(5)).closed }
            #expect(first)
        }
    }

    @Test func anHTTPOriginsPrefixCannotBeLeftWithDotSegments() async throws {
        let policy = SourcePolicy(allowHosts: [], origin: URL(string: "http://origin.test/pub/")!)
        for escape in ["http://origin.test/pub/../secret/s.jpg", "http://origin.test/pub/%2e%2e/secret/s.jpg",
                       "http://origin.test/pub/%2E%2e/secret/s.jpg", "http://origin.test/pub/a/../../secret/s.jpg",
                       "http://origin.test/pub/./../secret/s.jpg", "http://origin.test/pubx/s.jpg"] {
            #expect(!policy.isUnderOrigin(URL(string: escape)!), "\(escape)")
        }
        #expect(policy.isUnderOrigin(URL(string: "http://origin.test/pub/a/../s.jpg")!))
        #expect(SourcePolicy.removeDotSegments("/pub/%2e%2e/secret/") == "/secret/")
        #expect(SourcePolicy.removeDotSegments("/a/b/./c/../d") == "/a/b/d")
        #expect(SourcePolicy.removingDotSegments(URL(string: "http://h/pub/a/%2E./s.jpg?x=1")!)?.absoluteString == "http://h/pub/s.jpg?x=1")

        let origin = Origin()
        origin.serve("/pub/cat.jpg", .file(catJPEG))
        origin.serve("/secret/s.jpg", .file(catJPEG))
        try await origin.run { base in
            let prefix = base.appendingPathComponent("pub").absoluteString + "/"
            try await TestServer { $0.origin = prefix }.test { (client: any TestClientProtocol) async throws in
                #expect(try await get(client, "/images/thumb/cat.jpg").status == .ok)
                // Dot segments in any spelling an origin server might resolve are refused before
                // any request reaches it: `..`, `%2e%2e`, twice encoded, with a path parameter
                // (`..;`, which Tomcat resolves), even when they would stay inside the prefix.
                for path in ["/images/thumb/\(prefix)../secret/s.jpg", "/images/thumb/\(prefix)%2e%2e/secret/s.jpg",
                             "/images/thumb/\(prefix)%252e%252e/secret/s.jpg", "/images/thumb/\(prefix)..;/secret/s.jpg",
                             "/images/thumb/\(prefix)..;x=1/secret/s.jpg", "/images/thumb/\(prefix)%2e%2e%3b/secret/s.jpg",
                             "/images/small/\(prefix)x/../cat.jpg"] {
                    let response = try await get(client, path)
                    #expect(response.status == .forbidden, "\(path): \(response.status)")
                }
                #expect(SourcePolicy.hasDotSegment("/a/%25252e%25252e/b") == false, "three encodings are a file name, not a dot")
                #expect(SourcePolicy.hasDotSegment("/a/..b/c.jpg") == false && SourcePolicy.hasDotSegment("/a/.well-known/c") == false)
            }
            #expect(origin.count("/secret/s.jpg") == 0, "nothing outside the prefix was fetched")
            #expect(origin.count("/pub/cat.jpg") == 1, "both spellings are one source, fetched once")
        }
    }

    @Test func theGalleryIsPagedListedOffThePathAndCanBeTurnedOff() async throws {
        let server = try TestServer()
        for index in 0..<247 { try Data().write(to: server.origin.child(String(format: "img-%03d.png", index))) }
        try await server.test { (client: any TestClientProtocol) async throws in
            let first = String(buffer: try await get(client, "/").body)
            #expect(first.components(separatedBy: "<figure>").count - 1 == 100)
            #expect(first.contains("250 images") && first.contains("page 1 of 3") && first.contains("?page=2"))
            let last = String(buffer: try await get(client, "/?page=3").body)
            #expect(last.components(separatedBy: "<figure>").count - 1 == 50)
            #expect(try await get(client, "/?page=4").status == .notFound)
            #expect(try await get(client, "/?page=0").status == .notFound)
        }
        try await TestServer { $0.gallery = false }.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/").status == .notFound)
        }
        // A stale listing is served at once while it is refreshed in the background.
        let directory = try TemporaryDirectory()
        try Data().write(to: directory.child("a.jpg"))
        let listing = GalleryListing(root: directory.url, freshness: .zero)
        #expect(await listing.names() == ["a.jpg"])
        try Data().write(to: directory.child("b.jpg"))
        #expect(await listing.names() == ["a.jpg"], "the stale listing, while a refresh starts")
        await listing.refreshed()
        #expect(await listing.names() == ["a.jpg", "b.jpg"])
    }

    @Test func acceptQValuesAreNumbers() async throws {
        for refusal in ["image/webp;q=0", "image/webp;q=0.0", "image/webp; q=0.00", "image/webp;q=0.000, image/*", "image/webp;q=nope"] {
            #expect(!AcceptHeader(refusal).explicitlyAccepts("image/webp"), "\(refusal)")
        }
        for acceptance in ["image/webp", "image/webp;q=0.001", "image/avif,image/webp,*/*;q=0.8", "IMAGE/WEBP;Q=1"] {
            #expect(AcceptHeader(acceptance).explicitlyAccepts("image/webp"), "\(acceptance)")
        }
        #expect(!AcceptHeader("image/*").explicitlyAccepts("image/webp"))
        #expect(AcceptHeader("image/*;q=0.5, */*;q=0.1").quality(of: "image/png") == 0.5)
        try await TestServer().test { (client: any TestClientProtocol) async throws in
            for refusal in ["image/webp;q=0.0", "image/webp;q=0.00"] {
                let response = try await get(client, "/images/thumb/cat.jpg", headers: [.accept: refusal])
                #expect(response.headers[.contentType] == "image/jpeg", "\(refusal)")
            }
            let webp = try await get(client, "/images/thumb/cat.jpg", headers: [.accept: "image/webp;q=0.5"])
            #expect(webp.headers[.contentType] == "image/webp")
        }
    }

    @Test func aSymlinkToACanonicallyEquivalentSiblingIsNotServed() async throws {
        let parent = try TemporaryDirectory()
        let nfc = parent.child("caf\u{E9}"), nfd = parent.child("cafe\u{301}")
        try FileManager.default.createDirectory(at: nfc, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: nfd, withIntermediateDirectories: true)
        // Swift compares strings by canonical equivalence: count the names as bytes.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: parent.path).map { Array($0.utf8) }).count == 2, "two directories on disk")
        try catJPEG.write(to: nfc.appendingPathComponent("cat.jpg"))
        try catJPEG.write(to: nfd.appendingPathComponent("secret.jpg"))
        try FileManager.default.createSymbolicLink(atPath: nfc.appendingPathComponent("link.jpg").path,
                                                   withDestinationPath: nfd.appendingPathComponent("secret.jpg").path)
        let fetcher = FileFetcher(root: nfc)
        #expect(fetcher.confinedPath(for: nfc.appendingPathComponent("cat.jpg")) != nil)
        #expect(fetcher.confinedPath(for: nfc.appendingPathComponent("link.jpg")) == nil)
        try await TestServer { $0.origin = nfc.path }.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/images/thumb/cat.jpg").status == .ok)
            #expect(try await get(client, "/images/thumb/link.jpg").status == .notFound)
        }
    }

    @Test func everyOutputIsBoundedBySideAndPixels() async throws {
        var configuration = ServerConfiguration()
        configuration.maxAdHocSize = 100_000
        #expect(throws: ServerConfigurationError.invalidValue(name: "maxAdHocSize", value: "100000 (at most 8192)")) { try configuration.validate() }
        configuration = ServerConfiguration()
        configuration.formats = [.init(name: "wall", width: 8192, height: 8192)]
        #expect(throws: ServerConfigurationError.invalidValue(name: "format wall size", value: "8192x8192")) { try configuration.validate() }
        configuration.maxOutputPixels = 8192 * 8192
        try configuration.validate()
        try await TestServer { $0.allowUnsignedAdHoc = true; $0.maxAdHocSize = 8192; $0.maxOutputPixels = 1_000_000 }.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/images/w=1000,h=1000/cat.jpg").status == .ok)
            let refused = try await get(client, "/images/w=8192,h=200/cat.jpg")
            #expect(refused.status == .badRequest && String(buffer: refused.body).contains("1000000 pixels"))
        }
    }

    @Test func aClientThatLeftIsCountedApartFromServerErrors() async throws {
        let origin = Origin()
        let gate = Gate()
        origin.serve("/slow.jpg", .gated(catJPEG, first: 1000, gate: gate))
        try await origin.run { base in
            let server = try TestServer { $0.origin = base.absoluteString }
            try await live(server) { port in
                let socket = try await BlockingIOPool.shared.run { () throws -> RawSocket in
                    let socket = try RawSocket(port: port)
                    try socket.send("GET /images/thumb/slow.jpg HTTP/1.1\r\nHost: x\r\n\r\n")
                    return socket
                }
                _ = await origin.nextRequest()
                socket.shutdownBoth()  // the client leaves
                // The metric appears once the handler has returned (bounded by the suite's limit).
                var metrics = ""
                while !metrics.contains(#"route="images",status="499"} 1"#) {
                    await Task.yield()
                    metrics = String(decoding: server.server.registry.emitToBuffer(), as: UTF8.self)
                }
                gate.open()
                #expect(!metrics.contains(#"route="images",status="503"} 1"#), "\(metrics)")
            }
        }
    }

    @Test func everyAnswerSaysNoSniff() async throws {
        try await TestServer().test { (client: any TestClientProtocol) async throws in
            for path in ["/health", "/metrics", "/", "/images/thumb/cat.jpg", "/images/thumb/%3Cscript%3E.jpg", "/images/thumb/corrupt.jpg",
                         "/images/w=1,h=1/cat.jpg", "/no/such/route"] {
                let response = try await get(client, path)
                #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", "\(path): \(response.status)")
            }
        }
    }

    @Test func aRequestPastItsTimeoutGets504AsDocumented() async throws {
        #expect(PipelineError.timedOut(seconds: 1).status == .gatewayTimeout)
        let origin = Origin()
        let gate = Gate()
        origin.serve("/slow.jpg", .gated(catJPEG, first: 1000, gate: gate))
        try await origin.run { base in
            try await TestServer { $0.origin = base.absoluteString; $0.requestTimeout = 0.3 }.test { (client: any TestClientProtocol) async throws in
                let response = try await get(client, "/images/thumb/slow.jpg")
                #expect(response.status == .gatewayTimeout)
                gate.open()
            }
        }
    }
}
