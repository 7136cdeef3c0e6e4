import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselStorage
import EaselTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

let coffeeJPEG = try! Data(contentsOf: sampleURL("coffee-cup.jpg"))

/// One request path: the pipeline owns every tier; the server only adapts HTTP to it.
@Suite(.timeLimit(.minutes(2))) struct RequestPathTests {
    @Test func aPurgeThroughAnyURLFormEmptiesEveryTier() async throws {
        let origin = Origin()
        origin.serve("/q.jpg", .file(catJPEG))
        try await origin.run { base in
            let absolute = base.appendingPathComponent("q.jpg").absoluteString
            let server = try TestServer { $0.origin = base.absoluteString; $0.adminToken = "secret-token-0123456789"; $0.allowUnsignedAdHoc = true }
            let bearer: HTTPFields = [.authorization: "Bearer secret-token-0123456789"]
            try await server.test { (client: any TestClientProtocol) async throws in
                let thumb = try await get(client, "/images/thumb/q.jpg")
                #expect(thumb.status == .ok)
                // The absolute form of the same image is the same cache entry: no second fetch.
                let absoluteThumb = try await get(client, "/images/thumb/" + absolute)
                #expect(absoluteThumb.headers[.eTag] == thumb.headers[.eTag])
                #expect(try await get(client, "/images/small/" + absolute, headers: [.accept: "image/webp"]).status == .ok)
                #expect(try await get(client, "/images/w=50,h=40,f=png/q.jpg").status == .ok)
                #expect(origin.count("/q.jpg") == 1)
                let full = await server.server.pipeline.statistics()
                #expect(full.encodedMemoryBytes > 0 && full.memoryBytes > 0 && full.diskEntries > 0)
                #expect(full.tableEntries.values.reduce(0, +) == 3, "the family's three formats: \(full.tableEntries)")

                // Purged through the absolute form; every tier forgets the source.
                #expect(try await get(client, "/images/" + absolute, headers: bearer, method: .delete).status == .ok)
                let empty = await server.server.pipeline.statistics()
                #expect(empty.encodedMemoryBytes == 0 && empty.memoryBytes == 0, "memory: \(empty)")
                #expect(empty.tableEntries.values.reduce(0, +) == 0 && empty.diskEntries == 0, "tables and disk: \(empty)")

                // A new image at the origin is served through every form.
                origin.serve("/q.jpg", .file(coffeeJPEG))
                let fresh = try await get(client, "/images/thumb/q.jpg")
                #expect(fresh.headers[.eTag] != thumb.headers[.eTag])
                #expect(try await get(client, "/images/thumb/" + absolute).headers[.eTag] == fresh.headers[.eTag])
                #expect(origin.count("/q.jpg") == 2)
                // And purged by the image's own URL.
                #expect(try await get(client, "/images/thumb/q.jpg", headers: bearer, method: .delete).status == .ok)
                #expect(await server.server.pipeline.statistics().encodedMemoryBytes == 0)
            }
        }
    }

    @Test func anAdHocPNGHasTheSameBytesAndETagFromEveryTier() async throws {
        let cache = try TemporaryDirectory()
        let first = try TestServer { $0.allowUnsignedAdHoc = true; $0.cacheDirectory = cache.path }
        let path = "/images/w=120,h=80,fit=fill,f=png/cat.jpg"
        let answers = Locked<[(body: Data, etag: String?)]>([])
        try await first.test { (client: any TestClientProtocol) async throws in
            for _ in 0..<2 {
                let response = try await get(client, path)
                #expect(response.status == .ok && response.headers[.contentType] == "image/png")
                answers.withLock { $0.append((Data(buffer: response.body), response.headers[.eTag])) }
            }
        }
        #expect(first.server.metricsSnapshot()["file"] == 1 && first.server.metricsSnapshot()["encodedMemory"] == 1)
        // A restart: the same cache directory, a new server, its memory empty.
        let second = try TestServer { $0.allowUnsignedAdHoc = true; $0.cacheDirectory = cache.path; $0.origin = first.origin.path }
        try await second.test { (client: any TestClientProtocol) async throws in
            let response = try await get(client, path)
            answers.withLock { $0.append((Data(buffer: response.body), response.headers[.eTag])) }
        }
        #expect(second.server.metricsSnapshot()["encodedDisk"] == 1, "\(second.server.metricsSnapshot())")
        let all = answers.withLock { $0 }
        #expect(all.count == 3)
        #expect(all.allSatisfy { $0.body == all[0].body && $0.etag == all[0].etag }, "cold, memory and disk answers are identical")
        let decoded = try ImageDecoder.decode(all[0].body)
        #expect(decoded.width == 120 && decoded.height == 80)
    }

    @Test func aRequestWhoseEncodeOutlastsTheTimeoutGets504() async throws {
        let server = try TestServer { $0.requestTimeout = 0.3 }
        let gate = Gate()
        server.server.pipeline.encodeHook.withLock { $0 = { try? await gate.wait() } }
        try await server.test { (client: any TestClientProtocol) async throws in
            let response = try await get(client, "/images/thumb/cat.jpg")
            #expect(response.status == .gatewayTimeout)
            gate.open()
        }
    }

    @Test func theServerModuleKeepsNoCacheCoalescerOrEncoderOfItsOwn() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/EaselServer")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count >= 5)
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for forbidden in ["MemoryCache", "DiskCache(", "TieredCache", "Coalescer", "InFlightFetches", "ImageEncoder", "ImageDecoder"] {
                #expect(!text.contains(forbidden), "\(file) uses \(forbidden)")
            }
        }
    }
}
