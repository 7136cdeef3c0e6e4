import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

/// imgproxy's options and settings that decide what an answer is made of: sources answered as
/// they are (`skip_processing`, `raw`), embedded thumbnails, copyright kept, animation frame
/// limits, formats enforced, Client Hints, and the URL settings (base URL, replacements, file
/// names, presets only, allowed options). imgproxy's own parser tests run as URLs in
/// scripts/imgproxy_suite.py.
@Suite(.timeLimit(.minutes(2))) struct ImgproxyDropInTests {
    /// A smooth picture: red across, green down.
    static func picture(width: Int, height: Int, alpha: UInt8 = 255) -> Bitmap {
        painted(width: width, height: height) { x, y in [UInt8(x * 255 / (width - 1)), UInt8(y * 255 / (height - 1)), 90, alpha] }
    }

    static func plain(_ options: String, _ source: String, _ ext: String? = nil) -> String {
        "/imgproxy/insecure/\(options)/plain/local:///\(source)" + (ext.map { "@" + $0 } ?? "")
    }

    @Test func skipProcessingAnswersTheSourceAsItIsWhenTheAnswerWouldBeInItsType() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        let png = try ImageEncoder.encode(Self.picture(width: 60, height: 40), as: .png())
        try png.write(to: server.origin.child("g.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            // Listed, no format asked: the bytes as they are, whatever the size asked.
            let skipped = try await get(client, Self.plain("skp:jpg/rs:fit:50:50", "cat.jpg"))
            #expect(skipped.status == .ok && Data(buffer: skipped.body) == catJPEG)
            #expect(skipped.headers[.contentType] == "image/jpeg" && skipped.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            #expect(skipped.headers[.contentDisposition] == "inline; filename=\"cat.jpg\"")
            let etag = try #require(skipped.headers[.eTag])
            #expect(try await get(client, Self.plain("skp:jpg/rs:fit:50:50", "cat.jpg"), headers: [.ifNoneMatch: etag]).status == .notModified)
            let head = try await get(client, Self.plain("skp:jpg", "cat.jpg"), method: .head)
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.headers[.contentLength] == String(catJPEG.count))
            // The same type asked: skipped; another type asked, or a type not listed: processed.
            #expect(Data(buffer: try await get(client, Self.plain("skp:jpg:png/rs:fit:50:50", "cat.jpg", "jpg")).body) == catJPEG)
            let converted = try await get(client, Self.plain("skp:jpg/rs:fit:50:50", "cat.jpg", "png"))
            #expect(converted.headers[.contentType] == "image/png")
            #expect(try ImageDecoder.info(of: Data(buffer: converted.body)).width == 50)
            let unlisted = try await get(client, Self.plain("skp:jpg/rs:fit:30:30", "g.png"))
            let unlistedWidth = try ImageDecoder.info(of: Data(buffer: unlisted.body)).width
            #expect(Data(buffer: unlisted.body) != png && unlistedWidth == 30)
            #expect(Data(buffer: try await get(client, Self.plain("skp:png", "g.png")).body) == png)
            // Still held to the URL's limits (and the server's): no way around them.
            let limited = try await get(client, Self.plain("skp:jpg/msr:0.001", "cat.jpg"))
            #expect(limited.status == .unprocessableContent, "\(limited.status)")
            // An animation is held to the animation limits (as its processing would be).
            let frames = AnimatedGIFEncoder()
            for i in 0..<3 { try frames.add(AnimationFrame(image: Self.picture(width: 100, height: 100, alpha: 255 - UInt8(i)), duration: 100)) }
            try frames.finish().write(to: server.origin.child("a.gif"))
            #expect(try await get(client, Self.plain("skp:gif/maf:2", "a.gif")).status == .unprocessableContent)
            #expect(try await get(client, Self.plain("skp:gif/mafr:0.005", "a.gif")).status == .unprocessableContent)
            #expect(try await get(client, Self.plain("skp:gif", "a.gif")).headers[.contentType] == "image/gif")
            // An SVG is cleaned, as every SVG answer is.
            try Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>"#.utf8)
                .write(to: server.origin.child("s.svg"))
            let svg = try await get(client, Self.plain("skp:svg", "s.svg"))
            #expect(svg.headers[.contentType] == "image/svg+xml" && !String(buffer: svg.body).contains("script") && String(buffer: svg.body).contains("rect"))
            #expect(svg.headers[.contentSecurityPolicy] == ImageServer.svgPolicy)
            // A name imgproxy does not know is imgproxy's error.
            let bad = try await get(client, Self.plain("skp:jpg:bad_format", "cat.jpg"))
            #expect(bad.status == .badRequest && String(buffer: bad.body).contains("bad_format"))
        }
        // The server's own list (IMGPROXY_SKIP_PROCESSING_FORMATS) works the same, and the choice
        // is the URL's alone: enforced formats do not count, so nothing varies on Accept.
        let listed = try TestServer {
            $0.allowUnsignedAdHoc = true
            $0.imgproxy.skipProcessingFormats = ["jpg"]
            $0.imgproxy.enforceWebP = true
        }
        try ImageEncoder.encode(Self.picture(width: 60, height: 40), as: .png()).write(to: listed.origin.child("g.png"))
        try await listed.test { (client: any TestClientProtocol) async throws in
            for accept in ["image/webp,*/*", "image/jpeg"] {
                let answer = try await get(client, Self.plain("rs:fit:50:50", "cat.jpg"), headers: [.accept: accept])
                #expect(Data(buffer: answer.body) == catJPEG && answer.headers[.vary] == nil, "\(accept)")
            }
            // A source of a type not listed: processed, and after the first look not read twice.
            for _ in 0..<2 { #expect(try await get(client, Self.plain("rs:fit:30:30", "g.png", "png")).status == .ok) }
        }
        #expect(throws: ServerConfigurationError.self) {
            _ = try TestServer { $0.allowUnsignedAdHoc = true; $0.imgproxy.skipProcessingFormats = ["jpg", "doc"] }
        }
    }

    /// An empty options segment is no option, as imgproxy's own tests write URLs
    /// (`/insecure//plain/…`): the answer is the one without options.
    @Test func anEmptyOptionsSegmentIsNoOptions() async throws {
        try await TestServer { $0.allowUnsignedAdHoc = true }.test { (client: any TestClientProtocol) async throws in
            let bare = try await get(client, "/imgproxy/insecure/plain/local:///cat.jpg@png")
            #expect(bare.status == .ok && bare.headers[.contentType] == "image/png")
            for path in ["/imgproxy/insecure//plain/local:///cat.jpg@png", "/imgproxy/insecure///plain/local:///cat.jpg@png"] {
                let empty = try await get(client, path)
                #expect(empty.status == .ok && Data(buffer: empty.body) == Data(buffer: bare.body), "\(path): \(empty.status)")
            }
            let resized = try await get(client, "/imgproxy/insecure//rs:fit:50:50//plain/local:///cat.jpg@png")
            let width = try ImageDecoder.info(of: Data(buffer: resized.body)).width
            #expect(resized.status == .ok && width <= 50)
        }
    }

    @Test func rawAnswersAnImagesBytesAsTheyAre() async throws {
        let origin = Origin()
        let page = Data("<html><script>alert(1)</script></html>".utf8)
        origin.serve("/page.html", .file(page, headers: ["Content-Type": "text/html"]))
        origin.serve("/cat.jpg", .file(catJPEG))
        // A JPEG padded past the download limit (100,000 bytes here), and one padded to just under
        // it: both are images (`raw` checks no more than the type), so only their size tells them apart.
        let padded = { (size: Int) in catJPEG + Data(count: size - catJPEG.count) }
        origin.serve("/big.jpg", .file(padded(200_000)))
        origin.serve("/under.jpg", .file(padded(99_000)))
        origin.serve("/doc.pdf", .file(twoPagePDF()))
        try await origin.run { base in
            let host = "127.0.0.1:\(base.port!)"
            try await TestServer {
                $0.allowUnsignedAdHoc = true
                $0.allowHosts = [host]
                $0.maxSourceBytes = 100_000
            }.test { (client: any TestClientProtocol) async throws in
                // Only images: Easel is no general proxy.
                let html = try await get(client, "/imgproxy/insecure/raw:1/plain/http://\(host)/page.html")
                #expect(html.status == .unprocessableContent && !String(buffer: html.body).contains("script"), "\(html.status)")
                // A document: shown, sandboxed.
                let pdf = try await get(client, "/imgproxy/insecure/raw:1/plain/http://\(host)/doc.pdf")
                #expect(pdf.status == .ok && Data(buffer: pdf.body) == twoPagePDF() && pdf.headers[.contentType] == "application/pdf")
                #expect(pdf.headers[.contentSecurityPolicy] == ImageServer.rawPolicy && pdf.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                // An image: its own type; the extension names no format for a raw answer.
                let image = try await get(client, "/imgproxy/insecure/raw:1/rs:fit:10:10/plain/http://\(host)/cat.jpg@png")
                #expect(Data(buffer: image.body) == catJPEG && image.headers[.contentType] == "image/jpeg")
                #expect(image.headers[.contentSecurityPolicy] == nil)
                // The download limit holds: an image over it is refused for its size (under it,
                // the same padded image is answered as it is).
                let under = try await get(client, "/imgproxy/insecure/raw:1/plain/http://\(host)/under.jpg")
                #expect(under.status == .ok && under.body.readableBytes == 99_000 && under.headers[.contentType] == "image/jpeg", "\(under.status)")
                let big = try await get(client, "/imgproxy/insecure/raw:1/plain/http://\(host)/big.jpg")
                #expect(big.status == .unprocessableContent && String(buffer: big.body).contains("larger than 100000 bytes"),
                        "\(big.status): \(String(buffer: big.body))")
                // The allow-list holds.
                #expect(try await get(client, "/imgproxy/insecure/raw:1/plain/http://127.0.0.2:\(base.port!)/cat.jpg").status == .forbidden)
            }
        }
    }

    @Test func enforceThumbnailAnswersFromTheEmbeddedThumbnail() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        let input = server.origin.child("in.png")
        try ImageEncoder.encode(Self.picture(width: 200, height: 100), as: .png()).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/heif-enc")
        process.arguments = ["-q", "90", "-t", "40", "-o", server.origin.child("t.heic").path, input.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        try await server.test { (client: any TestClientProtocol) async throws in
            func width(_ options: String) async throws -> Int {
                let answer = try await get(client, Self.plain(options, "t.heic", "png"))
                #expect(answer.status == .ok, "\(options): \(String(buffer: answer.body))")
                return try ImageDecoder.info(of: Data(buffer: answer.body)).width
            }
            #expect(try await width("eth:1") == 40)
            #expect(try await width("eth:0") == 200)
            #expect(try await width("rs:fit:0:0") == 200, "the primary image's variant is its own")
            #expect(try await width("eth:1/rs:fit:0:0") == 40, "and the thumbnail's its own")
            // A source without a thumbnail: the primary image.
            #expect(try await get(client, Self.plain("eth:1", "cat.jpg", "png")).status == .ok)
        }
    }

    /// A JPEG's EXIF with these ASCII fields (tag, text), big-endian, in one IFD.
    static func exif(_ fields: [(UInt16, String)]) -> Data {
        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v & 0xFFFF) }
        var tiff: [UInt8] = [0x4D, 0x4D] + be16(42) + be32(8) + be16(fields.count)
        var values: [UInt8] = []
        let valuesStart = 8 + 2 + fields.count * 12 + 4
        for (tag, text) in fields {
            let bytes = Array(text.utf8) + [0]
            tiff += be16(Int(tag)) + be16(2) + be32(bytes.count) + be32(valuesStart + values.count)
            values += bytes
        }
        tiff += be32(0) + values
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return Data([0xFF, 0xE1] + be16(payload.count + 2) + payload)
    }

    @Test func keepCopyrightKeepsArtistAndCopyrightOnly() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        // A camera's EXIF: make, model, software, date, and the rights.
        var jpeg = try ImageEncoder.encode(Self.picture(width: 64, height: 48), as: .jpeg(quality: 90))
        jpeg.insert(contentsOf: Self.exif([(0x010F, "CameraMaker"), (0x0110, "ModelOne"), (0x0131, "EditorApp"), (0x013B, "A. Painter"),
                                           (0x0132, "2026:01:02 03:04:05"), (0x8298, "(c) 2026 Easel")]), at: 2)
        try jpeg.write(to: server.origin.child("r.jpg"))
        #expect(try ImageDecoder.info(of: jpeg).exif?.copyright == "(c) 2026 Easel", "the source's EXIF is read")
        try await server.test { (client: any TestClientProtocol) async throws in
            for ext in ["jpg", "png", "webp"] {
                let kept = try ImageDecoder.info(of: Data(buffer: try await get(client, Self.plain("kcr:1/rs:fit:32:32", "r.jpg", ext)).body))
                #expect(kept.exif?.copyright == "(c) 2026 Easel" && kept.exif?.artist == "A. Painter", "\(ext)")
                let body = Data(buffer: try await get(client, Self.plain("kcr:1/rs:fit:32:32", "r.jpg", ext)).body)
                for other in ["CameraMaker", "ModelOne", "EditorApp", "2026:01:02"] {
                    #expect(body.range(of: Data(other.utf8)) == nil, "\(ext): \(other) is not kept")
                }
                let stripped = try ImageDecoder.info(of: Data(buffer: try await get(client, Self.plain("kcr:0/rs:fit:32:32", "r.jpg", ext)).body))
                #expect(stripped.exif?.copyright == nil && stripped.exif?.artist == nil, "\(ext)")
            }
            // From a bitmap another URL made (no header with it): read again, still kept.
            _ = try await get(client, Self.plain("rs:fit:20:20", "r.jpg", "png"))
            let later = try await get(client, Self.plain("kcr:1/rs:fit:20:20", "r.jpg", "jpg"))
            #expect(try ImageDecoder.info(of: Data(buffer: later.body)).exif?.copyright == "(c) 2026 Easel")
        }
        // The server's default (IMGPROXY_KEEP_COPYRIGHT), which a URL may turn off.
        try await TestServer {
            $0.imgproxy.keepCopyright = true
            $0.allowUnsignedAdHoc = true
            $0.origin = server.origin.path
        }.test { (client: any TestClientProtocol) async throws in
            #expect(try ImageDecoder.info(of: Data(buffer: try await get(client, Self.plain("rs:fit:32:32", "r.jpg", "jpg")).body)).exif?.artist == "A. Painter")
            #expect(try ImageDecoder.info(of: Data(buffer: try await get(client, Self.plain("kcr:0", "r.jpg", "jpg")).body)).exif == nil)
        }
    }

    @Test func anAnimationWhoseFrameIsOverTheLimitIsRefused() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        let encoder = AnimatedGIFEncoder()
        for i in 0..<2 { try encoder.add(AnimationFrame(image: Self.picture(width: 100, height: 100, alpha: i == 0 ? 255 : 254), duration: 100)) }
        try encoder.finish().write(to: server.origin.child("a.gif"))
        try ImageEncoder.encode(Self.picture(width: 100, height: 100), as: .png()).write(to: server.origin.child("s.png"))
        try uncompressedTIFF(width: 100, height: 100, pages: 2).write(to: server.origin.child("p.tif"))
        try await server.test { (client: any TestClientProtocol) async throws in
            // Read as an animation (WebP keeps it): refused; as its first frame (PNG): not, as imgproxy.
            let refused = try await get(client, Self.plain("mafr:0.005", "a.gif", "webp"), headers: [.accept: "image/webp"])
            #expect(refused.status == .unprocessableContent && String(buffer: refused.body).contains("5000"), "\(String(buffer: refused.body))")
            #expect(try await get(client, Self.plain("mafr:0.005", "a.gif", "png")).status == .ok)
            #expect(try await get(client, Self.plain("mafr:0.02", "a.gif", "webp"), headers: [.accept: "image/webp"]).status == .ok)
            #expect(try await get(client, Self.plain("mafr:0.005", "s.png", "png")).status == .ok, "a still is not an animation")
            #expect(try await get(client, Self.plain("mafr:0.005", "p.tif", "png")).status == .ok, "nor are a document's pages")
            #expect(try await get(client, Self.plain("mafr:0", "a.gif", "webp"), headers: [.accept: "image/webp"]).status == .ok,
                    "0: no limit of its own")
            // 0 also lifts a preset's limit.
            var options = ImagePlan()
            try ImgproxyURL.apply(["mafr:0.005", "mafr:0"], to: &options, presets: [:])
            #expect(options.sourceLimits == nil)
        }
    }

    @Test func enforcedFormatsWinOverTheURLsForClientsThatNameThem() async throws {
        try await TestServer { $0.allowUnsignedAdHoc = true; $0.imgproxy.enforceWebP = true }.test { (client: any TestClientProtocol) async throws in
            let path = Self.plain("rs:fit:40:40", "cat.jpg", "png")
            let webp = try await get(client, path, headers: [.accept: "image/webp,*/*"])
            #expect(webp.headers[.contentType] == "image/webp" && webp.headers[.vary]?.contains("Accept") == true)
            let png = try await get(client, path, headers: [.accept: "image/png,*/*"])
            #expect(png.headers[.contentType] == "image/png" && png.headers[.vary]?.contains("Accept") == true)
        }
    }

    @Test func clientHintsSetTheWidthAndDPRAURLLeavesOut() async throws {
        let hinted: HTTPFields = [HTTPField.Name("Sec-CH-Width")!: "100", HTTPField.Name("Sec-CH-DPR")!: "2"]
        try await TestServer { $0.allowUnsignedAdHoc = true; $0.imgproxy.enableClientHints = true }.test { (client: any TestClientProtocol) async throws in
            func size(_ path: String, _ headers: HTTPFields = [:]) async throws -> (Int, String?) {
                let answer = try await get(client, path, headers: headers)
                return (try ImageDecoder.info(of: Data(buffer: answer.body)).width, answer.headers[.vary])
            }
            let path = Self.plain("q:80", "cat.jpg", "png")
            let (full, vary) = try await size(path)
            #expect(full > 100 && vary?.contains("Sec-CH-Width") == true && vary?.contains("DPR") == true)
            // Width 100 physical pixels at DPR 2: 50 CSS pixels, made at 2x.
            #expect(try await size(path, hinted).0 == 100)
            #expect(try await size(path, [HTTPField.Name("Width")!: "60"]).0 == 60)
            #expect(try await size(path, [HTTPField.Name("Sec-CH-DPR")!: "9"]).0 == full, "a DPR over 8 is no hint")
            // The URL's own width and DPR win.
            #expect(try await size(Self.plain("w:30/dpr:1", "cat.jpg", "png"), hinted).0 == 30)
            #expect(try await size(path).0 == full, "a request without hints gets the full size again")
            // Hints past the limits are lowered to fit, never a refusal: the source's size at most.
            #expect(try await size(path, [HTTPField.Name("Sec-CH-Width")!: "4000"]).0 == full)
            let phone: HTTPFields = [HTTPField.Name("Sec-CH-DPR")!: "3"]
            let wide = try await get(client, Self.plain("w:800/h:800/enlarge:1", "cat.jpg", "png"), headers: phone)
            #expect(wide.status == .ok, "\(String(buffer: wide.body))")
            #expect(try ImageDecoder.info(of: Data(buffer: wide.body)).width <= 2048)
        }
        // Off (the default): hints change nothing and nothing varies on them.
        try await TestServer { $0.allowUnsignedAdHoc = true }.test { (client: any TestClientProtocol) async throws in
            let answer = try await get(client, Self.plain("q:80", "cat.jpg", "png"), headers: hinted)
            let width = try ImageDecoder.info(of: Data(buffer: answer.body)).width
            #expect(width > 100 && answer.headers[.vary]?.contains("Width") != true)
        }
        // Requests with hints are never answered from the ready answers.
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/imgproxy/insecure/q:80/plain/local:///cat.jpg@png")
        #expect(ReadyAnswers.Key(head) != nil)
        head.headers.add(name: "Sec-CH-Width", value: "100")
        #expect(ReadyAnswers.Key(head) == nil)
    }

    @Test func imgproxysVariablesSetTheSettings() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: [
            "IMGPROXY_BASE_URL": "http://images.test/", "IMGPROXY_URL_REPLACEMENTS": "a://=http://", "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": "1",
            "IMGPROXY_ONLY_PRESETS": "true", "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": "w, h,pr", "IMGPROXY_SKIP_PROCESSING_FORMATS": "jpg,svg",
            "IMGPROXY_ENFORCE_WEBP": "1", "IMGPROXY_ENFORCE_AVIF": "0", "IMGPROXY_ENFORCE_JXL": "t", "IMGPROXY_ENABLE_CLIENT_HINTS": "yes",
            "IMGPROXY_KEEP_COPYRIGHT": "1",
        ])
        let settings = configuration.imgproxy
        #expect(settings.baseURL == "http://images.test/" && settings.urlReplacements == "a://=http://" && settings.base64URLIncludesFilename)
        #expect(settings.onlyPresets && settings.allowedProcessingOptions == ["w", "h", "pr"] && settings.skipProcessingFormats == ["jpg", "svg"])
        #expect(settings.enforcedFormats == [.jxl, .webp] && settings.enableClientHints && settings.keepCopyright)
        #expect(configuration.jpegXL, "JPEG XL enforced: negotiated")
        #expect(throws: ServerConfigurationError.self) { try configuration.apply(environment: ["IMGPROXY_ONLY_PRESETS": "maybe"]) }
        // And the JSON object of the same names.
        let decoded = try JSONDecoder().decode(ServerConfiguration.self, from: Data(#"{"imgproxy": {"baseURL": "http://b/", "enforceAVIF": true}}"#.utf8))
        #expect(decoded.imgproxy.baseURL == "http://b/" && decoded.imgproxy.enforcedFormats == [.avif])
    }

    @Test func urlSettingsAsImgproxyReadsThem() throws {
        var settings = ImgproxyURL.Settings()
        settings.baseURL = "http://images.test/"
        settings.replacements = try ImgproxyURL.URLReplacement.list("test://*/=test2://images.test/${1}/dolor/;test2://=http://;cdn:$1=x")
        func source(_ path: String, _ settings: ImgproxyURL.Settings) throws -> String {
            guard case .remote(let url) = try ImgproxyURL.parse(Substring(path), settings: settings).source else { return "(a path)" }
            return url.absoluteString
        }
        let encoded = Data("test://lorem/ipsum.jpg?a=b".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        #expect(try source("/sig/w:10/\(encoded).png", settings) == "http://images.test/lorem/dolor/ipsum.jpg?a=b")
        #expect(try source("/sig/w:10/plain/lorem/ipsum.jpg@png", settings) == "http://images.test/lorem/ipsum.jpg")
        #expect(try source("/sig/w:10/plain/http://images.test/a.jpg", settings) == "http://images.test/a.jpg", "not prefixed twice")
        #expect(try source("/sig/w:10/plain/lorem%2Fipsum.jpg%3Fa%3Db@png", settings) == "http://images.test/lorem/ipsum.jpg?a=b")
        // Go's template rules: no such group or a name is empty, $0 the whole match, $$ a `$`,
        // a `$` starting no name itself, `$1x` the name "1x".
        #expect(try ImgproxyURL.URLReplacement(pattern: "a*", replacement: "b$2${3}$").apply(to: "ax/y") == "b$/y")
        #expect(try ImgproxyURL.URLReplacement(pattern: "a*", replacement: "[$0|$$1|${1}|$1x|$name]").apply(to: "ax/y") == "[ax|$1|x||]/y")
        // A file name after a base64 source, when allowed.
        var named = ImgproxyURL.Settings()
        named.base64IncludesFilename = true
        let plainSource = Data("http://images.test/a.jpg".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        #expect(try ImgproxyURL.parse(Substring("/sig/w:10/\(plainSource).webp/puppy.jpg"), settings: named).options.format == .webp)
        // Presets only: the options segment names presets.
        var only = ImgproxyURL.Settings(presets: ["small": ["w:50"], "soft": ["bl:2"]])
        only.onlyPresets = true
        let onlyURL = try ImgproxyURL.parse("/sig/small:soft/plain/local:///a.jpg@png", settings: only)
        #expect(onlyURL.options.width == 50 && onlyURL.options.blur == 2 && onlyURL.options.format == .png)
        #expect(throws: RequestError.self) { try ImgproxyURL.parse("/sig/small:nope/plain/local:///a.jpg", settings: only) }
        // Allowed options: a preset's own options are not checked; anything else not listed is a 403.
        var allowed = ImgproxyURL.Settings(presets: ["soft": ["bl:2"]])
        allowed.allowedOptions = ["w", "pr"]
        #expect(try ImgproxyURL.parse("/sig/w:10/pr:soft/plain/local:///a.jpg", settings: allowed).options.blur == 2)
        #expect(throws: RequestError.refused("forbidden processing option bl")) {
            try ImgproxyURL.parse("/sig/w:10/bl:2/plain/local:///a.jpg", settings: allowed)
        }
        // Presets that name each other are each applied once (imgproxy's loop rule).
        let loop = ImgproxyURL.Settings(presets: ["a": ["w:10", "pr:b"], "b": ["h:20", "pr:a"]])
        let looped = try ImgproxyURL.parse("/sig/pr:a/plain/local:///a.jpg", settings: loop)
        #expect(looped.options.width == 10 && looped.options.height == 20)
    }
}
