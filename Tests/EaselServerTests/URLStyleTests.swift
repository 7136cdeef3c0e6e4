import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselTestSupport
import Foundation
import Hummingbird
import EaselSupport
import HummingbirdTesting
import Testing

/// imgproxy and thumbor URLs map onto the native model; expiring native signatures; the info
/// endpoint. (The real client libraries drive a running server in scripts/compat-test.sh.)
@Suite(.timeLimit(.minutes(2))) struct URLStyleTests {
    func chain(_ options: ImagePlan) throws -> String {
        try options.processors(limit: 2048, maxPixels: 16_777_216).identifier
    }

    @Test func oneRequestInThreeStylesIsOneProcessorChain() throws {
        let imgproxy = try ImgproxyURL.parse("/sig/g:ce/rs:fill:300:200:1/q:80/plain/local:///a.jpg@jpg", presets: [:])
        let thumbor = try ThumborURL.parse("/sig/300x200/filters:quality(80)/a.jpg")
        // A centred fill is each peer's own: imgproxy's window sits at
        // roundToEven((outer − inner + 1) / 2), a pixel from the native fill's in half the sizes;
        // thumbor's fill cuts to the box's ratio first and then resizes, as thumbor does (its own
        // sampling: half a pixel from the native fill's).
        #expect(try chain(imgproxy.options) == "imgproxy(300x200,fill,up,g=c)")
        #expect(try chain(thumbor.options) == ThumborFill(width: 300, height: 200).identifier)
        // fit without enlarging: thumbor's fit-in, imgproxy's fit, the native fit.
        let fit = Resize(width: 300, height: 300, mode: .fit).identifier
        #expect(try chain(ThumborURL.parse("/sig/fit-in/300x300/a.jpg").options) == fit)
        #expect(try chain(ImgproxyURL.parse("/sig/rs:fit:300:300/plain/local:///a.jpg", presets: [:]).options) == fit)
        guard case .path(let segments) = imgproxy.source else { Issue.record("local:/// is a path"); return }
        #expect(segments == ["a.jpg"])
        #expect(imgproxy.options.quality == 80 && imgproxy.options.format == .jpeg)
    }

    @Test func imgproxySourcesSignaturesAndOptions() throws {
        // A base64url source split by slashes, with an extension.
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        let url = try ImgproxyURL.parse("/sig" + path, presets: [:])
        guard case .remote(let remote) = url.source else { Issue.record("an http source"); return }
        #expect(remote.absoluteString == "http://example.com/images/curiosity.jpg")
        #expect(url.options.format == .png && url.options.gravity == .smart(.attention) && url.options.enlarge == false)
        #expect(url.signedPath == path)
        // HMAC-SHA256(key, salt ‖ path), base64url without padding (Python's hmac gives the same).
        let key = Data(hex: "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881")!
        let salt = Data(hex: "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5")!
        #expect(ImgproxyURL.signature(path: path, key: key, salt: salt) == "90UxdwGRAI2bpLSHKkZculJau5ahfxfS0h3fMuQAf40")
        // Unknown options and bad values are 400s that say what is wrong.
        for (bad, word) in [("/s/foo:1/plain/local:///a.jpg", "foo"), ("/s/rs:stretch:1:1/plain/local:///a.jpg", "stretch"),
                            ("/s/q:101/plain/local:///a.jpg", "quality"), ("/s/g:sm:10:0/plain/local:///a.jpg", "offsets"),
                            ("/s/pr:missing/plain/local:///a.jpg", "missing"), ("/s/w:10/plain/local:///a.jpg@tiff", "tiff")] {
            #expect(throws: RequestError.self, "\(bad)") { try ImgproxyURL.parse(Substring(bad), presets: [:]) }
            // (Offsets of the nine directions are imgproxy's and parse: `g:no:10:0` moves north's window.)
            do { _ = try ImgproxyURL.parse(Substring(bad), presets: [:]) } catch let error as RequestError {
                #expect(error.status == .badRequest && error.message.contains(word), "\(bad): \(error.message)")
            }
        }
        // Presets expand where they are named; `default` applies first.
        let presets = ImgproxyURL.presets("default=q:60,thumb=rs:fill:100:100/g:sm")
        let preset = try ImgproxyURL.parse("/s/pr:thumb/plain/local:///a.jpg", presets: presets)
        #expect(preset.options.width == 100 && preset.options.mode == .fill && preset.options.quality == 60)
        // A DPR is imgproxy's geometry (capped by what the source allows), a DPR past 8 a 400.
        let dpr = try ImgproxyURL.parse("/s/rs:fit:300:200/dpr:2/plain/local:///a.jpg", presets: [:])
        #expect(try chain(dpr.options).hasPrefix("imgproxy(300x200,fit,noup,g=c,dpr=2.0"))
        let huge = try ImgproxyURL.parse("/s/rs:fit:2000:2000/dpr:9/plain/local:///a.jpg", presets: [:])
        #expect(throws: PlanError.self) { try chain(huge.options) }  // (the server answers it with a 400)
    }

    @Test func thumborPathsAndSignatures() throws {
        let url = try ThumborURL.parse("/sig/trim/10x20:110x220/fit-in/-300x0/left/top/smart/filters:quality(70):grayscale():watermark(http://h/m.png,-10,-10,50)/https://h/a.jpg")
        // (With a trim, the manual crop names pixels of the original: the trim's.)
        var trim = try Trim(tolerance: 0, metric: .euclidean)
        trim.thenCrop = [10, 20, 110, 220]
        #expect(url.options.trim == trim && url.options.crop == nil)
        #expect(url.options.mode == .fit && url.options.width == 300 && url.options.height == 0 && url.options.flipHorizontal)
        #expect(url.options.gravity == .smart(.face) && url.options.quality == 70 && url.options.adjustments.map(\.identifier) == [Grayscale().identifier])
        #expect(url.options.watermarks.count == 1)
        #expect(url.options.watermarks.first?.opacity == 0.5 && url.options.watermarks.first?.position == .southEast)
        #expect(url.options.watermarks.first?.offsetX == 10 && url.options.watermarks.first?.offsetY == 10)
        guard case .remote(let remote) = url.source else { Issue.record("an http source"); return }
        #expect(remote.absoluteString == "https://h/a.jpg")
        // thumbor's signature: urlsafe base64 (padded) of HMAC-SHA1 over the rest of the path.
        #expect(ThumborURL.signature(path: "300x200/smart/a.jpg", key: "MY_SECURE_KEY") == "-pbN-LgPydve6xPqcsf6gGKHYvM=")
        #expect(ThumborURL.verify(signature: "-pbN-LgPydve6xPqcsf6gGKHYvM=", path: "300x200/smart/a.jpg", key: "MY_SECURE_KEY"))
        // One spelling, as thumbor's own signer compares it: the unpadded form is refused.
        #expect(!ThumborURL.verify(signature: "-pbN-LgPydve6xPqcsf6gGKHYvM", path: "300x200/smart/a.jpg", key: "MY_SECURE_KEY"))
        #expect(!ThumborURL.verify(signature: "-pbN-LgPydve6xPqcsf6gGKHYvM=", path: "300x201/smart/a.jpg", key: "MY_SECURE_KEY"))
        let focal = try ThumborURL.parse("/sig/300x200/filters:focal(100x100:200x300)/a.jpg")
        #expect(focal.options.gravity == .focalPixel(x: 150, y: 200))
        #expect(throws: RequestError.self) { try ThumborURL.parse("/sig/300x200/filters:sepia()/a.jpg") }
        #expect(try ThumborURL.parse("/sig/full-fit-in/300x200/a.jpg").options.fitVariant.map { !$0.adaptive && $0.full } == true)
        #expect(throws: RequestError.self) { try ThumborURL.parse("/sig/half-fit-in/300x200/a.jpg") }
    }

    @Test func expiringNativeURLs() async throws {
        let server = try TestServer { $0.signingKeys = [keyA]; $0.signingSalt = salt }
        try await server.test { (client: any TestClientProtocol) async throws in
            let path = "/images/w=64,h=64/cat.jpg"
            let future = Int64(Date().timeIntervalSince1970) + 600, past = Int64(Date().timeIntervalSince1970) - 5
            let fresh = try SignedURLs.native(path: path, keyHex: keyA, saltHex: salt, expires: future)
            #expect(fresh.hasPrefix(path + "?exp=\(future)&s="))
            #expect(try await get(client, fresh).status == .ok)
            let stale = try SignedURLs.native(path: path, keyHex: keyA, saltHex: salt, expires: past)
            #expect(try await get(client, stale).status == .gone)
            // The expiry is signed: moving it forward breaks the signature.
            #expect(try await get(client, fresh.replacingOccurrences(of: "exp=\(future)", with: "exp=\(future + 1)")).status == .forbidden)
            // A signature without exp does not cover one added later.
            let plain = try SignedURLs.native(path: path, keyHex: keyA, saltHex: salt, expires: nil)
            #expect(try await get(client, plain).status == .ok)
            #expect(try await get(client, plain + "&exp=\(future)").status == .forbidden)
            #expect(try await get(client, path + "?exp=soon").status == .badRequest)
        }
    }

    @Test func theInfoEndpointDescribesASourceWithItsPlaceholders() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try await server.test { (client: any TestClientProtocol) async throws in
            let response = try await get(client, "/info/cat.jpg")
            #expect(response.status == .ok && response.headers[.contentType] == "application/json")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
            let info = try ImageDecoder.info(of: catJPEG)
            #expect(object["width"] as? Int == info.width && object["height"] as? Int == info.height)
            #expect(object["format"] as? String == "jpeg" && object["size"] as? Int == catJPEG.count)
            // The placeholders are those of the same tiny decode the library makes.
            let decoded = try ImageDecoder.decode(catJPEG, covering: Resize(width: 100, height: 100)
                .minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight))
            let preview = try Resize(width: 100, height: 100).process(decoded)
            #expect(object["blurhash"] as? String == (try Placeholder.blurHash(preview)))
            #expect(object["thumbhash"] as? String == (try Placeholder.thumbHashBase64(preview)))
            #expect((object["dominantColor"] as? String)?.count == 7)
            // The imgproxy form answers the same document.
            let imgproxy = try await get(client, "/imgproxy/info/insecure/plain/local:///cat.jpg")
            #expect(imgproxy.status == .ok)
            #expect(try await get(client, "/info/missing.jpg").status == .notFound)
            // A source that does not decode is the caller's (422, with the reason), never a 5xx.
            let corrupt = try await get(client, "/info/corrupt.jpg")
            let reason = String(decoding: Data(buffer: corrupt.body), as: UTF8.self)
            #expect(corrupt.status == .unprocessableContent && reason.contains("unsupported or corrupt image"), "\(corrupt.status): \(reason)")
        }
    }

    @Test func compatibleURLsAreSignedUnlessUnsignedURLsAreServed() async throws {
        let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881", saltHex = "520f"
        let server = try TestServer { $0.imgproxyKeys = [key]; $0.imgproxySalts = [saltHex]; $0.thumborSecurityKey = "k" }
        try await server.test { (client: any TestClientProtocol) async throws in
            let signed = try SignedURLs.imgproxy(path: "rs:fit:64:64/plain/local:///cat.jpg@png", keyHex: key, saltHex: saltHex)
            let answer = try await get(client, signed)
            #expect(answer.status == .ok && answer.headers[.contentType] == "image/png")
            #expect(try await get(client, "/imgproxy/insecure/rs:fit:64:64/plain/local:///cat.jpg@png").status == .forbidden)
            let thumbor = try SignedURLs.thumbor(path: "64x64/cat.jpg", key: "k")
            #expect(try await get(client, thumbor).status == .ok)
            #expect(try await get(client, "/thumbor/unsafe/64x64/cat.jpg").status == .forbidden)
            // Hostile paths stay out of the origin.
            let escape = try SignedURLs.imgproxy(path: "rs:fit:64:64/plain/local:///../etc/passwd@png", keyHex: key, saltHex: saltHex)
            #expect(try await get(client, escape).status == .notFound)
        }
        let open = try TestServer { $0.allowUnsignedAdHoc = true }
        try await open.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/imgproxy/insecure/rs:fit:64:64/plain/local:///cat.jpg@png").status == .ok)
            #expect(try await get(client, "/thumbor/unsafe/64x64/cat.jpg").status == .ok)
            // A wrong signature is still refused when unsigned URLs are served.
            #expect(try await get(client, "/thumbor/AAAA/64x64/cat.jpg").status == .forbidden)
        }
    }

    /// Found by review: each of these trapped (the process died) before; now each is a 4xx, or
    /// an answer, and nothing of an unsigned URL is parsed at all.
    @Test func hostileCompatibleURLsAreRefusedNotFatal() async throws {
        let open = try TestServer { $0.allowUnsignedAdHoc = true; $0.watermark = sampleURL("coffee-cup-cutout.png").path }
        try await open.test { (client: any TestClientProtocol) async throws in
            for path in ["/thumbor/unsafe/10x10/filters:quality(1e300)/cat.jpg", "/thumbor/unsafe/10x10/filters:round_corner(%7C,0,0,0)/cat.jpg",
                         "/thumbor/unsafe/10x10/filters:focal(9223372036854775807x0:9223372036854775807x0)/cat.jpg",
                         "/thumbor/unsafe/10x10/filters:watermark(cat.jpg,-9223372036854775808,0,0)/cat.jpg",
                         "/thumbor/unsafe/10x10/filters:fill(%EF%BC%A6%EF%BC%A6%EF%BC%A6)/cat.jpg",
                         "/thumbor/unsafe/9223372036854775807x1/cat.jpg", "/thumbor/unsafe/99999999999999999999x1/cat.jpg",
                         "/imgproxy/insecure/wm:1:ce:1e300/plain/local:///cat.jpg", "/imgproxy/insecure/w:9223372036854775807/plain/local:///cat.jpg",
                         "/imgproxy/insecure/c:1e300:1e300/plain/local:///cat.jpg", "/imgproxy/insecure/rs:fit:2048:2048:1/dpr:8/plain/local:///cat.jpg",
                         "/images/w=2048,h=2048,dpr=8/cat.jpg"] {
                let status = try await get(client, path).status
                #expect((400..<500).contains(status.code), "\(path): \(status)")
            }
            // Tolerances and sizes at the edges still answer.
            #expect(try await get(client, "/thumbor/unsafe/trim:442/20x20/cat.jpg").status == .ok)
            let tiny = try await get(client, "/imgproxy/insecure/rs:fit:100:100/dpr:0.001/plain/local:///cat.jpg@png")
            #expect(tiny.status == .ok)
            let bitmap = try ImageDecoder.decode(Data(buffer: tiny.body))
            #expect(bitmap.width == 1 && bitmap.height == 1, "a side asked for stays ≥ 1 px")
            // imgproxy's force does not enlarge without `enlarge` (native exact still does): the
            // asked aspect, at the largest size the source allows (imgproxy's `prepare.go`).
            let force = try ImageDecoder.decode(Data(buffer: try await get(client, "/imgproxy/insecure/rs:force:2000:10/plain/local:///cat.jpg@png").body))
            let info = try ImageDecoder.info(of: catJPEG)
            #expect(force.width == info.width && force.height == Int((10 * Double(info.width) / 2000).rounded()), "\(force.width)×\(force.height)")
            // Without enlarge, a DPR past what the source allows is capped: the source's size, not a refusal.
            let capped = try ImageDecoder.decode(Data(buffer: try await get(client, "/imgproxy/insecure/rs:fit:2048:2048/dpr:8/plain/local:///cat.jpg@png").body))
            #expect(capped.width == info.width && capped.height == info.height)
            // The configured watermark (outside the origin) composites; other files beside it stay unreadable.
            let marked = try await get(client, "/imgproxy/insecure/rs:fit:200:200/wm:0.5:soea:0:0:0.2/plain/local:///cat.jpg@png")
            let plain = try await get(client, "/imgproxy/insecure/rs:fit:200:200/plain/local:///cat.jpg@png")
            #expect(marked.status == .ok && plain.status == .ok)
            let a = try ImageDecoder.decode(Data(buffer: marked.body)), b = try ImageDecoder.decode(Data(buffer: plain.body))
            #expect(a.width == b.width && !a.hasSamePixels(as: b), "the configured mark is composited")
            #expect(a.pixel(x: 0, y: 0) == b.pixel(x: 0, y: 0), "…in the south-east corner only")
        }
        let signed = try TestServer { $0.thumborSecurityKey = "k"; $0.imgproxyKeys = ["00ff"]; $0.imgproxySalts = ["00"] }
        try await signed.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/thumbor/AAAA/10x10/filters:quality(1e300)/cat.jpg").status == .forbidden)
            #expect(try await get(client, "/imgproxy/AAAA/wm:1:ce:1e300/plain/local:///cat.jpg").status == .forbidden)
            #expect(try await get(client, "/imgproxy/insecure/rs:fit:10:10/plain/local:///cat.jpg").status == .forbidden)
        }
        #expect(throws: ServerConfigurationError.self) { try TestServer { $0.imgproxyKeys = [""]; $0.imgproxySalts = [""] } }
    }

    @Test func anExpiringURLIsNotCachedPastItsExpiry() async throws {
        let server = try TestServer { $0.signingKeys = [keyA]; $0.signingSalt = salt; $0.maxAge = 86_400 }
        try await server.test { (client: any TestClientProtocol) async throws in
            let expiry = Int64(Date().timeIntervalSince1970) + 120
            let response = try await get(client, try SignedURLs.native(path: "/images/thumb/cat.jpg", keyHex: keyA, saltHex: salt, expires: expiry))
            let maxAge = try #require(response.headers[.cacheControl]?.split(separator: "=").last.flatMap { Int($0) })
            #expect(response.status == .ok && maxAge <= 120 && maxAge >= 100)
            // The info document of an expiring URL too.
            let info = try await get(client, try SignedURLs.native(path: "/info/cat.jpg", keyHex: keyA, saltHex: salt, expires: expiry))
            let infoAge = try #require(info.headers[.cacheControl]?.split(separator: "=").last.flatMap { Int($0) })
            #expect(info.status == .ok && infoAge <= 120)
            #expect(throws: (any Error).self) { try SignedURLs.native(path: "/images/thumb/cat.jpg?x=1", keyHex: keyA, saltHex: salt, expires: nil) }
        }
    }

    @Test func aFormatMaySharpenAfterItsResize() async throws {
        let plain = try TestServer { $0.formats = [.init(name: "t", width: 128, height: 128)] }
        let sharp = try TestServer { $0.formats = [configured(.init(name: "t", width: 128, height: 128)) { $0.sharpen = 1 }] }
        let collected = Locked<[Data]>([])
        for server in [plain, sharp] {
            try await server.test { (client: any TestClientProtocol) async throws in
                let response = try await get(client, "/images/t/cat.jpg", headers: [.accept: "image/png"])
                #expect(response.status == .ok)
                collected.withLock { $0.append(Data(buffer: response.body)) }
            }
        }
        let bodies = collected.withLock { $0 }
        let a = try ImageDecoder.decode(bodies[0]), b = try ImageDecoder.decode(bodies[1])
        #expect(a.width == b.width && !a.hasSamePixels(as: b), "the sharpened format differs")
        #expect(throws: ServerConfigurationError.self) { try TestServer { $0.formats = [configured(.init(name: "t", width: 8, height: 8)) { $0.sharpen = 99 }] } }
    }

    @Test func aReplacedWatermarkIsUsedOnceItIsPurged() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true; $0.adminToken = "watermark-admin-token-0123" }
        try solidMark([0, 0, 255]).write(to: server.origin.child("mark.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            let url = "/thumbor/unsafe/fit-in/100x100/filters:watermark(mark.png,-0,-0,0):format(png)/cat.jpg"
            let blue = try ImageDecoder.decode(Data(buffer: try await get(client, url).body))
            #expect(blue.pixel(x: blue.width - 1, y: blue.height - 1) == [0, 0, 255, 255])
            try solidMark([255, 0, 0]).write(to: server.origin.child("mark.png"))
            let bearer: HTTPFields = [.authorization: "Bearer watermark-admin-token-0123"]
            #expect(try await get(client, "/images/mark.png", headers: bearer, method: .delete).status == .ok)
            let red = try ImageDecoder.decode(Data(buffer: try await get(client, url).body))
            #expect(red.pixel(x: red.width - 1, y: red.height - 1) == [255, 0, 0, 255])
        }
    }
}

/// A 20×10 opaque PNG of one colour: a watermark whose pixels a test can recognise.
func solidMark(_ rgb: [UInt8]) throws -> Data {
    var bitmap = Bitmap(width: 20, height: 10, pixelFormat: .rgba8)
    let rowBytes = bitmap.rowBytes
    bitmap.withUnsafeMutableBytes { bytes in
        for y in 0..<10 { for x in 0..<20 { for (c, v) in (rgb + [255]).enumerated() { bytes[y * rowBytes + x * 4 + c] = v } } }
    }
    return try ImageEncoder.encode(bitmap, as: .png())
}

extension URLStyleTests {
    /// imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR` (`imgproxyArgumentsSeparator`): options split on
    /// it (its own parser test, `size,100,100,1`); one character, not `/`.
    @Test func imgproxysArgumentsSeparator() throws {
        let url = try ImgproxyURL.parse("/sig/size,100,100,1/plain/local:///a.jpg", presets: [:], separator: ",")
        #expect(url.options.width == 100 && url.options.height == 100 && url.options.enlarge == true)
        #expect(throws: RequestError.self) { try ImgproxyURL.parse("/sig/size,100,100,1/plain/local:///a.jpg", presets: [:]) }
        var configuration = ServerConfiguration()
        try configuration.apply(environment: ["IMGPROXY_ARGUMENTS_SEPARATOR": ","])
        #expect(configuration.imgproxyArgumentsSeparator == ",")
        try configuration.validate()
        for bad in ["", "/", "::"] {
            configuration.imgproxyArgumentsSeparator = bad
            #expect(throws: ServerConfigurationError.self) { try configuration.validate() }
        }
    }
}

extension URLStyleTests {
    /// imgproxy's parser cases for gravity offsets (`crop:100:200:nowe:10:20`,
    /// `extend:1:so:10:20`) parse to the offsets they name; `extend:1:sm` and `g:re` are refused.
    @Test func imgproxysGravityOffsets() throws {
        let crop = try ImgproxyURL.parse("/s/crop:100:200:nowe:10:20/plain/local:///a.jpg", presets: [:])
        #expect(crop.options.cropGravity == .offset(.northWest, x: 10, y: 20))
        let extend = try ImgproxyURL.parse("/s/extend:1:so:10:20/plain/local:///a.jpg", presets: [:])
        #expect(extend.options.extend && extend.options.extendGravity == .offset(.south, x: 10, y: 20))
        #expect(throws: RequestError.self) { try ImgproxyURL.parse("/s/extend:1:sm/plain/local:///a.jpg", presets: [:]) }
        #expect(throws: RequestError.self) { try ImgproxyURL.parse("/s/g:re/plain/local:///a.jpg", presets: [:]) }
        // The offsets' placement: inward from the edges (free space 40 across, 20 down).
        #expect(Gravity.offset(.northWest, x: 10, y: 5).offset(freeX: 40, freeY: 20)! == (10, 5))
        #expect(Gravity.offset(.southEast, x: 10, y: 5).offset(freeX: 40, freeY: 20)! == (30, 15))
        #expect(Gravity.offset(.center, x: -30, y: 50).offset(freeX: 40, freeY: 20)! == (0, 20))
    }
}
