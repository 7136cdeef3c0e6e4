import AsyncHTTPClient
import Crypto
import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselStorage
import EaselTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Prometheus
import Testing

let catJPEG = try! Data(contentsOf: sampleURL("chelsea-cat.jpg"))

/// A server over a fresh origin directory (the cat, a corrupt JPEG, a text file) and cache.
struct TestServer {
    let origin: TemporaryDirectory
    let cache: TemporaryDirectory
    let server: ImageServer

    init(environment: [String: String] = [:], _ adjust: (inout ServerConfiguration) -> Void = { _ in }) throws {
        origin = try TemporaryDirectory()
        cache = try TemporaryDirectory()
        try catJPEG.write(to: origin.child("cat.jpg"))
        try catJPEG.prefix(3000).write(to: origin.child("corrupt.jpg"))
        try Data("hello".utf8).write(to: origin.child("notes.jpg"))
        try FileManager.default.createDirectory(at: origin.child("sub dir"), withIntermediateDirectories: true)
        try catJPEG.write(to: origin.child("sub dir/cat 2.jpg"))
        var configuration = ServerConfiguration()
        configuration.origin = origin.path
        configuration.cacheDirectory = cache.path
        // The access log (on by default) is the CLI tests' subject (LogFormatTests): here it
        // would only fill the test output with a line per request.
        configuration.accessLog = false
        adjust(&configuration)
        server = try ImageServer(configuration: configuration, registry: PrometheusCollectorRegistry(), environment: environment)
    }

    /// Runs `body` with an in-process client of the router.
    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = Application(router: server.router())
        // Shut down whatever the body does: a server dropped with open clients traps.
        do { try await app.test(.router, body) } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}

func get(_ client: any TestClientProtocol, _ uri: String, headers: HTTPFields = [:], method: HTTPRequest.Method = .get) async throws -> TestResponse {
    try await client.execute(uri: uri, method: method, headers: headers)
}

let keyA = "0f1e2d3c4b5a69788796a5b4c3d2e1f0", keyB = "a1b2c3d4e5f60718293a4b5c6d7e8f90", salt = "5a17"

func signature(_ path: String, key: String = keyA) -> String {
    URLSigner(keys: [Data(hex: key)!], salt: Data(hex: salt)!).signature(path: path)
}

@Suite struct ServerTests {
    @Test func everyURLStyleIsCountedUnderItsOwnRoute() async throws {
        try await TestServer { $0.allowUnsignedAdHoc = true }.test { (client: any TestClientProtocol) async throws in
            for path in ["/imgproxy/insecure/rs:fit:40:40/plain/local:///cat.jpg", "/thumbor/unsafe/40x40/cat.jpg", "/info/cat.jpg",
                         "/imgproxy/info/insecure/plain/local:///cat.jpg", "/images/w=40,h=40/cat.jpg"] {
                #expect(try await get(client, path).status == .ok, "\(path)")
            }
            _ = try await get(client, "/thumbor/unsafe/40x40/missing.jpg")
            let metrics = String(buffer: try await get(client, "/metrics").body)
            for line in [#"easel_http_requests_total{route="imgproxy",status="200"} 1"#, #"easel_http_requests_total{route="thumbor",status="200"} 1"#,
                         #"easel_http_requests_total{route="thumbor",status="404"} 1"#, #"easel_http_requests_total{route="info",status="200"} 2"#,
                         #"easel_http_requests_total{route="images",status="200"} 1"#] {
                #expect(metrics.contains(line), "\(line)\n\(metrics)")
            }
        }
    }

    @Test func healthAndMetrics() async throws {
        try await TestServer().test { (client: any TestClientProtocol) async throws in
            let health = try await get(client, "/health")
            #expect(health.status == .ok && String(buffer: health.body) == "ok\n")
            _ = try await get(client, "/images/thumb/cat.jpg")
            let metrics = String(buffer: try await get(client, "/metrics").body)
            #expect(metrics.contains(#"easel_http_requests_total{route="images",status="200"} 1"#), "\(metrics)")
            #expect(metrics.contains("easel_http_request_duration_seconds_bucket"))
            // One counter per event: answers by tier are the pipeline's, in the server's registry.
            #expect(metrics.contains(#"easel_pipeline_requests_total{tier="file"} 1"#), "a file origin's answers are their own tier")
            #expect(!metrics.contains("easel_answers_total"))
            #expect(metrics.contains(#"easel_http_requests_total{route="health",status="200"} 1"#), "every route is labelled")
            #expect(metrics.contains(#"easel_cache_bytes{store="disk"}"#))
            #expect(metrics.contains("easel_requests_in_progress"))
        }
    }

    @Test func namedFormatsCarryCachingHeadersAndNegotiateWebP() async throws {
        try await TestServer().test { (client: any TestClientProtocol) async throws in
            let response = try await get(client, "/images/thumb/cat.jpg")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "image/jpeg")
            #expect(response.headers[.contentLength] == String(response.body.readableBytes))
            #expect(response.headers[.cacheControl] == "public, max-age=86400")
            #expect(response.headers[.vary] == "Accept")
            let etag = try #require(response.headers[.eTag])
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
            let info = try ImageDecoder.info(of: Data(buffer: response.body))
            #expect(info.fileType == .jpeg && info.width == 256 && info.height == 170)

            let again = try await get(client, "/images/thumb/cat.jpg", headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified && again.body.readableBytes == 0)
            #expect(again.headers[.eTag] == etag)
            let other = try await get(client, "/images/thumb/cat.jpg", headers: [.ifNoneMatch: "\"nope\""])
            #expect(other.status == .ok)
            let weak = try await get(client, "/images/thumb/cat.jpg", headers: [.ifNoneMatch: "\"x\", W/" + etag])
            #expect(weak.status == .notModified, "If-None-Match compares weakly")
            let refused = try await get(client, "/images/thumb/cat.jpg", headers: [.accept: "image/webp;q=0, image/*"])
            #expect(refused.headers[.contentType] == "image/jpeg")

            let webp = try await get(client, "/images/square/cat.jpg", headers: [.accept: "image/webp,*/*"])
            #expect(webp.headers[.contentType] == "image/webp")
            let webpInfo = try ImageDecoder.info(of: Data(buffer: webp.body))
            #expect(webpInfo.fileType == .webp && webpInfo.width == 256 && webpInfo.height == 256)
            #expect(webp.headers[.eTag] != etag)

            let head = try await get(client, "/images/thumb/cat.jpg", method: .head)
            #expect(head.status == .ok && head.body.readableBytes == 0)
            #expect(head.headers[.contentLength] == String(response.body.readableBytes))

            let nested = try await get(client, "/images/small/sub%20dir/cat%202.jpg")
            #expect(nested.status == .ok)
        }
    }

    @Test func adHocSizesNeedAValidSignature() async throws {
        try await TestServer().test { (client: any TestClientProtocol) async throws in
            // No keys and not enabled: refused.
            #expect(try await get(client, "/images/w=100,h=100/cat.jpg").status == .forbidden)
        }
        try await TestServer { $0.signingKeys = [keyA, keyB]; $0.signingSalt = salt }.test { (client: any TestClientProtocol) async throws in
            let path = "/images/w=100,h=100,fit=fill,q=70,f=png/cat.jpg"
            let good = signature(path)
            let signed = try await get(client, path + "?s=" + good)
            #expect(signed.status == .ok && signed.headers[.contentType] == "image/png")
            let info = try ImageDecoder.info(of: Data(buffer: signed.body))
            #expect(info.width == 100 && info.height == 100)
            // The second key works too (rotation).
            #expect(try await get(client, path + "?s=" + signature(path, key: keyB)).status == .ok)
            // Missing, truncated, tampered, for another path, with another key.
            #expect(try await get(client, path).status == .forbidden)
            #expect(try await get(client, path + "?s=" + good.dropLast(3)).status == .forbidden)
            var tampered = Array(good)
            tampered[5] = tampered[5] == "A" ? "B" : "A"
            #expect(try await get(client, path + "?s=" + String(tampered)).status == .forbidden)
            #expect(try await get(client, "/images/w=101,h=100,fit=fill,q=70,f=png/cat.jpg?s=" + good).status == .forbidden)
            #expect(try await get(client, path + "?s=" + signature(path, key: "00112233445566778899aabbccddeeff")).status == .forbidden)
            // Named formats stay open unless signNamedFormats.
            #expect(try await get(client, "/images/thumb/cat.jpg").status == .ok)
            // Bad options are 400, too large sizes too.
            let huge = "/images/w=99999,h=10/cat.jpg"
            #expect(try await get(client, huge + "?s=" + signature(huge)).status == .badRequest)
        }
        try await TestServer { $0.allowUnsignedAdHoc = true }.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/images/w=64,h=64/cat.jpg").status == .ok)
        }
        try await TestServer { $0.signingKeys = [keyA]; $0.signingSalt = salt; $0.signNamedFormats = true }.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/images/thumb/cat.jpg").status == .forbidden)
            #expect(try await get(client, "/images/thumb/cat.jpg?s=" + signature("/images/thumb/cat.jpg")).status == .ok)
        }
    }

    @Test func jpegXLIsNegotiatedOnlyWhenTurnedOn() async throws {
        @Sendable func type(_ client: any TestClientProtocol, _ uri: String, accept: String?) async throws -> String? {
            let response = try await get(client, uri, headers: accept.map { [.accept: $0] } ?? [:])
            #expect(response.status == .ok, "\(uri)")
            let sent = response.headers[.contentType]
            // The bytes are what the header says.
            if sent == "image/jxl" { #expect(try ImageDecoder.info(of: Data(buffer: response.body)).fileType == .jxl) }
            return sent
        }
        let all = "image/jxl,image/avif,image/webp,image/*;q=0.8"
        // Off (the default): never negotiated, but a URL that pins it strictly (imgproxy's @jxl) gets it.
        try await TestServer { $0.allowUnsignedAdHoc = true }.test { (client: any TestClientProtocol) async throws in
            #expect(try await type(client, "/images/thumb/cat.jpg", accept: all) == "image/avif")
            #expect(try await type(client, "/images/thumb/cat.jpg", accept: "image/jxl") == "image/jpeg")
            #expect(try await type(client, "/imgproxy/insecure/rs:fit:64:64/plain/local:///cat.jpg@jxl", accept: nil) == "image/jxl")
        }
        // On: first for a client that names it, then AVIF, WebP, JPEG as before.
        try await TestServer { $0.allowUnsignedAdHoc = true; $0.jpegXL = true }.test { (client: any TestClientProtocol) async throws in
            #expect(try await type(client, "/images/thumb/cat.jpg", accept: all) == "image/jxl")
            #expect(try await type(client, "/images/thumb/cat.jpg", accept: "image/avif,image/webp") == "image/avif")
            #expect(try await type(client, "/images/thumb/cat.jpg", accept: "image/webp") == "image/webp")
            #expect(try await type(client, "/images/thumb/cat.jpg", accept: "image/*") == "image/jpeg")
            #expect(try await type(client, "/images/thumb/cat.jpg", accept: nil) == "image/jpeg")
            // Pinned (f=jxl): JPEG XL to a client that takes it, JPEG to one that does not.
            #expect(try await type(client, "/images/w=64,h=64,f=jxl/cat.jpg", accept: "image/jxl") == "image/jxl")
            #expect(try await type(client, "/images/w=64,h=64,f=jxl/cat.jpg", accept: "image/webp") == "image/jpeg")
            let response = try await get(client, "/images/thumb/cat.jpg", headers: [.accept: all])
            #expect(response.headers[.vary] == "Accept")
        }
        // The environment turns it on too.
        var configuration = ServerConfiguration()
        try configuration.apply(environment: ["EASEL_JPEG_XL": "1"])
        #expect(configuration.jpegXL)
        #expect(throws: ServerConfigurationError.self) { try configuration.apply(environment: ["EASEL_JPEG_XL": "maybe"]) }
    }

    @Test func everyFormatUsersSendInEveryStyle() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        let cat = try ImageDecoder.decode(catJPEG, covering: (200, 200))
        try ImageEncoder.encode(cat, as: .bmp).write(to: server.origin.child("cat.bmp"))
        try ImageEncoder.encode(try Resize(width: 64, height: 64, mode: .fill).process(cat), as: .ico).write(to: server.origin.child("cat.ico"))
        try cat.withUnsafeBytes { pixels in
            uncompressedTIFF(width: cat.width, height: cat.height) { x, y in Array(pixels[(y * cat.rowBytes + x * 4)..<(y * cat.rowBytes + x * 4 + 3)]) }
        }.write(to: server.origin.child("cat.tif"))
        // 100×50: white with a black rectangle from x = 25 to 75.
        try Data("""
            <svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><rect width="100" height="50" fill="#fff"/>
            <rect x="25" width="50" height="50" fill="#000"/></svg>
            """.utf8).write(to: server.origin.child("drawing.svg"))
        // The same drawing as a PDF page (200×100 points: the black rectangle from x = 50 to 150).
        try Data(pdfDocument(width: 200, height: 100, content: "0 0 0 rg 50 0 100 100 re f").utf8).write(to: server.origin.child("drawing.pdf"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func answer(_ uri: String) async throws -> (String?, ImageInfo) {
                let response = try await get(client, uri)
                #expect(response.status == .ok, "\(uri)")
                return (response.headers[.contentType], try ImageDecoder.info(of: Data(buffer: response.body)))
            }
            // In: a BMP, a TIFF and an icon, through the native, imgproxy and thumbor styles.
            for uri in ["/images/w=50,h=50/cat.bmp", "/imgproxy/insecure/rs:fit:50:50/plain/local:///cat.bmp",
                        "/thumbor/unsafe/fit-in/50x50/cat.bmp", "/images/w=50,h=50/cat.ico", "/thumbor/unsafe/fit-in/50x50/cat.ico",
                        "/images/w=50,h=50/cat.tif", "/imgproxy/insecure/rs:fit:50:50/plain/local:///cat.tif",
                        "/thumbor/unsafe/fit-in/50x50/cat.tif"] {
                let (type, info) = try await answer(uri)
                #expect(type == "image/jpeg" && max(info.width, info.height) == 50, "\(uri)")
            }
            // A vector is rendered at the size asked for, larger than its own (no enlarge option
            // needed), with its edges where the vector has them (x = 25 % of the width).
            for uri in ["/images/w=500,h=500,f=png/drawing.svg", "/imgproxy/insecure/rs:fit:500:500/plain/local:///drawing.svg@png",
                        "/thumbor/unsafe/fit-in/500x500/filters:format(png)/drawing.svg", "/images/w=500,h=500,f=png/drawing.pdf",
                        "/imgproxy/insecure/rs:fit:500:500/plain/local:///drawing.pdf@png"] {
                let response = try await get(client, uri)
                #expect(response.status == .ok, "\(uri)")
                let bitmap = try ImageDecoder.decode(Data(buffer: response.body))
                #expect(bitmap.width == 500 && bitmap.height == 250, "\(uri)")
                let edge = bitmap.withUnsafeBytes { p in (0..<bitmap.width).first { p[125 * bitmap.rowBytes + $0 * 4] < 128 } }
                #expect(edge.map { abs($0 - 125) <= 1 } == true, "\(uri): edge at \(String(describing: edge))")
            }
            // Out: f=ico and imgproxy's @ico (a PNG in an icon), f=bmp and @bmp.
            for (uri, type) in [("/images/w=48,h=48,f=ico/cat.jpg", "image/x-icon"), ("/imgproxy/insecure/rs:fit:48:48/plain/local:///cat.jpg@ico", "image/x-icon"),
                                ("/images/w=48,h=48,f=bmp/cat.ico", "image/bmp"), ("/imgproxy/insecure/rs:fit:48:48/plain/local:///cat.bmp@bmp", "image/bmp"),
                                ("/thumbor/unsafe/fit-in/48x48/filters:format(ico)/cat.bmp", "image/x-icon")] {
                let (sent, info) = try await answer(uri)
                #expect(sent == type && max(info.width, info.height) == 48, "\(uri)")
                #expect(info.fileType == (type == "image/bmp" ? .bmp : .ico), "\(uri)")
            }
            // An icon over 256 pixels a side is refused with the reason, not cut down.
            let big = try await get(client, "/imgproxy/insecure/rs:fit:300:300/plain/local:///cat.jpg@ico")
            #expect(big.status == .unprocessableContent)
            #expect(String(buffer: big.body).contains("an icon is at most 256 pixels a side"))
        }
    }

    /// thumbor's `meta/`: the source's frames, the operations in thumbor's order (manual crop, the
    /// crop to the box's aspect ratio, the resize, the flips), the target and the focal points,
    /// as JSON, as thumbor writes them.
    @Test func thumborsMetaDescribesTheOperations() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try ImageEncoder.encode(paintedOpaque(width: 400, height: 200) { _, _ in [9, 99, 199] }, as: .png()).write(to: server.origin.child("wide.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func meta(_ options: String) async throws -> [String: Any] {
                let response = try await get(client, "/thumbor/unsafe/meta/\(options)/wide.png")
                #expect(response.status == .ok && response.headers[.contentType] == "application/json", "\(options)")
                let object = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
                return try #require(object?["thumbor"] as? [String: Any])
            }
            func operations(_ document: [String: Any]) -> String {
                ((document["operations"] as? [[String: Any]]) ?? []).map { op in
                    let type = op["type"] as? String ?? "?"
                    switch type {
                    case "crop": return "crop \(op["left"]!),\(op["top"]!),\(op["right"]!),\(op["bottom"]!)"
                    case "resize": return "resize \(op["width"]!)x\(op["height"]!)"
                    default: return type
                    }
                }.joined(separator: "; ")
            }
            func target(_ document: [String: Any]) -> String {
                let t = document["target"] as? [String: Any]
                return "\(t?["width"] ?? "?")x\(t?["height"] ?? "?")"
            }
            let fill = try await meta("100x100")
            let source = try #require(fill["source"] as? [String: Any])
            // (thumbor reports the answer's size as the source's: its JSON engine's.)
            #expect(source["url"] as? String == "wide.png" && source["width"] as? Int == 100 && source["height"] as? Int == 100
                    && source["frameCount"] as? Int == 1)
            // The alignment's focal point, in the image before its resize.
            let points = try #require(fill["focal_points"] as? [[String: Any]])
            #expect(points.count == 1 && points[0]["x"] as? Int == 200 && points[0]["y"] as? Int == 100 && points[0]["origin"] as? String == "alignment")
            #expect(operations(fill) == "crop 100,0,300,200; resize 100x100" && target(fill) == "100x100")
            let fit = try await meta("fit-in/100x100")
            #expect(operations(fit) == "resize 100x50" && target(fit) == "100x50")
            let cropped = try await meta("10x10:110x60/-50x50")
            #expect(operations(cropped) == "crop 10,10,110,60; crop 25,0,75,50; flip_horizontally" && target(cropped) == "50x50")
            let left = try await meta("100x100/left")
            #expect(operations(left) == "crop 0,0,200,200; resize 100x100")
        }
    }

    /// imgproxy's `expires` (404 once past, a lifetime no longer than the URL's), `filename` and
    /// `return_attachment` (`Content-Disposition` on every imgproxy answer), and the URL's own
    /// source limits (`max_src_resolution`, `max_src_file_size`, `max_animation_frames`), which
    /// a cached answer made without them never bypasses.
    @Test func imgproxysExpiresFilenameAndSourceLimits() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try catJPEG.write(to: server.origin.child("cat.jpg"))
        try await server.test { (client: any TestClientProtocol) async throws in
            let now = Int64(Date().timeIntervalSince1970)
            let expired = try await get(client, "/imgproxy/insecure/exp:\(now - 10)/rs:fit:50:50/plain/local:///cat.jpg@png")
            #expect(expired.status == .notFound && String(buffer: expired.body).contains("expired"))
            let alive = try await get(client, "/imgproxy/insecure/exp:\(now + 1000)/rs:fit:50:50/plain/local:///cat.jpg@png")
            let age = alive.headers[.cacheControl].flatMap { Int($0.split(separator: "=").last ?? "") } ?? -1
            #expect(alive.status == .ok && (700...1000).contains(age), "\(alive.headers[.cacheControl] ?? "none")")
            // Content-Disposition: the source's name by default; the URL's; base64url; non-ASCII.
            for (options, expected) in [("rs:fit:50:50", "inline; filename=\"cat.png\""),
                                        ("rs:fit:50:50/fn:photo/att:1", "attachment; filename=\"photo.png\""),
                                        ("rs:fit:50:50/fn:\(Data("my \"cat\"".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")):1",
                                         "inline; filename=\"my cat.png\"; filename*=UTF-8''my%20%22cat%22.png"),
                                        ("rs:fit:50:50/fn:k%C3%A4tzchen", "inline; filename=\"ktzchen.png\"; filename*=UTF-8''k%C3%A4tzchen.png")] {
                let response = try await get(client, "/imgproxy/insecure/\(options)/plain/local:///cat.jpg@png")
                #expect(response.status == .ok && response.headers[.contentDisposition] == expected, "\(options): \(response.headers[.contentDisposition] ?? "none")")
            }
            #expect(try await get(client, "/imgproxy/insecure/rs:fit:50:50/plain/local:///cat.jpg").headers[.contentDisposition] == "inline; filename=\"cat.jpg\"")
            // Source limits: the cat (451×300, 27 KB) passes 1 MP and fails 0.1 MP and 1000 bytes,
            // even right after the same processing was made without a limit.
            #expect(try await get(client, "/imgproxy/insecure/rs:fit:60:60/plain/local:///cat.jpg@png").status == .ok)
            #expect(try await get(client, "/imgproxy/insecure/rs:fit:60:60/msr:1/plain/local:///cat.jpg@png").status == .ok)
            for limit in ["msr:0.1", "msfs:1000"] {
                let refused = try await get(client, "/imgproxy/insecure/rs:fit:60:60/\(limit)/plain/local:///cat.jpg@png")
                #expect(refused.status == .unprocessableContent, "\(limit): \(refused.status)")
            }
        }
    }

    /// `max_bytes` (thumbor's filter, imgproxy's `mb`): the quality is lowered until the answer
    /// fits, the least quality's bytes when nothing does; imgproxy's `format_quality` sets the
    /// answer's format's own quality; thumbor's `autojpg()` answers a PNG source with no format
    /// asked as JPEG (negotiated), where thumbor otherwise keeps the source's format.
    @Test func maxBytesAndFormatQuality() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try catJPEG.write(to: server.origin.child("cat.jpg"))
        try ImageEncoder.encode(paintedOpaque(width: 60, height: 40) { x, y in [UInt8(x * 4), UInt8(y * 6), 90] }, as: .png())
            .write(to: server.origin.child("g.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func size(_ uri: String) async throws -> Int {
                let response = try await get(client, uri)
                #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
                _ = try ImageDecoder.decode(Data(buffer: response.body))
                return response.body.readableBytes
            }
            let full = try await size("/thumbor/unsafe/300x200/filters:quality(95):format(jpeg)/cat.jpg")
            for uri in ["/thumbor/unsafe/300x200/filters:quality(95):format(jpeg):max_bytes(8000)/cat.jpg",
                        "/imgproxy/insecure/rs:fill:300:200/q:95/mb:8000/plain/local:///cat.jpg@jpg"] {
                let bounded = try await size(uri)
                #expect(full > 8000 && bounded <= 8000 && bounded > 3000, "\(uri): \(bounded) of \(full)")
            }
            // Nothing fits 100 bytes: the lowest quality's answer, still an image.
            let least = try await size("/thumbor/unsafe/300x200/filters:format(jpeg):max_bytes(100)/cat.jpg")
            #expect(least < 8000)
            // format_quality: the answer's own format's quality, over q.
            let low = try await size("/imgproxy/insecure/rs:fill:300:200/q:95/fq:jpeg:20:webp:90/plain/local:///cat.jpg@jpg")
            #expect(low < full / 2)
            let ignored = try await size("/imgproxy/insecure/rs:fill:300:200/q:95/fq:webp:20/plain/local:///cat.jpg@jpg")
            #expect(ignored == (try await size("/imgproxy/insecure/rs:fill:300:200/q:95/plain/local:///cat.jpg@jpg")))
            // autojpg(): a PNG source with no format asked is answered as JPEG (as WebP to a client
            // that names WebP) instead of in its own format; format(png) still keeps it PNG.
            for uri in ["/thumbor/unsafe/30x20/filters:autojpg()/g.png", "/thumbor/unsafe/30x20/filters:autojpg(true)/g.png"] {
                let answer = try await get(client, uri)
                #expect(answer.status == .ok && answer.headers[.contentType] == "image/jpeg", "\(uri): \(answer.status) \(answer.headers[.contentType] ?? "")")
                #expect(try ImageFileType.sniff(Data(buffer: answer.body)) == .jpeg, "\(uri)")
            }
            let webp = try await get(client, "/thumbor/unsafe/30x20/filters:autojpg()/g.png", headers: [.accept: "image/webp,*/*"])
            #expect(webp.status == .ok && webp.headers[.contentType] == "image/webp")
            let png = try await get(client, "/thumbor/unsafe/30x20/filters:autojpg():format(png)/g.png")
            #expect(png.status == .ok && png.headers[.contentType] == "image/png")
            // Without autojpg, or with autojpg(false), thumbor keeps the source's format.
            for uri in ["/thumbor/unsafe/30x20/g.png", "/thumbor/unsafe/30x20/filters:autojpg(false)/g.png"] {
                let answer = try await get(client, uri, headers: [.accept: "image/webp,*/*"])
                #expect(answer.status == .ok && answer.headers[.contentType] == "image/png" && answer.headers[.vary] == nil, "\(uri)")
            }
            #expect(try await get(client, "/thumbor/unsafe/30x20/filters:autojpg(maybe)/g.png").status == .badRequest)
        }
    }

    /// Steps that grow the image (imgproxy's min-width/min-height, zoom, padding; thumbor's
    /// full-fit-in, frame) are held to the output limits: a 422, never an allocation that takes
    /// the server down; a URL's own frame limit does not make an animation a still for others.
    @Test func growingStepsStayWithinTheLimitsAndURLLimitsStayTheURLs() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try ImageEncoder.encode(paintedOpaque(width: 400, height: 2) { _, _ in [200, 10, 10] }, as: .png()).write(to: server.origin.child("banner.png"))
        let frames = (0..<4).map { i in (0..<(200 * 100)).map { p -> UInt8 in p % 200 / 50 == i ? 1 : 2 } }
        try GIFCodec.encodeAnimation(width: 200, height: 100, frames: frames, palette: [255, 0, 0, 0, 0, 255, 255, 255, 255],
                                     delays: [10, 10, 10, 10]).write(to: server.origin.child("anim.gif"))
        try await server.test { (client: any TestClientProtocol) async throws in
            // imgproxy's minimum height raises the scale and the result is cut to the box: 100×100,
            // made from what the box keeps of the source (the 200,000 px wide image it stands for
            // is never made).
            let raised = try await get(client, "/imgproxy/insecure/rs:fit:100:100/mh:2000/plain/local:///banner.png@png")
            let raisedImage = try ImageDecoder.decode(Data(buffer: raised.body))
            #expect(raised.status == .ok && (raisedImage.width, raisedImage.height) == (100, 100), "\(raised.status)")
            for uri in ["/imgproxy/insecure/mw:2048/mh:2048/plain/local:///banner.png@png",
                        // (Without `enlarge`, imgproxy's zoom never grows the image: z:8 alone is the source.)
                        "/imgproxy/insecure/z:8/el:1/plain/local:///banner.png@png",
                        "/thumbor/unsafe/full-fit-in/1x2000/banner.png"] {
                let response = try await get(client, uri)
                #expect(response.status == .unprocessableContent && String(buffer: response.body).contains("past the limit"), "\(uri): \(response.status)")
            }
            #expect(try await get(client, "/health").status == .ok)
            // maf:1 on an animation: its first frame for that URL; the animation stays one for others.
            let limited = try await get(client, "/imgproxy/insecure/rs:fit:100:100/maf:1/plain/local:///anim.gif@webp")
            let limitedFrames = try ImageDecoder.info(of: Data(buffer: limited.body)).frameCount
            #expect(limited.status == .ok && limitedFrames == 1)
            let whole = try await get(client, "/images/w=100,h=100/anim.gif", headers: [.accept: "image/webp,*/*"])
            let wholeFrames = try ImageDecoder.info(of: Data(buffer: whole.body)).frameCount
            #expect(whole.status == .ok && wholeFrames == 4)
        }
    }

    /// thumbor's `max_age(seconds)`: the answer's `max-age`, never past the server's.
    @Test func thumborsMaxAgeSetsTheAnswersLifetime() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true; $0.maxAge = 3600 }
        try catJPEG.write(to: server.origin.child("cat.jpg"))
        try await server.test { (client: any TestClientProtocol) async throws in
            for (filter, expected) in [("max_age(600)", "public, max-age=600"), ("max_age(0)", "public, max-age=0"),
                                       ("max_age(86400)", "public, max-age=3600")] {
                let response = try await get(client, "/thumbor/unsafe/50x50/filters:\(filter)/cat.jpg")
                #expect(response.status == .ok && response.headers[.cacheControl] == expected, "\(filter)")
            }
            #expect(try await get(client, "/thumbor/unsafe/50x50/cat.jpg").headers[.cacheControl] == "public, max-age=3600")
        }
    }

    /// `f=svg` and imgproxy's `@svg`/`f:svg`: an SVG source served as SVG, cleaned, with a policy
    /// that lets it run and load nothing, the same bytes every time; any other source is a 422.
    @Test func svgSourcesAreServedAsCleanedSVG() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try Data("""
            <svg xmlns="http://www.w3.org/2000/svg" width="100" height="50" onload="alert(1)"><script>alert(2)</script>
            <rect width="100" height="50" fill="#08f"/></svg>
            """.utf8).write(to: server.origin.child("logo.svg"))
        try catJPEG.write(to: server.origin.child("cat.jpg"))
        try await server.test { (client: any TestClientProtocol) async throws in
            var tags: Set<String> = []
            for uri in ["/images/w=100,h=100,f=svg/logo.svg", "/images/w=100,h=100,f=svg/logo.svg",
                        "/imgproxy/insecure/rs:fit:100:100/plain/local:///logo.svg@svg", "/imgproxy/insecure/f:svg/plain/local:///logo.svg"] {
                let response = try await get(client, uri, headers: [.accept: "image/avif,image/webp,*/*"])
                #expect(response.status == .ok && response.headers[.contentType] == "image/svg+xml", "\(uri)")
                #expect(response.headers[.contentSecurityPolicy] == "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
                #expect(response.headers[.vary] == nil, "\(uri): SVG is what every client gets")
                let body = Data(buffer: response.body)
                let text = String(decoding: body, as: UTF8.self)
                #expect(!text.contains("alert") && text.contains("<rect"), "\(uri): \(text)")
                let drawn = try ImageDecoder.decode(body)
                #expect(drawn.width == 100 && drawn.height == 50 && drawn.pixel(x: 50, y: 25)[2] == 255)
                tags.insert(response.headers[.eTag] ?? "")
            }
            #expect(tags.count == 1, "one cleaned document: \(tags)")
            let raster = try await get(client, "/images/w=100,h=100,f=svg/cat.jpg")
            #expect(raster.status == .unprocessableContent && String(buffer: raster.body).contains("SVG output is made only from an SVG source"))
        }
    }

    /// `page` (native `page=`, imgproxy Pro's `pg`/`page`): a PDF's page at its own size, an
    /// animation's frame as a still (for a WebP client too); each page its own variant (page 0
    /// is the URL without a page); a page past the last a 422 that names the count.
    @Test func pagesOfDocumentsAndFramesOfAnimations() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        // Page 0: 200×100 points, red; page 1: 100×200, blue.
        try twoPagePDF().write(to: server.origin.child("doc.pdf"))
        // Four frames of 200×100: frame i is blue from x = 50·i to 50·i + 49, white elsewhere.
        let frames = (0..<4).map { i in (0..<(200 * 100)).map { p -> UInt8 in p % 200 / 50 == i ? 1 : 2 } }
        try GIFCodec.encodeAnimation(width: 200, height: 100, frames: frames, palette: [255, 0, 0, 0, 0, 255, 255, 255, 255],
                                     delays: [10, 10, 10, 10]).write(to: server.origin.child("anim.gif"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func image(_ uri: String, accept: String = "image/png") async throws -> (Bitmap, String?, String?) {
                let response = try await get(client, uri, headers: [.accept: accept])
                #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
                let body = Data(buffer: response.body)
                #expect(try ImageDecoder.info(of: body).frameCount == 1, "\(uri): a still")
                return (try ImageDecoder.decode(body), response.headers[.contentType], response.headers[.eTag])
            }
            let (first, _, firstTag) = try await image("/images/w=50,h=50,f=png/doc.pdf")
            #expect(first.width == 50 && first.height == 25 && first.pixel(x: 25, y: 12)[0] > 240)
            let (zero, _, zeroTag) = try await image("/images/w=50,h=50,f=png,page=0/doc.pdf")
            #expect(zeroTag == firstTag && zero.width == 50)
            for uri in ["/images/w=50,h=50,f=png,page=1/doc.pdf", "/imgproxy/insecure/rs:fit:50:50/pg:1/plain/local:///doc.pdf@png",
                        "/imgproxy/insecure/rs:fit:50:50/page:1/plain/local:///doc.pdf@png"] {
                let (second, _, tag) = try await image(uri)
                #expect(second.width == 25 && second.height == 50 && second.pixel(x: 12, y: 25)[2] > 240 && second.pixel(x: 12, y: 25)[0] < 15, "\(uri)")
                #expect(tag != firstTag, "\(uri)")
            }
            // An animation's frame: a still, even to a client that takes animated WebP.
            for uri in ["/images/w=100,h=100,page=2/anim.gif", "/imgproxy/insecure/rs:fit:100:100/pg:2/plain/local:///anim.gif"] {
                let (frame, type, _) = try await image(uri, accept: "image/webp,*/*")
                #expect(type == "image/webp" && frame.width == 100 && frame.height == 50, "\(uri)")
                #expect(frame.pixel(x: 62, y: 25)[2] > 200 && frame.pixel(x: 62, y: 25)[0] < 60 && frame.pixel(x: 12, y: 25)[0] > 200, "\(uri)")
            }
            // The animation itself, after its pages: still every frame.
            let whole = try await get(client, "/images/w=100,h=100/anim.gif", headers: [.accept: "image/webp,*/*"])
            #expect(whole.status == .ok && whole.headers[.contentType] == "image/webp")
            #expect(try ImageDecoder.info(of: Data(buffer: whole.body)).frameCount == 4)
            // An SVG has one page, whatever the output.
            try Data("<svg xmlns='http://www.w3.org/2000/svg' width='8' height='8'/>".utf8).write(to: server.origin.child("one.svg"))
            for uri in ["/images/w=8,h=8,f=svg,page=1/one.svg", "/images/w=8,h=8,f=png,page=1/one.svg"] {
                let response = try await get(client, uri)
                #expect(response.status == .unprocessableContent && String(buffer: response.body).contains("1 page"), "\(uri)")
            }
            // Past the last page: 422 with the count; a page no URL may name: 400.
            for (uri, count) in [("/images/w=50,h=50,page=2/doc.pdf", "2 pages"), ("/imgproxy/insecure/pg:4/plain/local:///anim.gif", "4 pages")] {
                let response = try await get(client, uri)
                #expect(response.status == .unprocessableContent && String(buffer: response.body).contains(count), "\(uri): \(String(buffer: response.body))")
            }
            for uri in ["/images/w=50,h=50,page=-1/doc.pdf", "/imgproxy/insecure/pg:x/plain/local:///doc.pdf", "/images/w=50,h=50,page=10000/doc.pdf"] {
                #expect(try await get(client, uri).status == .badRequest, "\(uri)")
            }
        }
    }

    @Test func traversalAndMissingFilesAreNotFound() async throws {
        let outside = try TemporaryDirectory()
        try catJPEG.write(to: outside.child("secret.jpg"))
        let server = try TestServer()
        try FileManager.default.createSymbolicLink(atPath: server.origin.child("escape.jpg").path, withDestinationPath: outside.child("secret.jpg").path)
        try FileManager.default.createSymbolicLink(atPath: server.origin.child("out").path, withDestinationPath: outside.path)
        try await server.test { (client: any TestClientProtocol) async throws in
            for path in ["/images/thumb/../cat.jpg", "/images/thumb/%2e%2e/%2e%2e/etc/passwd", "/images/thumb/..%2f..%2fetc%2fpasswd",
                         "/images/thumb/%2E%2E/cat.jpg", "/images/thumb/escape.jpg", "/images/thumb/out/secret.jpg",
                         "/images/thumb/missing.jpg", "/images/nope/cat.jpg", "/images/thumb", "/images/thumb/sub%00.jpg",
                         "/images/thumb/." ] {
                let response = try await get(client, path)
                #expect(response.status == .notFound, "\(path): \(response.status)")
            }
        }
    }

    @Test func badSourcesAreClearErrorsNeverServerErrors() async throws {
        try await TestServer().test { (client: any TestClientProtocol) async throws in
            for path in ["/images/thumb/corrupt.jpg", "/images/thumb/notes.jpg"] {
                let response = try await get(client, path)
                #expect(response.status == .unprocessableContent, "\(path)")
                #expect(response.headers[.contentType] == "text/plain; charset=utf-8")
                #expect(String(buffer: response.body).contains("unsupported or corrupt image"), "\(String(buffer: response.body))")
            }
        }
        // A source over the byte limit.
        try await TestServer { $0.maxSourceBytes = 10_000 }.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/images/thumb/cat.jpg").status == .unprocessableContent)
        }
        // An image bomb: over the pixel limit.
        try await TestServer { $0.maxSourcePixels = 10_000 }.test { (client: any TestClientProtocol) async throws in
            let response = try await get(client, "/images/thumb/cat.jpg")
            #expect(response.status == .unprocessableContent)
        }
    }

    @Test func remoteSourcesAreConfinedToAllowedPublicHosts() async throws {
        let origin = Origin()
        origin.serve("/cat.jpg", .file(catJPEG))
        origin.serve("/to-metadata", .redirect("http://169.254.169.254/latest/meta-data/"))
        try await origin.run { base in
            let port = base.port!
            let hostname = ProcessInfo.processInfo.hostName
            #expect(try SourcePolicy.resolve(hostname).allSatisfy(\.isInternal), "the test needs a host name resolving to loopback")
            try await TestServer { $0.allowHosts = ["127.0.0.1:\(port)", hostname + ":\(port)"] }.test { (client: any TestClientProtocol) async throws in
                // Named explicitly by address: a local origin in development.
                #expect(try await get(client, "/images/thumb/http://127.0.0.1:\(port)/cat.jpg").status == .ok)
                let refused = [
                    "http://\(hostname):\(port)/cat.jpg",          // a name resolving to 127.0.0.1
                    "http://[::1]:\(port)/cat.jpg",
                    "http://0.0.0.0:\(port)/cat.jpg",
                    "http://169.254.169.254/latest/meta-data/",
                    "http://10.0.0.1/a.jpg",
                    "http://localhost:\(port)/cat.jpg",             // not on the allow-list
                    "http://127.0.0.1:\(port + 1)/cat.jpg",         // an allowed address, another port
                    "http://127.0.0.1:\(port)/to-metadata",         // a redirect to the metadata address
                ]
                for source in refused {
                    let response = try await get(client, "/images/thumb/" + source)
                    #expect(response.status == .forbidden, "\(source): \(response.status) \(String(buffer: response.body))")
                }
            }
            #expect(origin.count("/cat.jpg") == 1, "refused sources were never fetched")
        }
        #expect(IPAddress.v6(Array(repeating: 0, count: 10) + [0xFF, 0xFF, 10, 0, 0, 1]).isInternal)
        #expect(!IPAddress.v4([93, 184, 216, 34]).isInternal)
    }

    @Test func concurrentRequestsForOneUncachedImageMakeOneOriginFetch() async throws {
        let origin = Origin()
        let gate = Gate()
        origin.serve("/cat.jpg", .gated(catJPEG, first: 0, gate: gate))
        try await origin.run { base in
            let server = try TestServer { $0.origin = base.absoluteString }
            try await server.test { (client: any TestClientProtocol) async throws in
                try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for _ in 0..<20 { group.addTask { try await get(client, "/images/thumb/cat.jpg").status } }
                    _ = await origin.nextRequest()
                    gate.open()
                    for try await status in group { #expect(status == .ok) }
                }
            }
            #expect(origin.count("/cat.jpg") == 1)
        }
    }

    @Test func aClientThatLeavesCancelsItsWork() async throws {
        let origin = Origin()
        let gate = Gate()
        origin.serve("/slow.jpg", .gated(catJPEG, first: 1000, gate: gate))
        try await origin.run { base in
            let server = try TestServer { $0.origin = base.absoluteString }
            let events = server.server.pipeline.events()
            let app = Application(router: server.server.router(), server: server.server.httpServer(),
                                  configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { client in
                let url = "http://127.0.0.1:\(client.port!)/images/thumb/slow.jpg"
                let request = Task { try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(60)) }
                _ = await origin.nextRequest()
                request.cancel()  // the client closes its connection
                var ended: PipelineError?
                for await event in events {
                    if case .downloadEnded(_, _, let error) = event {
                        ended = error
                        break
                    }
                }
                #expect(ended == .cancelled, "the server stopped fetching for a client that left")
                gate.open()
            }
            await server.server.shutdown()
        }
    }

    @Test func aFullQueueAnswers429AtOnce() async throws {
        let origin = Origin()
        let gate = Gate()
        origin.serve("/slow.jpg", .gated(catJPEG, first: 0, gate: gate))
        origin.serve("/cat.jpg", .file(catJPEG))
        try await origin.run { base in
            let server = try TestServer { $0.origin = base.absoluteString; $0.processingConcurrency = 1; $0.maxQueue = 0 }
            try await server.test { (client: any TestClientProtocol) async throws in
                let blocked = Task { try await get(client, "/images/thumb/slow.jpg").status }
                _ = await origin.nextRequest()
                let refused = try await get(client, "/images/thumb/cat.jpg")
                #expect(refused.status == .tooManyRequests)
                #expect(refused.headers[.retryAfter] == "1")
                gate.open()
                #expect(try await blocked.value == .ok)
                #expect(try await get(client, "/images/thumb/cat.jpg").status == .ok)
            }
        }
    }

    @Test func purgingNeedsTheAdminTokenAndForgetsEveryVariant() async throws {
        let server = try TestServer { $0.adminToken = "secret-token-0123456789" }
        try await server.test { (client: any TestClientProtocol) async throws in
            #expect(try await get(client, "/images/thumb/cat.jpg").status == .ok)
            // small follows from thumb's decode (a full-size decode of this 451×300 photo), after the answer.
            await server.server.pipeline.waitForBackgroundWork()
            #expect(try await get(client, "/images/small/cat.jpg").status == .ok)
            #expect(try await get(client, "/images/cat.jpg", method: .delete).status == .forbidden)
            #expect(try await get(client, "/images/cat.jpg", headers: [.authorization: "Bearer wrong"], method: .delete).status == .forbidden)
            // The image's own URL names the source too.
            let purged = try await get(client, "/images/thumb/cat.jpg", headers: [.authorization: "bearer secret-token-0123456789"], method: .delete)
            #expect(purged.status == .ok)
            #expect(try await get(client, "/images/thumb/cat.jpg").status == .ok)
            let hits = server.server.metricsSnapshot()
            #expect(hits["file"] == 2, "made again from the source after the purge: \(hits)")
        }
    }

    @Test func theGalleryShowsEveryImageAndTheCaches() async throws {
        try await TestServer().test { (client: any TestClientProtocol) async throws in
            let page = try await get(client, "/")
            #expect(page.status == .ok && page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            for name in ["cat.jpg", "corrupt.jpg", "notes.jpg"] {
                #expect(html.contains("<img src=\"/images/thumb/\(name)\""), "\(name)")
                #expect(html.contains("<a href=\"/images/small/\(name)\""))
            }
            #expect(html.contains("<h2>Caches</h2>") && html.contains("dataset.thumbnails"))
        }
    }
}

@Suite struct ConfigurationTests {
    @Test func fileEnvironmentAndValidation() throws {
        let directory = try TemporaryDirectory()
        let file = directory.child("easel.json")
        try Data(#"{"port": 9090, "allowHosts": ["images.example.com"], "maxAge": 60, "formats": [{"name": "tiny", "width": 32, "height": 32, "fit": "fill", "output": "png"}]}"#.utf8).write(to: file)
        var configuration = try ServerConfiguration.load(file: file.path)
        #expect(configuration.port == 9090 && configuration.maxAge == 60 && configuration.host == "127.0.0.1")
        #expect(configuration.formats.map(\.name) == ["tiny"])
        try configuration.apply(environment: ["EASEL_PORT": "7070", "EASEL_ALLOW_HOSTS": "a.example, b.example", "EASEL_SIGNING_KEYS": keyA])
        #expect(configuration.port == 7070 && configuration.allowHosts == ["a.example", "b.example"] && configuration.signingKeys == [keyA])
        try configuration.validate()
        #expect(throws: ServerConfigurationError.invalidValue(name: "EASEL_PORT", value: "eighty")) {
            try configuration.apply(environment: ["EASEL_PORT": "eighty"])
        }
        configuration.adminToken = "short"
        #expect(throws: ServerConfigurationError.invalidValue(name: "admin token", value: "(shorter than 16 characters)")) { try configuration.validate() }
        configuration.adminToken = nil
        configuration.signingKeys = ["not hex"]
        #expect(throws: ServerConfigurationError.invalidValue(name: "signing key", value: "(not hex)")) { try configuration.validate() }
        try Data("{ nope".utf8).write(to: file)
        #expect { try ServerConfiguration.load(file: file.path) } throws: { error in
            if case .invalid = error as? ServerConfigurationError { true } else { false }
        }
        var bad = ServerConfiguration()
        bad.origin = directory.child("missing").path
        #expect(throws: ServerConfigurationError.originNotFound(directory.child("missing").path)) {
            _ = try ImageServer(configuration: bad, registry: PrometheusCollectorRegistry())
        }
    }
}
