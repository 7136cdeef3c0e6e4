import EaselRemote
import EaselStorage
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// The S3 client and the shared-tier store against moto's S3 server on loopback, which checks
/// every request's signature.
@Suite(.timeLimit(.minutes(2))) struct S3StoreTests {
    /// Runs `body` with a client of moto's server, shut down however `body` ends.
    func withClient(_ server: S3TestServer, secret: String? = nil, _ body: (S3Client) async throws -> Void) async throws {
        var environment = server.environment
        if let secret { environment["AWS_SECRET_ACCESS_KEY"] = secret }
        let client = S3Client(configuration: try .fromEnvironment(environment))
        do { try await body(client) } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    /// A store of moto's server. The read limit is generous: the tests assert answers, and moto (one
    /// Python process) can be slow to answer while the whole suite starts at once on two cores.
    func store(_ client: S3Client, readTimeout: Duration = .seconds(30)) -> S3Store {
        S3Store(location: S3Location(bucket: S3TestServer.bucket, prefix: "test-\(UUID().uuidString)/"), client: client,
                readTimeout: readTimeout)
    }

    @Test func signedRequestsAreAcceptedAndValuesRoundTrip() async throws {
        let server = try await S3TestServer.shared()
        try await withClient(server) { client in
            let store = store(client)
            let value = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            // Keys a hostile URL could make: long, non-ASCII, slashes, dots, query characters.
            let long = "5000:" + String(repeating: "ab/../?&=%", count: 500) + "|encoded|x"
            for key in ["3:abc|encoded|jpeg q82|thumb", "9:café/ü.jpg|original", long] {
                #expect(try await store.data(forKey: key) == nil)
                try await store.set(value, forKey: key, expiresAt: nil)
                #expect(try await store.data(forKey: key) == value)
            }
            let statistics = store.statistics
            #expect(statistics.hits == 3 && statistics.misses == 3 && statistics.writes == 3 && statistics.readErrors == 0)
            // Names are fixed-length hashes under the prefix, one folder per source.
            #expect(store.objectName(forKey: long).utf8.count == store.location.prefix.utf8.count + 64 + 1 + 64)
        }
    }

    @Test func aGroupIsRemovedWholeAndNothingElse() async throws {
        let server = try await S3TestServer.shared()
        try await withClient(server) { client in
            let store = store(client)
            let keys = ["3:abc|original", "3:abc|encoded|a", "3:abc|variant|b", "4:abcd|original", "3:abd|original"]
            for key in keys { try await store.set(Data(key.utf8), forKey: key, expiresAt: nil) }
            try await store.removeValues(withKeyPrefix: "3:abc|")
            for key in keys {
                let expected: Data? = key.hasPrefix("3:abc|") ? nil : Data(key.utf8)
                #expect(try await store.data(forKey: key) == expected, "\(key)")
            }
            // Only whole groups: a hashed name keeps no order for other prefixes.
            await #expect(throws: S3Error.self) { try await store.removeValues(withKeyPrefix: "3:ab") }
            try await store.removeValue(forKey: "4:abcd|original")
            #expect(try await store.data(forKey: "4:abcd|original") == nil)
        }
    }

    @Test func aDamagedOrMisplacedObjectIsAMissAndIsDeleted() async throws {
        let server = try await S3TestServer.shared()
        try await withClient(server) { client in
            let store = store(client)
            try await store.set(Data(repeating: 7, count: 5000), forKey: "1:a|x", expiresAt: nil)
            let name = store.objectName(forKey: "1:a|x")
            var object = try #require(try await client.data(bucket: S3TestServer.bucket, key: name, maximumBytes: 1 << 20))
            object[object.count / 2] ^= 0x40
            try await client.put(bucket: S3TestServer.bucket, key: name, data: object)
            #expect(try await store.data(forKey: "1:a|x") == nil)
            await store.drainBackgroundWork()  // the removal is made after the read answers
            #expect(try await client.data(bucket: S3TestServer.bucket, key: name, maximumBytes: 1 << 20) == nil)
            // An intact object of another key under this key's name (a collision, or a copy) is no answer either.
            try await store.set(Data("other".utf8), forKey: "1:b|x", expiresAt: nil)
            let other = try #require(try await client.data(bucket: S3TestServer.bucket, key: store.objectName(forKey: "1:b|x"), maximumBytes: 1 << 20))
            try await client.put(bucket: S3TestServer.bucket, key: name, data: other)
            #expect(try await store.data(forKey: "1:a|x") == nil)
            #expect(store.statistics.damaged == 2)
            // Expired values are misses.
            try await store.set(Data("old".utf8), forKey: "1:c|x", expiresAt: Date().addingTimeInterval(-1))
            #expect(try await store.data(forKey: "1:c|x") == nil)
        }
    }

    @Test func aWrongSecretIsRefusedWithAClearError() async throws {
        let server = try await S3TestServer.shared()
        try await withClient(server, secret: "not-the-secret") { client in
            let store = store(client)
            do {
                _ = try await store.data(forKey: "1:a|x")
                Issue.record("a wrong secret was accepted")
            } catch let error as S3Error {
                guard case .denied(403, "SignatureDoesNotMatch", _) = error else { Issue.record("unexpected \(error)"); return }
                #expect(error.description.contains("refused the credentials"))
            }
            #expect(store.statistics.readErrors == 1)
        }
    }

    @Test func aSlowOrUnreachableStoreFailsWithinItsTimeLimit() async throws {
        // A real endpoint that answers one byte a second.
        let origin = Origin()
        try await origin.run { base in
            // The client's own limit is far away, so only the store's read limit can end this read
            // (the trickle never ends): the typed error names that limit, and the read ends long
            // before the client's would have.
            let client = S3Client(configuration: .init(credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"), endpoint: base,
                                                       requestTimeout: .seconds(600)))
            let store = S3Store(location: S3Location(bucket: "slow-bucket", prefix: ""), client: client, readTimeout: .milliseconds(300))
            origin.serve("/slow-bucket/" + store.objectName(forKey: "1:a|x"), .trickle(interval: .seconds(1)))
            let start = ContinuousClock.now
            await #expect(throws: S3Error.timedOut(seconds: 0.3)) { try await store.data(forKey: "1:a|x") }
            #expect(ContinuousClock.now - start < .seconds(60))
            try await client.shutdown()
        }
        // Nothing listening.
        let client = S3Client(configuration: .init(credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"),
                                                   endpoint: URL(string: "http://127.0.0.1:9")!))
        let store = S3Store(location: S3Location(bucket: "gone-bucket", prefix: ""), client: client)
        await #expect(throws: S3Error.self) { try await store.data(forKey: "1:a|x") }
        #expect(store.statistics.readErrors == 1)
        try await client.shutdown()
    }

    @Test func aWriteAnsweredWithAny2xxSucceeds() async throws {
        // S3 answers 200; S3-compatible stores (and nginx's WebDAV) 201 Created or 204.
        let origin = Origin()
        try await origin.run { base in
            let client = S3Client(configuration: .init(credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"), endpoint: base))
            for status in [200, 201, 204] {
                origin.serve("/plain-bucket/k\(status)", .status(status))
                try await client.put(bucket: "plain-bucket", key: "k\(status)", data: Data("x".utf8))
            }
            origin.serve("/plain-bucket/k500", .status(500))
            await #expect(throws: S3Error.self) { try await client.put(bucket: "plain-bucket", key: "k500", data: Data("x".utf8)) }
            #expect(origin.count("/plain-bucket/k201") == 1)
            try await client.shutdown()
        }
    }

    @Test func getsStreamWithinALimitAndRevalidate() async throws {
        let server = try await S3TestServer.shared()
        try await withClient(server) { client in
            let key = "origin-\(UUID().uuidString)/a b+c.jpg"
            try await client.put(bucket: S3TestServer.bucket, key: key, data: Data(repeating: 1, count: 10_000), contentType: "image/jpeg")
            let received = Locked(0)
            let outcome = try await client.get(bucket: S3TestServer.bucket, key: key, maximumBytes: 10_000) { buffer in
                received.withLock { $0 += buffer.readableBytes }
            }
            guard case .object(let head) = outcome, let etag = head.etag else { Issue.record("no object: \(outcome)"); return }
            #expect(received.withLock { $0 } == 10_000 && head.contentType == "image/jpeg" && head.lastModified != nil)

            let conditional = try await client.get(bucket: S3TestServer.bucket, key: key, ifNoneMatch: etag, maximumBytes: 10_000) { _ in }
            guard case .notModified = conditional else { Issue.record("expected 304, got \(conditional)"); return }
            await #expect(throws: S3Error.tooLarge(limit: 9_999, received: 10_000)) {
                try await client.get(bucket: S3TestServer.bucket, key: key, maximumBytes: 9_999) { _ in }
            }
            await #expect(throws: S3Error.notFound(bucket: S3TestServer.bucket, key: key + "x")) {
                try await client.get(bucket: S3TestServer.bucket, key: key + "x", maximumBytes: 10) { _ in }
            }
            let listed = try await client.allKeys(bucket: S3TestServer.bucket, prefix: String(key.prefix { $0 != "/" }) + "/")
            #expect(listed == [key])
        }
    }

    @Test func listingsFollowEveryPageAndRefuseToStopShort() async throws {
        let server = try await S3TestServer.shared()
        try await withClient(server) { client in
            let prefix = "pages-\(UUID().uuidString)/"
            let keys = (0..<7).map { prefix + "k+\($0) é.bin" }  // `+`, a space and UTF-8 in keys and tokens
            for key in keys { try await client.put(bucket: S3TestServer.bucket, key: key, data: Data([1])) }
            // Two keys a page: four pages, every continuation token followed.
            let first = try await client.list(bucket: S3TestServer.bucket, prefix: prefix, pageSize: 2)
            #expect(first.keys.count == 2 && first.next != nil)
            #expect(try await client.allKeys(bucket: S3TestServer.bucket, prefix: prefix, pageSize: 2).sorted() == keys.sorted())
            // More keys than the caller allows: an error, never a shortened list (a purge would
            // report success with objects left behind).
            await #expect(throws: S3Error.self) {
                try await client.allKeys(bucket: S3TestServer.bucket, prefix: prefix, maximumKeys: 4, pageSize: 2)
            }
        }
    }
}
