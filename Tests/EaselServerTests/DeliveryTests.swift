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
import Testing

/// How answers go out (`DeliverySettings`): cache tags and purges by tag, the fallback image,
/// CORS, Client Hints and Save-Data.
@Suite(.timeLimit(.minutes(2))) struct DeliveryTests {
    static func width(_ response: TestResponse) throws -> Int { try ImageDecoder.info(of: Data(buffer: response.body)).width }
    /// `easel-` and 16 hex digits.
    static func isTag(_ text: some StringProtocol) -> Bool {
        text.count == 22 && text.hasPrefix("easel-") && text.dropFirst(6).allSatisfy(\.isHexDigit)
    }

    @Test func everyAnswerNamesItsCacheTagsInTheConfiguredHeader() async throws {
        let mark = try TemporaryDirectory()
        try ImageEncoder.encode(painted(width: 8, height: 8) { _, _ in [255, 0, 0, 255] }, as: .png()).write(to: mark.child("mark.png"))
        try await TestServer { $0.allowUnsignedAdHoc = true }.test { (client: any TestClientProtocol) async throws in
            // Surrogate-Key by default, for every URL style.
            for path in ["/images/thumb/cat.jpg", "/imgproxy/insecure/rs:fit:40:40/plain/local:///cat.jpg", "/thumbor/unsafe/40x40/cat.jpg"] {
                let tag = try #require(try await get(client, path).headers[HTTPField.Name("Surrogate-Key")!], "\(path)")
                #expect(Self.isTag(tag), "\(path): \(tag)")
            }
        }
        try await TestServer {
            $0.allowUnsignedAdHoc = true
            $0.delivery.cacheTagHeader = "Cache-Tag"
            $0.watermark = mark.child("mark.png").path
        }.test { (client: any TestClientProtocol) async throws in
            // Cloudflare's header, comma-separated: the source's tag and the watermark's.
            let answer = try await get(client, "/imgproxy/insecure/rs:fit:40:40/wm:0.5:ce/plain/local:///cat.jpg")
            let tags = try #require(answer.headers[HTTPField.Name("Cache-Tag")!]).split(separator: ",")
            #expect(tags.count == 2 && tags.allSatisfy { Self.isTag($0) } && Set(tags).count == 2)
            #expect(answer.headers[HTTPField.Name("Surrogate-Key")!] == nil)
        }
        try await TestServer { $0.delivery.cacheTagHeader = "" }.test { (client: any TestClientProtocol) async throws in
            let answer = try await get(client, "/images/thumb/cat.jpg")
            #expect(answer.headers[HTTPField.Name("Surrogate-Key")!] == nil)
        }
        #expect(throws: ServerConfigurationError.self) { _ = try TestServer { $0.delivery.cacheTagHeader = "Bad Header" } }
        // Varnish's BANs match Surrogate-Key: another header with them is refused at start.
        #expect(throws: ServerConfigurationError.self) {
            _ = try TestServer { $0.delivery.cacheTagHeader = "Cache-Tag"; $0.cdnBanURLs = ["http://127.0.0.1:6081/"] }
        }
    }

    @Test func aPurgeCallsEveryPurgeByTagEndpointWithTheSourcesTag() async throws {
        let cdn = Origin()
        cdn.serve("/zones/z/purge_cache", .status(200))
        try await cdn.run { base in
            let server = try TestServer {
                $0.adminToken = "secret-token-0123456789"
                $0.delivery.purgeByTag = [
                    .init(url: base.absoluteString + "/zones/z/purge_cache", headers: ["Authorization": "Bearer cf-token"], body: #"{"tags": ["{tag}"]}"#),
                    .init(url: base.absoluteString + "/service/s/purge/{tag}"),
                ]
            }
            try await server.test { (client: any TestClientProtocol) async throws in
                let tag = try #require(try await get(client, "/images/thumb/cat.jpg").headers[HTTPField.Name("Surrogate-Key")!])
                cdn.serve("/service/s/purge/" + tag, .status(200))
                let purged = try await get(client, "/images/cat.jpg", headers: [.authorization: "Bearer secret-token-0123456789"], method: .delete)
                #expect(purged.status == .ok, "\(String(buffer: purged.body))")
                let calls = cdn.all.filter { $0.method == .post }
                let cloudflare = try #require(calls.first { $0.path == "/zones/z/purge_cache" })
                #expect(String(decoding: cloudflare.body, as: UTF8.self) == #"{"tags": ["\#(tag)"]}"#)
                #expect(cloudflare.headers[.authorization] == "Bearer cf-token" && cloudflare.headers[.contentType] == "application/json")
                #expect(calls.contains { $0.path == "/service/s/purge/" + tag })
            }
        }
    }

    /// A directory with `fallback.png`: 60 × 40 pixels of `colour`.
    static func fallbackFile(_ colour: [UInt8]) throws -> TemporaryDirectory {
        let files = try TemporaryDirectory()
        try ImageEncoder.encode(painted(width: 60, height: 40) { _, _ in colour }, as: .png()).write(to: files.child("fallback.png"))
        return files
    }

    @Test func theFallbackImageAnswersForMissingAndBrokenSources() async throws {
        let files = try Self.fallbackFile([0, 0, 255, 255])
        let server = try TestServer {
            $0.allowUnsignedAdHoc = true
            $0.delivery.fallbackImage = files.child("fallback.png").path
            $0.delivery.fallbackMaxAge = 60
        }
        try await server.test { (client: any TestClientProtocol) async throws in
            for source in ["missing.jpg", "corrupt.jpg", "notes.jpg"] {
                let answer = try await get(client, "/images/w=30,h=30,f=png/\(source)")
                #expect(answer.status == .ok && answer.headers[ImageServer.fallbackField] == "1", "\(source): \(answer.status)")
                let image = try ImageDecoder.decode(Data(buffer: answer.body))
                #expect(image.width == 30 && image.pixel(x: 15, y: 10) == [0, 0, 255, 255], "processed as the source would be")
                #expect(answer.headers[.cacheControl] == "public, max-age=60")
                #expect(answer.headers[HTTPField.Name("Surrogate-Key")!]?.split(separator: " ").count == 2, "tagged with the source too")
            }
            // Never cached as the source: once it exists, it is answered.
            try catJPEG.write(to: server.origin.child("missing.jpg"))
            let found = try await get(client, "/images/w=30,h=30,f=png/missing.jpg")
            #expect(found.status == .ok && found.headers[ImageServer.fallbackField] == nil)
            // The client's own mistakes are still theirs.
            #expect(try await get(client, "/images/w=30,h=30,f=nope/missing2.jpg").status == .badRequest)
            #expect(try await get(client, "/images/w=30,h=30/../secret.jpg").status != .ok)
        }
        try await TestServer {
            $0.delivery.fallbackImage = files.child("fallback.png").path
            $0.delivery.fallbackStatus = 404
        }.test { (client: any TestClientProtocol) async throws in
            let answer = try await get(client, "/images/thumb/missing.jpg")
            #expect(answer.status == .notFound && answer.headers[.contentType] == "image/jpeg" && answer.body.readableBytes > 100)
        }
        #expect(throws: ServerConfigurationError.self) { _ = try TestServer { $0.delivery.fallbackImage = files.child("none.png").path } }
        #expect(throws: ServerConfigurationError.self) {
            _ = try TestServer { $0.delivery.fallbackImage = files.child("fallback.png").path; $0.delivery.fallbackStatus = 304 }
        }
        // A fallback that fails (a URL off the allow-list) leaves the source's own error.
        try await TestServer { $0.delivery.fallbackImage = "http://127.0.0.9:9/fallback.png" }.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/images/thumb/missing.jpg").status == .notFound)
        }
    }

    @Test func corsLetsListedOriginsReadAnswers() async throws {
        try await TestServer { $0.delivery.corsAllowOrigins = ["https://a.example"] }.test { (client: any TestClientProtocol) async throws in
            let listed = try await get(client, "/images/thumb/cat.jpg", headers: [.origin: "https://a.example"])
            #expect(listed.headers[.accessControlAllowOrigin] == "https://a.example" && listed.headers[.vary]?.contains("Origin") == true)
            let other = try await get(client, "/images/thumb/cat.jpg", headers: [.origin: "https://b.example"])
            #expect(other.headers[.accessControlAllowOrigin] == nil && other.headers[.vary]?.contains("Origin") == true)
            let missing = try await get(client, "/images/thumb/nothing.jpg", headers: [.origin: "https://a.example"])
            #expect(missing.status == .notFound && missing.headers[.accessControlAllowOrigin] == "https://a.example", "errors too")
            let preflight = try await get(client, "/images/thumb/cat.jpg", headers: [
                .origin: "https://a.example", .accessControlRequestMethod: "GET", .accessControlRequestHeaders: "x-trace"], method: .options)
            #expect(preflight.status == .noContent && preflight.headers[.accessControlAllowMethods] == "GET, HEAD")
            #expect(preflight.headers[.accessControlAllowHeaders] == "x-trace" && preflight.headers[.accessControlMaxAge] == "86400")
        }
        try await TestServer { $0.delivery.corsAllowOrigins = ["*"] }.test { (client: any TestClientProtocol) async throws in
            let any = try await get(client, "/images/thumb/cat.jpg", headers: [.origin: "https://c.example"])
            #expect(any.headers[.accessControlAllowOrigin] == "*" && any.headers[.vary]?.contains("Origin") != true)
        }
        #expect(throws: ServerConfigurationError.self) { _ = try TestServer { $0.delivery.corsAllowOrigins = ["a.example/path"] } }
    }

    @Test func clientHintsSizeAnswersThatAskForThem() async throws {
        try await TestServer {
            $0.allowUnsignedAdHoc = true
            $0.delivery.acceptClientHints = true
        }.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/").headers[ImageServer.acceptCHField]?.contains("Sec-CH-Width") == true)
            let hints: HTTPFields = [HTTPField.Name("Sec-CH-Width")!: "200", HTTPField.Name("Sec-CH-DPR")!: "2"]
            // 200 device pixels at DPR 2: a box 100 CSS pixels wide, made at 2x.
            let sized = try await get(client, "/images/w=auto,h=400,dpr=auto,f=png/cat.jpg", headers: hints)
            #expect(try Self.width(sized) == 200)
            #expect(sized.headers[.vary]?.contains("Sec-CH-Width") == true && sized.headers[.vary]?.contains("Sec-CH-DPR") == true)
            // Without hints: the fallback width, else no width but the source's.
            #expect(try Self.width(try await get(client, "/images/w=auto:64,h=400,f=png/cat.jpg")) == 64)
            #expect(try Self.width(try await get(client, "/images/w=auto,h=400,f=png/cat.jpg")) == 451)
            // Without a width hint, the viewport (CSS pixels) caps the fallback width, times the
            // DPR; a width hint wins over it.
            let viewport: HTTPFields = [HTTPField.Name("Sec-CH-Viewport-Width")!: "100", HTTPField.Name("Sec-CH-DPR")!: "2"]
            let capped = try await get(client, "/images/w=auto,h=400,dpr=auto,f=png/cat.jpg", headers: viewport)
            #expect(try Self.width(capped) == 200 && capped.headers[.vary]?.contains("Sec-CH-Viewport-Width") == true)
            #expect(try Self.width(try await get(client, "/images/w=auto:64,h=400,f=png/cat.jpg", headers: viewport)) == 64)
            #expect(try Self.width(try await get(client, "/images/w=auto,h=400,f=png/cat.jpg", headers: [HTTPField.Name("Viewport-Width")!: "90"])) == 90)
            #expect(try Self.width(try await get(client, "/images/w=auto,h=400,f=png/cat.jpg",
                                                 headers: [HTTPField.Name("Viewport-Width")!: "90", HTTPField.Name("Width")!: "120"])) == 120)
            // A width hint without dpr=auto is device pixels at the URL's DPR.
            #expect(try Self.width(try await get(client, "/images/w=auto,h=400,f=png/cat.jpg", headers: [HTTPField.Name("Width")!: "120"])) == 120)
            // Huge hints are held to the limits, never a refusal.
            let huge = try await get(client, "/images/w=auto,h=2000,dpr=auto,fit=fill,f=png/cat.jpg",
                                     headers: [HTTPField.Name("Sec-CH-Width")!: "90000", HTTPField.Name("Sec-CH-DPR")!: "8"])
            #expect(huge.status == .ok, "\(String(buffer: huge.body))")
        }
        try await TestServer { $0.allowUnsignedAdHoc = true; $0.imgproxy.enableClientHints = true }.test { (client: any TestClientProtocol) async throws in
            // Hints at the edges: a DPR of almost 0, a URL with its own DPR and no hint.
            let tiny: HTTPFields = [HTTPField.Name("Sec-CH-DPR")!: "1e-300", HTTPField.Name("Sec-CH-Width")!: "1"]
            #expect(try await get(client, "/images/w=auto,h=400,dpr=auto,f=png/cat.jpg", headers: tiny).status == .ok)
            #expect(try await get(client, "/imgproxy/insecure/q:80/plain/local:///cat.jpg@png", headers: tiny).status == .ok)
            #expect(try await get(client, "/images/w=auto,h=400,dpr=2,f=png/cat.jpg").status == .ok)
            #expect(try await get(client, "/images/w=auto:500,h=500,dpr=2,f=png/cat.jpg", headers: [HTTPField.Name("Sec-CH-Width")!: "3000"]).status == .ok)
        }
        // Requests with hints, Save-Data or Origin never come from the ready answers.
        for name in ["Sec-CH-Width", "Sec-CH-Viewport-Width", "Viewport-Width", "Save-Data", "Origin"] {
            var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/images/thumb/cat.jpg")
            head.headers.add(name: name, value: "1")
            #expect(ReadyAnswers.Key(head) == nil, "\(name)")
        }
    }

    @Test func saveDataLowersTheQuality() async throws {
        try await TestServer {
            $0.allowUnsignedAdHoc = true
            $0.delivery.saveData = true
        }.test { (client: any TestClientProtocol) async throws in
            for spec in ["w=200,h=200,f=jpeg,q=90", "w=200,h=200,f=webp", "w=200,h=200,f=jpeg,q=auto"] {
                let full = try await get(client, "/images/\(spec)/cat.jpg", headers: [.accept: "image/webp"])
                let saving = try await get(client, "/images/\(spec)/cat.jpg", headers: [.accept: "image/webp", ImageServer.saveDataField: "on"])
                #expect(saving.body.readableBytes < full.body.readableBytes, "\(spec): \(saving.body.readableBytes) vs \(full.body.readableBytes)")
                #expect(full.headers[.vary]?.contains("Save-Data") == true && saving.headers[.vary]?.contains("Save-Data") == true)
            }
        }
        try await TestServer { $0.allowUnsignedAdHoc = true }.test { (client: any TestClientProtocol) async throws in
            // Not honoured unless configured: nothing varies on it.
            let full = try await get(client, "/images/w=200,h=200,f=jpeg,q=90/cat.jpg")
            let saving = try await get(client, "/images/w=200,h=200,f=jpeg,q=90/cat.jpg", headers: [ImageServer.saveDataField: "on"])
            #expect(Data(buffer: full.body) == Data(buffer: saving.body) && full.headers[.vary]?.contains("Save-Data") != true)
        }
    }

    @Test func variablesSetTheDeliverySettings() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: [
            "EASEL_CORS_ALLOW_ORIGIN": "https://a.example, https://b.example", "EASEL_ACCEPT_CH": "1", "EASEL_SAVE_DATA": "true",
            "IMGPROXY_FALLBACK_IMAGE_PATH": "/srv/fallback.png", "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "404", "IMGPROXY_FALLBACK_IMAGE_TTL": "30",
            "EASEL_CACHE_TAG_HEADER": "Edge-Cache-Tag",
        ])
        let delivery = configuration.delivery
        #expect(delivery.corsAllowOrigins == ["https://a.example", "https://b.example"] && delivery.acceptClientHints && delivery.saveData)
        #expect(delivery.fallbackImage == "/srv/fallback.png" && delivery.fallbackStatus == 404 && delivery.fallbackMaxAge == 30)
        #expect(delivery.cacheTagHeader == "Edge-Cache-Tag" && delivery.commaSeparatedTags)
    }
}
