import AsyncHTTPClient
import EaselPipeline
import EaselRemote
import EaselSupport
import EaselTables
@testable import EaselServer
import EaselTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Several `easel serve` instances: S3 origins, a result tier shared in S3 (moto's server on
/// loopback, signatures checked), purges relayed to peers.
@Suite(.timeLimit(.minutes(2))) struct ClusterTests {
    static let token = "cluster-admin-token-0123"
    static let cup = try! Data(contentsOf: sampleURL("coffee-cup.jpg"))

    struct Answer {
        var status: Int
        var body: Data
        var headers: HTTPHeaders
    }

    static func request(_ port: Int, _ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 32 << 20)
        return Answer(status: Int(response.status.code), body: Data(buffer: body), headers: response.headers)
    }

    @Test func twoServersShareOneResultTierAndAPurgeOnOneReachesTheOther() async throws {
        let s3 = try await S3TestServer.shared()
        let shared = "s3://\(S3TestServer.bucket)/shared-\(UUID().uuidString)/"
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG, headers: ["ETag": "\"cat-1\""]))
        try await origin.run { base in
            @Sendable func configure(_ configuration: inout ServerConfiguration) {
                configuration.origin = base.absoluteString
                configuration.sharedCache = shared
                configuration.sharedCacheTimeout = 30  // the test asserts a shared hit: moto may be slow under a loaded suite
                configuration.adminToken = Self.token
            }
            let b = try TestServer(environment: s3.environment, configure)
            try await live(b) { portB in
                let a = try TestServer(environment: s3.environment) { configure(&$0); $0.peers = ["http://127.0.0.1:\(portB)"] }
                try await live(a) { portA in
                    // A makes the variant (one origin read) and writes it to the shared tier after answering.
                    let made = try await Self.request(portA, "/images/thumb/cat.jpg")
                    #expect(made.status == 200 && origin.count("/cat.jpg") == 1)
                    await a.server.pipeline.waitForBackgroundWork()
                    #expect(a.server.sharedStore!.statistics.writes == 1)
                    // B has never seen it: its answer comes from the shared tier, with no origin read.
                    let fromShared = try await Self.request(portB, "/images/thumb/cat.jpg")
                    #expect(fromShared.status == 200 && fromShared.body == made.body)
                    #expect(fromShared.headers.first(name: "ETag") == made.headers.first(name: "ETag"))
                    #expect(origin.count("/cat.jpg") == 1)
                    #expect(b.server.sharedStore!.statistics.hits == 1)
                    #expect(b.server.pipeline.counters.fetches == 0 && b.server.pipeline.counters.decodes == 0)

                    // The origin's image changes; a purge on A reaches B before A answers.
                    origin.serve("/cat.jpg", .file(Self.cup, headers: ["ETag": "\"cup-1\""]))
                    let purge = try await Self.request(portA, "/images/cat.jpg", method: .DELETE, headers: [("Authorization", "Bearer " + Self.token)])
                    #expect(purge.status == 200, "\(String(decoding: purge.body, as: UTF8.self))")
                    #expect(try await a.server.sharedStore!.client.allKeys(bucket: S3TestServer.bucket,
                                                                            prefix: String(shared.dropFirst(5 + S3TestServer.bucket.count + 1))).isEmpty)
                    // The relayed purge left the shared tier to A (which had purged it already).
                    #expect(a.server.sharedStore!.statistics.removals == 1)
                    #expect(b.server.sharedStore!.statistics.removals == 0)
                    // B answers the new image (its memory and disk were purged, and so was the shared tier).
                    let after = try await Self.request(portB, "/images/thumb/cat.jpg")
                    #expect(after.status == 200 && after.body != made.body)
                    #expect(origin.count("/cat.jpg") == 2)
                }
            }
        }
    }

    @Test func aPeerThatCannotBeReachedIsNamedInThePurgeAnswer() async throws {
        let server = try TestServer { $0.adminToken = Self.token; $0.peers = ["http://127.0.0.1:9"] }
        try await live(server) { port in
            let purge = try await Self.request(port, "/images/cat.jpg", method: .DELETE, headers: [("Authorization", "Bearer " + Self.token)])
            // 202: done here, not everywhere (a 5xx would make a balancer retry it elsewhere).
            #expect(purge.status == 202)
            #expect(String(decoding: purge.body, as: UTF8.self).contains("http://127.0.0.1:9"))
            #expect(purge.headers.first(name: "Easel-Purge-Unreached") == "http://127.0.0.1:9")
            // A relayed purge (from a peer) is not relayed again.
            let relayed = try await Self.request(port, "/images/cat.jpg", method: .DELETE,
                                                 headers: [("Authorization", "Bearer " + Self.token), (PurgeRelay.relayHeader, "1")])
            #expect(relayed.status == 200)
        }
    }

    @Test func aPeerThatWasDownGetsThePurgeWhenItComesBack() async throws {
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG, headers: ["ETag": "\"cat-1\""]))
        try await origin.run { base in
            let cache = try TemporaryDirectory()
            @Sendable func peer(_ configuration: inout ServerConfiguration) {
                configuration.origin = base.absoluteString
                configuration.cacheDirectory = cache.path
                configuration.adminToken = Self.token
            }
            // B makes the variant (one origin read), keeps it on its disk, and goes down.
            let made = Locked(Data()), peerPort = Locked(0)
            try await live(try TestServer(peer)) { port in
                peerPort.withLock { $0 = port }
                made.withLock { $0 = Data() }
                let answer = try await Self.request(port, "/images/thumb/cat.jpg")
                #expect(answer.status == 200)
                made.withLock { $0 = answer.body }
            }
            let port = peerPort.withLock { $0 }
            #expect(origin.count("/cat.jpg") == 1)
            let a = try TestServer { $0.origin = base.absoluteString; $0.adminToken = Self.token; $0.peers = ["http://127.0.0.1:\(port)"] }
            try await live(a) { portA in
                origin.serve("/cat.jpg", .file(Self.cup, headers: ["ETag": "\"cup-1\""]))
                let purge = try await Self.request(portA, "/images/cat.jpg", method: .DELETE, headers: [("Authorization", "Bearer " + Self.token)])
                #expect(purge.status == 202)
                #expect(a.server.purgeRelay!.pendingCount == 1)
                // B comes back on its port with its disk: the relay retried in the background reaches it.
                try await live(try TestServer(peer), port: port) {
                    // The round the background loop makes every 5 s, made now.
                    await a.server.purgeRelay!.retryRound()
                    #expect(a.server.purgeRelay!.pendingCount == 0)
                    let after = try await Self.request(port, "/images/thumb/cat.jpg")
                    #expect(after.status == 200 && after.body != made.withLock { $0 })
                    #expect(origin.count("/cat.jpg") == 2)
                }
            }
        }
    }

    @Test func aDamagedSharedObjectIsAMissAndTheWorkIsDoneLocally() async throws {
        let s3 = try await S3TestServer.shared()
        let prefix = "damaged-\(UUID().uuidString)/"
        let a = try TestServer(environment: s3.environment) { $0.sharedCache = "s3://\(S3TestServer.bucket)/\(prefix)" }
        try await live(a) { port in
            let made = try await Self.request(port, "/images/thumb/cat.jpg")
            #expect(made.status == 200)
            let store = a.server.sharedStore!
            await a.server.pipeline.waitForBackgroundWork()
            #expect(store.statistics.writes == 1)
            let names = try await store.client.allKeys(bucket: S3TestServer.bucket, prefix: prefix)
            #expect(names.count == 1)
            var object = try #require(try await store.client.data(bucket: S3TestServer.bucket, key: names[0], maximumBytes: 1 << 24))
            object[object.count - 20] ^= 1
            try await store.client.put(bucket: S3TestServer.bucket, key: names[0], data: object)
            // A second server with its own cache: the damaged object is a miss (and is deleted), the work is redone.
            // (The same origin directory: a file source's identity is its path.)
            let b = try TestServer(environment: s3.environment) {
                $0.sharedCache = "s3://\(S3TestServer.bucket)/\(prefix)"
                $0.sharedCacheTimeout = 30  // the test asserts the read found the damaged object
                $0.origin = a.origin.path
            }
            try await live(b) { portB in
                let redone = try await Self.request(portB, "/images/thumb/cat.jpg")
                #expect(redone.status == 200 && redone.body == made.body)
                #expect(b.server.sharedStore!.statistics.damaged == 1)
                #expect(b.server.pipeline.counters.decodes == 1)
            }
        }
    }

    @Test func aFailingSharedTierDegradesToLocalWork() async throws {
        // Credentials the store refuses: every shared read and write fails; answers are still 200.
        let s3 = try await S3TestServer.shared()
        var environment = s3.environment
        environment["AWS_SECRET_ACCESS_KEY"] = "wrong"
        let server = try TestServer(environment: environment) {
            $0.sharedCache = "s3://\(S3TestServer.bucket)/failing/"
            $0.adminToken = Self.token
        }
        try await live(server) { port in
            for _ in 0..<2 {
                let answer = try await Self.request(port, "/images/small/cat.jpg")
                #expect(answer.status == 200)
            }
            #expect(server.server.sharedStore!.statistics.readErrors == 1)
            await server.server.pipeline.waitForBackgroundWork()
            #expect(server.server.sharedStore!.statistics.writeErrors == 1)
            // A purge the shared tier refuses: the local tiers are purged, and the answer is a 202
            // naming the shared tier (never a 5xx a balancer would retry elsewhere).
            let purge = try await Self.request(port, "/images/cat.jpg", method: .DELETE, headers: [("Authorization", "Bearer " + Self.token)])
            #expect(purge.status == 202)
            #expect(purge.headers.first(name: "Easel-Purge-Unreached") == "shared tier (s3)")
            let decodes = server.server.pipeline.counters.decodes
            #expect(try await Self.request(port, "/images/small/cat.jpg").status == 200)
            #expect(server.server.pipeline.counters.decodes == decodes + 1)
        }
    }

    @Test func aStaleS3OriginalIsRevalidatedWithItsETag() async throws {
        let s3 = try await S3TestServer.shared()
        let key = "revalidate-\(UUID().uuidString)/cat.jpg"
        let client = S3Client(configuration: try .fromEnvironment(s3.environment))
        try await client.put(bucket: S3TestServer.bucket, key: key, data: catJPEG, contentType: "image/jpeg")
        let directory = try TemporaryDirectory()
        let formats = [ImageFormat(name: "thumb", family: "photos", width: 128, height: 128, fit: .fit, maximumCount: 50),
                       ImageFormat(name: "large", family: "large", width: 400, height: 400, maximumCount: 50, storage: .diskCache),
                       ImageFormat(name: "larger", family: "larger", width: 500, height: 500, maximumCount: 50, storage: .diskCache)]
        // Freshness 0: every later use of the stored original revalidates it with S3.
        let pipeline = try ImagePipeline(configuration: configured(.init(formats: formats, cacheDirectory: directory.url,
                                                                         fetchers: [S3Fetcher(client: client)], downloadRate: nil)) {
            $0.defaultFreshness = 0
        })
        let url = URL(string: "s3://\(S3TestServer.bucket)/\(key)")!
        do {
            let first = try await pipeline.image(for: ImageRequest(url: url, format: "thumb"))
            #expect(first.tier == .network)
            // Unchanged: S3 answers 304 to the ETag, and the stored original is used.
            #expect(try await pipeline.image(for: ImageRequest(url: url, format: "large")).tier == .diskOriginal)
            // Changed: a new ETag, so the new bytes.
            try await client.put(bucket: S3TestServer.bucket, key: key, data: Self.cup, contentType: "image/jpeg")
            let changed = try await pipeline.image(for: ImageRequest(url: url, format: "larger"))
            #expect(changed.tier == .network)
        } catch {
            await pipeline.close()
            try await client.shutdown()
            throw error
        }
        await pipeline.close()
        try await client.shutdown()
    }

    @Test func anS3OriginServesItsObjectsAndHidesItsErrors() async throws {
        let s3 = try await S3TestServer.shared()
        let prefix = "origin-\(UUID().uuidString)/"
        let client = S3Client(configuration: try .fromEnvironment(s3.environment))
        try await client.put(bucket: S3TestServer.bucket, key: prefix + "photos/cat one.jpg", data: catJPEG, contentType: "image/jpeg")
        try await client.put(bucket: S3TestServer.bucket, key: prefix + "photos/a+b.jpg", data: Self.cup, contentType: "image/jpeg")
        try await client.shutdown()
        let server = try TestServer(environment: s3.environment) {
            $0.origin = "s3://\(S3TestServer.bucket)/\(prefix)"
            $0.allowUnsignedAdHoc = true
        }
        try await live(server) { port in
            let answer = try await Self.request(port, "/images/w=64,h=64/photos/cat%20one.jpg")
            #expect(answer.status == 200 && answer.headers.first(name: "Content-Type") == "image/jpeg")
            // The same object named absolutely (inside the origin's prefix) is the same source.
            let absolute = try await Self.request(port, "/images/w=64,h=64/s3://\(S3TestServer.bucket)/\(prefix)photos/cat%20one.jpg")
            #expect(absolute.status == 200 && absolute.body == answer.body)
            #expect(server.server.pipeline.counters.fetches == 1)
            #expect(try await Self.request(port, "/images/thumb/photos/missing.jpg").status == 404)
            // Outside the origin's prefix, or another bucket: refused.
            #expect(try await Self.request(port, "/images/thumb/s3://\(S3TestServer.bucket)/elsewhere/a.jpg").status == 403)
            #expect(try await Self.request(port, "/images/thumb/s3://other-bucket/\(prefix)a.jpg").status == 403)
            // `+` written plainly or escaped, in the origin's form or absolutely: one object, one
            // identity (one fetch).
            let plus = try await Self.request(port, "/images/w=64,h=64/photos/a+b.jpg")
            #expect(plus.status == 200)
            for spelling in ["photos/a%2Bb.jpg", "s3://\(S3TestServer.bucket)/\(prefix)photos/a+b.jpg",
                             "s3://\(S3TestServer.bucket)/\(prefix)photos/a%2Bb.jpg"] {
                let other = try await Self.request(port, "/images/w=64,h=64/" + spelling)
                #expect(other.status == 200 && other.body == plus.body, "\(spelling)")
            }
            #expect(server.server.pipeline.counters.fetches == 3)  // cat one, missing, a+b
            // Dot segments in an absolute S3 key are refused, even under the prefix (403: refused
            // with every other source URL's parent segments, before anything is asked of S3).
            #expect(try await Self.request(port, "/images/thumb/s3://\(S3TestServer.bucket)/\(prefix)photos/..%2F..%2Fx.jpg").status == 403)
            #expect(try await Self.request(port, "/images/thumb/s3://\(S3TestServer.bucket)/\(prefix)photos/../x.jpg").status != 200)
        }
        // Wrong credentials: 502 with a generic text; S3's details stay in the log.
        var environment = s3.environment
        environment["AWS_SECRET_ACCESS_KEY"] = "wrong"
        let refused = try TestServer(environment: environment) { $0.origin = "s3://\(S3TestServer.bucket)/\(prefix)" }
        try await live(refused) { port in
            let answer = try await Self.request(port, "/images/thumb/photos/cat%20one.jpg")
            #expect(answer.status == 502)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(text == "the origin could not be reached\n")
        }
        // No credentials at all: a clear configuration error at start.
        #expect(throws: ServerConfigurationError.self) {
            _ = try TestServer(environment: [:]) { $0.origin = "s3://\(S3TestServer.bucket)/\(prefix)" }
        }
    }
}
