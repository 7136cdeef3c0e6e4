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
import Testing

/// imgproxy's options that its documentation (3.30) lists and the earlier drop-in work left out:
/// the open-source `flip`, `extend_aspect_ratio` and `max_result_dimension`, and Pro's
/// `watermark_rotate`, `fallback_image_url` and `cache_tags`.
@Suite(.timeLimit(.minutes(2))) struct ImgproxyLatestOptionsTests {
    static func plain(_ options: String, _ source: String) -> String {
        "/imgproxy/insecure/\(options)/plain/local:///\(source)@png"
    }

    static func image(_ response: TestResponse) throws -> Bitmap { try ImageDecoder.decode(Data(buffer: response.body)) }

    static func base64URL(_ text: String) -> String { URLSigner.base64URL(Data(text.utf8)) }

    /// Red across (0 at the left, 255 at the right), green down.
    /// `picture` (as g.png) made as `options` say: a 200, decoded.
    static func answer(_ client: any TestClientProtocol, _ options: String) async throws -> Bitmap {
        let response = try await get(client, plain(options, "g.png"))
        #expect(response.status == .ok, "\(options): \(String(buffer: response.body))")
        return try image(response)
    }

    static let picture = painted(width: 60, height: 40) { x, y in [UInt8(x * 255 / 59), UInt8(y * 255 / 39), 90, 255] }

    @Test func flipAspectRatioExtensionAndTheResultLimitAsImgproxy() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try ImageEncoder.encode(Self.picture, as: .png()).write(to: server.origin.child("g.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func answer(_ options: String) async throws -> Bitmap { try await Self.answer(client, options) }
            // flip:horizontal:vertical.
            let across = try await answer("fl:1")
            #expect(across.pixel(x: 0, y: 0)[0] > 250 && across.pixel(x: 59, y: 0)[0] < 5 && across.pixel(x: 0, y: 0)[1] < 5)
            let down = try await answer("fl:0:1")
            #expect(down.pixel(x: 0, y: 0)[0] < 5 && down.pixel(x: 0, y: 0)[1] > 250)
            let both = try await answer("flip:t:t")
            #expect(both.pixel(x: 0, y: 0)[0] > 250 && both.pixel(x: 0, y: 0)[1] > 250)
            // Flipped before the extension: the image stays where the gravity put it.
            let extended = try await answer("rs:fit:100:100/ex:1:nowe/fl:1")
            #expect(extended.width == 100 && extended.height == 100)
            #expect(extended.pixel(x: 0, y: 0)[0] > 250 && extended.pixel(x: 59, y: 39)[0] < 5, "flipped in place, at the top left")
            #expect(extended.pixel(x: 80, y: 80) != extended.pixel(x: 0, y: 0), "the canvas around it")

            // Turned and flipped before the crops, as imgproxy: the fill's gravity and `crop`'s
            // act on the flipped image (its west is the source's east).
            let filled = try await answer("rs:fill:30:40/g:we/fl:1")
            #expect(filled.width == 30 && filled.pixel(x: 0, y: 0)[0] > 250 && filled.pixel(x: 29, y: 0)[0] < 140)
            let cropped = try await answer("c:30:40:we/fl:1")
            #expect(cropped.width == 30 && cropped.pixel(x: 0, y: 0)[0] > 250)
            // rot:90 first: a 40×60 image, whose top rows were the source's left columns.
            let turned = try await answer("rot:90/c:40:30:nowe")
            #expect((turned.width, turned.height) == (40, 30))
            #expect(turned.pixel(x: 0, y: 0)[0] < 5 && turned.pixel(x: 0, y: 0)[1] > 250 && turned.pixel(x: 39, y: 29)[1] < 5)

            // extend_aspect_ratio: 60×40 (3:2) asked for 100×50 (2:1), not enlarged: 80×40.
            let ratio = try await answer("rs:fit:100:50/exar:1")
            #expect((ratio.width, ratio.height) == (80, 40))
            let west = try await answer("rs:fit:100:50/extend_ar:1:we")
            #expect(west.pixel(x: 0, y: 20)[0] < 5 && west.pixel(x: 59, y: 20)[0] > 250 && west.pixel(x: 70, y: 20) != west.pixel(x: 59, y: 20))
            let east = try await answer("rs:fit:100:50/extend_aspect_ratio:1:ea")
            #expect(east.pixel(x: 20, y: 20)[0] < 5, "the image starts at x = 20")
            // Taller asked (1:2): fitted to 50×33, then the height grows, to 100.
            let tall = try await answer("rs:fit:50:100/exar:1")
            #expect((tall.width, tall.height) == (50, 100))
            // Nothing to do when a side is not asked for, when the ratio is met, or when off.
            #expect(try await answer("rs:fit:100:0/exar:1").width == 60)
            #expect(try await answer("rs:fit:90:60/exar:1").width == 60)
            #expect(try await answer("rs:fit:100:50/exar:0").width == 60)
            // With extend to the size, the size is the ratio already.
            let full = try await answer("rs:fit:100:50/ex:1/exar:1")
            #expect((full.width, full.height) == (100, 50))

            // max_result_dimension: the whole result scaled down to fit, padding included.
            let limited = try await answer("mrd:30")
            #expect((limited.width, limited.height) == (30, 20))
            let padded = try await answer("rs:fit:100:100/ex:1/max_result_dimension:50")
            #expect((padded.width, padded.height) == (50, 50))
            // Made at a lower DPR where the box is known: the box, the extension and the padding fit.
            let fill = try await answer("rs:fill:100:100:1/mrd:50")
            #expect((fill.width, fill.height) == (50, 50))
            let withPadding = try await answer("pd:10/rs:fit:80:80/ex:1/mrd:50")
            #expect((withPadding.width, withPadding.height) == (50, 50))
            #expect(try await answer("mrd:0").width == 60, "0: no limit")
            #expect(try await answer("mrd:500").width == 60, "never enlarged")

            for bad in ["fl:maybe", "fl:1:1:1", "exar:1:sm", "exar:x", "mrd:-1", "mrd:big", "dpr:20/rs:fit:100:100/mrd:500"] {
                let response = try await get(client, Self.plain(bad, "g.png"))
                #expect(response.status == .badRequest, "\(bad): \(response.status)")
            }
        }
    }

    @Test func theServersResultLimitStandsUnlessAURLsIsLower() async throws {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: ["IMGPROXY_MAX_RESULT_DIMENSION": "30"])
        #expect(configuration.imgproxy.maxResultDimension == 30)
        #expect(throws: ServerConfigurationError.self) { try configuration.apply(environment: ["IMGPROXY_MAX_RESULT_DIMENSION": "big"]) }
        #expect(throws: ServerConfigurationError.self) { _ = try TestServer { $0.imgproxy.maxResultDimension = -1 } }
        let server = try TestServer { $0.allowUnsignedAdHoc = true; $0.imgproxy.maxResultDimension = 30 }
        try ImageEncoder.encode(Self.picture, as: .png()).write(to: server.origin.child("g.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            for (options, size) in [("rs:fit:0:0", (30, 20)), ("mrd:20", (20, 13)), ("mrd:50", (30, 20)), ("rs:fit:100:100/ex:1", (30, 30))] {
                let image = try Self.image(try await get(client, Self.plain(options, "g.png")))
                #expect((image.width, image.height) == size, "\(options): \(image.width)x\(image.height)")
            }
            // Only imgproxy's route: a native URL is not limited by imgproxy's setting.
            #expect(try Self.image(try await get(client, "/images/w=60,h=60,f=png/g.png")).width == 60)
        }
    }

    @Test func aTurnedWatermarkStandsUp() async throws {
        let files = try TemporaryDirectory()
        // A 40 × 10 blue bar.
        try ImageEncoder.encode(painted(width: 40, height: 10) { _, _ in [0, 0, 255, 255] }, as: .png()).write(to: files.child("bar.png"))
        let server = try TestServer { $0.allowUnsignedAdHoc = true; $0.watermark = files.child("bar.png").path }
        try ImageEncoder.encode(painted(width: 100, height: 100) { _, _ in [255, 255, 255, 255] }, as: .png()).write(to: server.origin.child("w.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func blue(_ image: Bitmap, _ x: Int, _ y: Int) -> Bool { image.pixel(x: x, y: y) == [0, 0, 255, 255] }
            let flat = try Self.image(try await get(client, Self.plain("wm:1:nowe", "w.png")))
            #expect(blue(flat, 30, 5) && !blue(flat, 5, 30))
            for option in ["wmr:90", "wm_rot:-90", "watermark_rotate:270"] {
                let response = try await get(client, Self.plain("wm:1:nowe/\(option)", "w.png"))
                let turned = try Self.image(response)
                #expect(blue(turned, 5, 30) && !blue(turned, 30, 5), "\(option)")
            }
            // Any angle, placed by its turned box: 45° from the top-left corner.
            let slanted = try Self.image(try await get(client, Self.plain("wm:1:nowe/wmr:45", "w.png")))
            #expect(blue(slanted, 17, 17) && !blue(slanted, 2, 2) && !blue(slanted, 33, 2))
            // In a chained pipeline, with the other mark options.
            let chained = try await get(client, "/imgproxy/insecure/wm:1:nowe/-/wm:1:soea/wmr:90/plain/local:///w.png@png")
            let two = try Self.image(chained)
            #expect(chained.status == .ok && blue(two, 30, 5) && blue(two, 95, 70) && !blue(two, 70, 95))
            // Natively: the last part of `wm=` (and of `wmu=`, `wmt=`).
            let native = try Self.image(try await get(client, "/images/w=100,h=100,f=png,wm=1:nw:0:0:0:0:90/w.png"))
            #expect(blue(native, 5, 30) && !blue(native, 30, 5))
            #expect(try await get(client, "/images/w=100,h=100,f=png,wm=1:nw:0:0:0:0:x/w.png").status == .badRequest)
            for bad in ["wmr:x", "wmr:1.5", "wmr:99999999"] {
                #expect(try await get(client, Self.plain("wm:1/\(bad)", "w.png")).status == .badRequest, "\(bad)")
            }
        }
    }

    /// thumbor flips while it resizes, after its crop and before its `fill`: with an odd margin
    /// the image stays where `fill` centred it (20 px on the left, 21 on the right).
    @Test func thumborFlipsBeforeItFills() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try ImageEncoder.encode(Self.picture, as: .png()).write(to: server.origin.child("g.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            let answer = try await get(client, "/thumbor/unsafe/fit-in/-101x100/filters:fill(0000ff):format(png)/g.png")
            let image = try Self.image(answer)
            #expect((image.width, image.height) == (101, 100))
            #expect(image.pixel(x: 20, y: 50)[0] > 250 && image.pixel(x: 79, y: 50)[0] < 5, "flipped, at 20…79")
            #expect(image.pixel(x: 19, y: 50) == [0, 0, 255, 255] && image.pixel(x: 80, y: 50) == [0, 0, 255, 255])
        }
    }

    @Test func aURLsFallbackImageAndCacheTags() async throws {
        let files = try DeliveryTests.fallbackFile([255, 0, 0, 255])
        let server = try TestServer {
            $0.allowUnsignedAdHoc = true
            $0.delivery.fallbackImage = files.child("fallback.png").path
        }
        try ImageEncoder.encode(painted(width: 60, height: 40) { _, _ in [0, 0, 255, 255] }, as: .png()).write(to: server.origin.child("blue.png"))
        let own = "fiu:" + Self.base64URL("local:///blue.png")
        let tagField = HTTPField.Name("Surrogate-Key")!
        try await server.test { (client: any TestClientProtocol) async throws in
            // A missing or broken source: the URL's fallback, processed as the source would be,
            // over the configured one.
            for source in ["missing.jpg", "corrupt.jpg"] {
                let answer = try await get(client, Self.plain("rs:fit:30:30/\(own)", source))
                #expect(answer.status == .ok && answer.headers[ImageServer.fallbackField] == "1", "\(source)")
                let image = try Self.image(answer)
                #expect(image.width == 30 && image.pixel(x: 10, y: 10) == [0, 0, 255, 255])
            }
            let configured = try Self.image(try await get(client, Self.plain("rs:fit:30:30", "missing.jpg")))
            #expect(configured.pixel(x: 10, y: 10) == [255, 0, 0, 255], "the configured one without fiu")
            // A source that works is answered as itself.
            let found = try await get(client, Self.plain("rs:fit:30:30/\(own)", "cat.jpg"))
            #expect(found.status == .ok && found.headers[ImageServer.fallbackField] == nil)
            // The fallback is held to the sources' rules before anything is read: refused even
            // when the source works.
            let offList = "fiu:" + Self.base64URL("http://127.0.0.9:9/x.png")
            #expect(try await get(client, Self.plain("rs:fit:30:30/\(offList)", "cat.jpg")).status == .forbidden)
            #expect(try await get(client, Self.plain("fiu:!!!", "cat.jpg")).status == .badRequest)
            // Also where the answer is the source as it is (which never falls back).
            #expect(try await get(client, Self.plain("raw:1/\(offList)", "cat.jpg")).status == .forbidden)
            #expect(try await get(client, "/imgproxy/insecure/skp:jpg/\(offList)/plain/local:///cat.jpg").status == .forbidden)
            // The URL's own limits on its source hold for its fallback: a 60×40 fallback past
            // 0.001 MP fails, and the source's own error is answered.
            let limited = try await get(client, Self.plain("msr:0.001/\(own)", "missing.jpg"))
            #expect(limited.status == .notFound && limited.headers[ImageServer.fallbackField] == nil, "\(limited.status)")

            // cache_tags: after the source's tag, in the configured header, with the fallback's.
            let tagged = try await get(client, Self.plain("rs:fit:30:30/ct:product-42:sale", "cat.jpg"))
            let tags = try #require(tagged.headers[tagField]).split(separator: " ")
            #expect(tags.count == 3 && DeliveryTests.isTag(tags[0]) && tags[1...] == ["product-42", "sale"])
            // On a revalidation and a HEAD too.
            let etag = try #require(tagged.headers[.eTag])
            let revalidated = try await get(client, Self.plain("rs:fit:30:30/ct:product-42:sale", "cat.jpg"), headers: [.ifNoneMatch: etag])
            #expect(revalidated.status == .notModified && revalidated.headers[tagField] == tagged.headers[tagField])
            let head = try await get(client, Self.plain("rs:fit:30:30/ct:product-42:sale", "cat.jpg"), method: .head)
            #expect(head.headers[tagField] == tagged.headers[tagField])
            let again = try await get(client, Self.plain("rs:fit:30:30/ct:other", "cat.jpg"))
            #expect(again.headers[tagField]?.split(separator: " ").last == "other" && again.headers[.eTag] == tagged.headers[.eTag],
                    "tags change the headers, not the image")
            let fallbackTags = try #require(try await get(client, Self.plain("rs:fit:30:30/\(own)/ct:x", "missing.jpg")).headers[tagField])
            #expect(fallbackTags.split(separator: " ").count == 3 && fallbackTags.hasSuffix(" x"))
            let repeated = try #require(try await get(client, Self.plain("ct:a:a:b", "cat.jpg")).headers[tagField])
            #expect(repeated.split(separator: " ").dropFirst() == ["a", "b"])
            for bad in ["ct:" + String(repeating: "t", count: 129), "ct:" + (0..<17).map { "t\($0)" }.joined(separator: ":"), "ct:a,b"] {
                #expect(try await get(client, Self.plain(bad, "cat.jpg")).status == .badRequest, "\(bad)")
            }
        }
        try await TestServer { $0.allowUnsignedAdHoc = true; $0.delivery.cacheTagHeader = "Cache-Tag" }.test { (client: any TestClientProtocol) async throws in
            let tags = try #require(try await get(client, Self.plain("ct:a:b", "cat.jpg")).headers[HTTPField.Name("Cache-Tag")!])
            #expect(tags.split(separator: ",").dropFirst() == ["a", "b"])
        }
    }

    @Test func monochromeDuotoneAndColorizeAsImgproxyPro() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try ImageEncoder.encode(Self.picture, as: .png()).write(to: server.origin.child("g.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func answer(_ options: String) async throws -> Bitmap { try await Self.answer(client, options) }
            // The top right pixel: red 255, green 0, blue 90 (luma 86).
            let mono = try await answer("mc:1").pixel(x: 59, y: 0)
            #expect(mono[0] == mono[1] && mono[1] == mono[2] && abs(Int(mono[0]) - 86) <= 1, "\(mono)")
            let duo = try await answer("dt:1:000080:ffc800").pixel(x: 59, y: 0)
            #expect(duo[2] > duo[1] && duo[0] > 70, "between navy and amber: \(duo)")
            let coloured = try await answer("rs:fit:30:20/col:1:00ff00").pixel(x: 29, y: 0)
            #expect(coloured[0] == 0 && coloured[1] == 255 && coloured[2] == 0)
            // A later one replaces an earlier; 0 removes it; the short and long names are one option.
            #expect(try await answer("monochrome:1/mc:0").pixel(x: 59, y: 0)[0] > 250)
            #expect(try await answer("dt:1/duotone:0.0").pixel(x: 59, y: 0)[0] > 250)
            for refused in ["mc:2", "mc:1:zzzzzz", "dt:1:ff0000:00ff00:0000ff", "col:-1", "colorize:0.5:ff0000:maybe"] {
                let response = try await get(client, Self.plain(refused, "g.png"))
                #expect(response.status == .badRequest, "\(refused)")
            }
        }
    }
}
