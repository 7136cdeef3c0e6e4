import EaselSupport
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
                // The family's third format follows after the answers.
                await server.server.pipeline.waitForBackgroundWork()
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
                // And purged by the image's own URL, in either form.
                #expect(try await get(client, "/images/thumb/q.jpg", headers: bearer, method: .delete).status == .ok)
                #expect(await server.server.pipeline.statistics().encodedMemoryBytes == 0)
                #expect(try await get(client, "/images/thumb/" + absolute).status == .ok)
                #expect(await server.server.pipeline.statistics().encodedMemoryBytes > 0)
                #expect(try await get(client, "/images/thumb/" + absolute, headers: bearer, method: .delete).status == .ok)
                #expect(await server.server.pipeline.statistics().encodedMemoryBytes == 0)
            }
        }
    }

    @Test func canonicallyEquivalentFileNamesAreTwoImages() async throws {
        let root = try TemporaryDirectory()
        try catJPEG.write(to: root.child("caf\u{E9}.jpg"))      // é as one code point (NFC)
        try coffeeJPEG.write(to: root.child("cafe\u{301}.jpg")) // e and a combining accent (NFD)
        try await TestServer { $0.origin = root.path }.test { (client: any TestClientProtocol) async throws in
            let nfc = try await get(client, "/images/thumb/caf%C3%A9.jpg")
            let nfd = try await get(client, "/images/thumb/cafe%CC%81.jpg")
            #expect(nfc.status == .ok && nfd.status == .ok)
            #expect(nfc.headers[.eTag] != nfd.headers[.eTag], "two files, two images")
            // And from memory, each its own.
            #expect(try await get(client, "/images/thumb/cafe%CC%81.jpg").headers[.eTag] == nfd.headers[.eTag])
            #expect(try await get(client, "/images/thumb/caf%C3%A9.jpg").headers[.eTag] == nfc.headers[.eTag])
        }
    }

    @Test func absoluteSourcesKeepTheirEscapesAndHaveOneSpelling() async throws {
        func canonical(_ text: String) -> String { ImageServer.canonical(URL(string: text)!).absoluteString }
        #expect(canonical("HTTP://Origin.Example.:80/a/%7e%2fb/./x/../c.jpg?") == "http://origin.example/a/~%2Fb/c.jpg")
        #expect(canonical("https://h:443/%41%2f") == "https://h/A%2F")
        #expect(ImageServer.absoluteSource("http://h/a%2Fb.jpg") == "http://h/a%2Fb.jpg", "an escaped slash stays escaped")
        #expect(ImageServer.absoluteSource("https%3A%2F%2Fh%2Fa.jpg") == "https://h/a.jpg", "a wholly encoded URL is decoded once")
        #expect(ImageServer.absoluteSource("hello.jpg") == nil)
        let origin = Origin()
        origin.serve("/a%2Fb.jpg", .file(catJPEG))
        origin.serve("/a/b.jpg", .file(coffeeJPEG))
        try await origin.run { base in
            let host = base.absoluteString.dropFirst("http://".count) // 127.0.0.1:PORT
            try await TestServer { $0.origin = base.absoluteString }.test { (client: any TestClientProtocol) async throws in
                let escaped = try await get(client, "/images/thumb/http://\(host)/a%2Fb.jpg")
                let plain = try await get(client, "/images/thumb/http://\(host)/a/b.jpg")
                #expect(escaped.status == .ok && plain.status == .ok)
                #expect(escaped.headers[.eTag] != plain.headers[.eTag], "a%2Fb.jpg is not a/b.jpg")
                #expect(origin.count("/a%2Fb.jpg") == 1 && origin.count("/a/b.jpg") == 1)
                // Other spellings of the same URL share its entry: no new fetch.
                #expect(try await get(client, "/images/thumb/HTTP://\(host)/a/./b.jpg").headers[.eTag] == plain.headers[.eTag])
                #expect(try await get(client, "/images/thumb/http://\(host)/%61/b.jpg").headers[.eTag] == plain.headers[.eTag])
                #expect(origin.count("/a/b.jpg") == 1)
                // A user name in the source is refused.
                #expect(try await get(client, "/images/thumb/http://user@\(host)/a/b.jpg").status == .forbidden)
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

    /// One URL, three kinds of client: AVIF, WebP and JPEG, each encoded once and cached under
    /// its own key (a repeat is an encoded-memory hit with the same bytes), `Vary: Accept` on all.
    @Test func theSameURLAnswersAVIFWebPOrJPEGByAccept() async throws {
        let server = try TestServer()
        try await server.test { (client: any TestClientProtocol) async throws in
            let kinds: [(accept: String?, type: String, file: ImageFileType)] = [
                ("image/avif,image/webp,image/apng,image/*,*/*;q=0.8", "image/avif", .avif),  // Chrome
                ("image/webp,*/*", "image/webp", .webp),
                ("image/avif;q=0, image/webp;q=0.0, image/*", "image/jpeg", .jpeg),            // q=0: not acceptable
                ("image/avif;q=0.1, image/webp, */*;q=0.5", "image/webp", .webp),              // relative q-values
                ("image/avif;q=0.4, image/webp;q=0.3, image/jpeg", "image/jpeg", .jpeg),
                (nil, "image/jpeg", .jpeg),
            ]
            var bodies: [String: Data] = [:]
            for kind in kinds {
                for round in 0..<2 {
                    let headers: HTTPFields = kind.accept.map { [.accept: $0] } ?? [:]
                    let response = try await get(client, "/images/thumb/cat.jpg", headers: headers)
                    #expect(response.status == .ok && response.headers[.contentType] == kind.type, "\(kind.accept ?? "none")")
                    #expect(response.headers[.vary] == "Accept")
                    let body = Data(buffer: response.body)
                    let info = try ImageDecoder.info(of: body)
                    #expect(info.fileType == kind.file && info.width == 256 && info.height == 170)
                    if round == 1 || bodies[kind.type] != nil { #expect(bodies[kind.type] == body) }
                    bodies[kind.type] = body
                }
            }
        }
        // One decode for the source, one encode per kind of answer; every repeat a memory hit.
        // (Four kinds: AVIF, WebP, JPEG, and JPEG for a client that also takes WebP — that key
        // would hold an animated WebP if the source were an animation.)
        #expect(server.server.pipeline.counters.decodes == 1)
        #expect(server.server.pipeline.counters.encodes == 4)
        #expect(server.server.metricsSnapshot()["encodedMemory"] == 8)
    }

    /// An animated GIF: WebP clients get every frame (Chrome, which takes AVIF too, included);
    /// others the first frame as JPEG.
    @Test func animatedGIFsStayAnimatedForWebPClients() async throws {
        let server = try TestServer()
        let palette: [UInt8] = [255, 0, 0, 0, 0, 255, 255, 255, 255]
        let frames = (0..<10).map { i in (0..<(400 * 300)).map { p -> UInt8 in p % 400 / 40 == i ? 1 : 2 } }
        try GIFCodec.encodeAnimation(width: 400, height: 300, frames: frames, palette: palette, delays: Array(repeating: 8, count: 10))
            .write(to: server.origin.child("anim.gif"))
        try await server.test { (client: any TestClientProtocol) async throws in
            for accept in ["image/webp,*/*", "image/avif,image/webp,image/apng,image/*,*/*;q=0.8", "image/webp,*/*"] {
                let response = try await get(client, "/images/thumb/anim.gif", headers: [.accept: accept])
                #expect(response.status == .ok && response.headers[.contentType] == "image/webp", "\(accept)")
                let body = Data(buffer: response.body)
                let info = try ImageDecoder.info(of: body)
                #expect(info.isAnimated && info.frameCount == 10 && info.width == 256 && info.height == 192, "\(accept)")
                var durations: [Int] = []
                try AnimationReader.frames(of: body, info: info) { durations.append($0.duration) }
                #expect(durations == Array(repeating: 80, count: 10))
            }
            let still = try await get(client, "/images/thumb/anim.gif")
            #expect(still.headers[.contentType] == "image/jpeg")
            #expect(try ImageDecoder.info(of: Data(buffer: still.body)).frameCount == 1)
        }
        // The repeat WebP request was a memory hit (the AVIF-and-WebP client's answer has its own key).
        #expect(server.server.metricsSnapshot()["encodedMemory"] == 1)
    }

    /// An animated GIF to a client that names GIF but not WebP stays an animated GIF (its own
    /// cache key); `f=gif` pins GIF for everyone, animations kept.
    @Test func animationsStayAnimatedAsGIFForGIFOnlyClients() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        let palette: [UInt8] = [255, 0, 0, 0, 0, 255, 255, 255, 255]
        let frames = (0..<4).map { i in (0..<(200 * 100)).map { p -> UInt8 in p % 200 / 50 == i ? 1 : 2 } }
        try GIFCodec.encodeAnimation(width: 200, height: 100, frames: frames, palette: palette, delays: [10, 20, 30, 40])
            .write(to: server.origin.child("anim.gif"))
        try await server.test { (client: any TestClientProtocol) async throws in
            for (uri, accept) in [("/images/thumb/anim.gif", "image/gif,image/jpeg,*/*;q=0.5"), ("/images/w=100,h=100,f=gif/anim.gif", "image/webp")] {
                let response = try await get(client, uri, headers: [.accept: accept])
                #expect(response.status == .ok && response.headers[.contentType] == "image/gif", "\(uri)")
                let body = Data(buffer: response.body)
                let info = try ImageDecoder.info(of: body)
                #expect(info.fileType == .gif && info.isAnimated && info.frameCount == 4, "\(uri)")
                var durations: [Int] = []
                try AnimationReader.frames(of: body, info: info) { durations.append($0.duration) }
                #expect(durations == [100, 200, 300, 400], "\(uri)")
            }
            // A still to the same GIF-only client: JPEG as before (GIF is for animations).
            try ImageEncoder.encode(paintedOpaque(width: 50, height: 50) { _, _ in [9, 99, 199] }, as: .png()).write(to: server.origin.child("still.png"))
            let still = try await get(client, "/images/thumb/still.png", headers: [.accept: "image/gif,image/jpeg"])
            #expect(still.headers[.contentType] == "image/jpeg")
            // WebP clients still get WebP.
            let webp = try await get(client, "/images/thumb/anim.gif", headers: [.accept: "image/webp,image/gif"])
            #expect(webp.headers[.contentType] == "image/webp")
            // A format pinned as it is (f=ico, f=bmp) is the same for every client: its first
            // frame, whatever Accept says, and no Vary.
            for format in ["ico", "bmp"] {
                for accept in ["image/webp", "image/gif", "*/*"] {
                    let response = try await get(client, "/images/w=64,h=64,f=\(format)/anim.gif", headers: [.accept: accept])
                    #expect(response.headers[.contentType] == (format == "ico" ? "image/x-icon" : "image/bmp"), "\(format) \(accept)")
                    #expect(response.headers[.vary] == nil, "\(format) \(accept)")
                }
            }
        }
    }

    /// After a restart the answers come from the disk (the animation under the AVIF key keeps
    /// its WebP content type), and a new kind of answer made from a table or memory bitmap still
    /// knows the source is animated (the disk's mark). An animation over the frame limit is
    /// answered with its first frame, as before.
    @Test func animationsSurviveARestartAndOversizedOnesBecomeStills() async throws {
        let cache = try TemporaryDirectory()
        let first = try TestServer { $0.cacheDirectory = cache.path }
        let palette: [UInt8] = [255, 0, 0, 0, 0, 255]
        let frames = (0..<3).map { i in (0..<(300 * 200)).map { p -> UInt8 in p % 300 / 100 == i ? 1 : 0 } }
        try GIFCodec.encodeAnimation(width: 300, height: 200, frames: frames, palette: palette, delays: [10, 10, 10])
            .write(to: first.origin.child("anim.gif"))
        // 300 frames of 8×8: over the default limit of 256.
        try GIFCodec.encodeAnimation(width: 8, height: 8, frames: (0..<300).map { i in [UInt8](repeating: UInt8(i % 2), count: 64) },
                                     palette: palette, delays: Array(repeating: 2, count: 300))
            .write(to: first.origin.child("long.gif"))
        let chrome = "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"
        try await first.test { (client: any TestClientProtocol) async throws in
            let answer = try await get(client, "/images/thumb/anim.gif", headers: [.accept: chrome])
            #expect(answer.headers[.contentType] == "image/webp")
            let long = try await get(client, "/images/thumb/long.gif", headers: [.accept: chrome])
            #expect(long.status == .ok && long.headers[.contentType] == "image/avif")  // the first frame, as a still
            #expect(try ImageDecoder.info(of: Data(buffer: long.body)).frameCount == 1)
        }
        let second = try TestServer { $0.cacheDirectory = cache.path; $0.origin = first.origin.path }
        try await second.test { (client: any TestClientProtocol) async throws in
            let again = try await get(client, "/images/thumb/anim.gif", headers: [.accept: chrome])
            #expect(again.headers[.contentType] == "image/webp", "a disk hit of an animation")
            #expect(try ImageDecoder.info(of: Data(buffer: again.body)).frameCount == 3)
            // The JPEG answer first (it leaves the first frame's bitmap in memory), then a
            // WebP-only client: the animation, though no decode happens in this process.
            let jpeg = try await get(client, "/images/small/anim.gif")
            #expect(jpeg.headers[.contentType] == "image/jpeg")
            let webp = try await get(client, "/images/small/anim.gif", headers: [.accept: "image/webp"])
            #expect(webp.headers[.contentType] == "image/webp")
            #expect(try ImageDecoder.info(of: Data(buffer: webp.body)).frameCount == 3)
        }
        #expect(second.server.metricsSnapshot()["encodedDisk"] == 1)
    }

    /// An animation replaced by a still without a purge: the next new answer finds the still
    /// (the animated mark is dropped), never a one-frame "animation" of it.
    @Test func anAnimationReplacedByAStillIsUnmarked() async throws {
        let server = try TestServer()
        let palette: [UInt8] = [255, 0, 0, 0, 0, 255]
        let frames = (0..<3).map { i in (0..<(120 * 80)).map { p -> UInt8 in p % 120 / 40 == i ? 1 : 0 } }
        try GIFCodec.encodeAnimation(width: 120, height: 80, frames: frames, palette: palette, delays: [10, 10, 10])
            .write(to: server.origin.child("swap.gif"))
        try await server.test { (client: any TestClientProtocol) async throws in
            let animated = try await get(client, "/images/thumb/swap.gif", headers: [.accept: "image/webp"])
            #expect(try ImageDecoder.info(of: Data(buffer: animated.body)).frameCount == 3)
            try GIFCodec.encodeAnimation(width: 120, height: 80, frames: [frames[0]], palette: palette, delays: [10])
                .write(to: server.origin.child("swap.gif"))
            let still = try await get(client, "/images/small/swap.gif", headers: [.accept: "image/avif,image/webp"])
            #expect(still.status == .ok && still.headers[.contentType] == "image/avif")
            #expect(try ImageDecoder.info(of: Data(buffer: still.body)).frameCount == 1)
        }
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
