import EaselCodecs
import EaselPipeline
import EaselRemote
@testable import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Text watermarks and several marks in one request, in every URL style; video sources answered
/// as the frame at the second asked for, with their facts in `/info`.
@Suite(.timeLimit(.minutes(3))) struct MarksAndVideoTests {
    static func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func bitmap(_ response: TestResponse) throws -> Bitmap { try ImageDecoder.decode(Data(buffer: response.body)) }

    /// Pixels in a region that are mostly `channel` (0 red, 1 green, 2 blue), counted off the
    /// cooperative pool.
    static func count(_ bitmap: Bitmap, x: Range<Int>, y: Range<Int>, channel: Int) async throws -> Int {
        try await offThePool { countNow(bitmap, x: x, y: y, channel: channel) }
    }

    static func countNow(_ bitmap: Bitmap, x: Range<Int>, y: Range<Int>, channel: Int) -> Int {
        var found = 0
        for py in y.clamped(to: 0..<bitmap.height) {
            for px in x.clamped(to: 0..<bitmap.width) {
                let p = bitmap.pixel(x: px, y: py).map(Int.init)
                if p[channel] > 180, (0..<3).filter({ $0 != channel }).allSatisfy({ p[$0] < 90 }) { found += 1 }
            }
        }
        return found
    }

    /// A server whose origin has a white 400 × 300 picture and whose configured mark is 40 × 20
    /// of opaque blue.
    static let markDirectory = try! TemporaryDirectory()

    static func server() throws -> TestServer {
        let mark = markDirectory
        try ImageEncoder.encode(painted(width: 40, height: 20) { _, _ in [0, 0, 255, 255] }, as: .png()).write(to: mark.child("mark.png"))
        let server = try TestServer {
            $0.allowUnsignedAdHoc = true
            $0.watermark = mark.child("mark.png").path
        }
        try ImageEncoder.encode(paintedOpaque(width: 400, height: 300) { _, _ in [255, 255, 255, 255] }, as: .png())
            .write(to: server.origin.child("white.png"))
        try ImageEncoder.encode(painted(width: 40, height: 20) { _, _ in [0, 200, 0, 255] }, as: .png()).write(to: server.origin.child("green.png"))
        return server
    }

    @Test func textAndImageMarksAreDrawnTogetherWhereAsked() async throws {
        let server = try Self.server()
        let text = Self.base64("<span foreground='#ff0000' font='DejaVu Sans Bold 40'>EASEL</span>")
        try await server.test { (client: any TestClientProtocol) async throws in
            // Native: a text mark at the top left, the configured image at the bottom right, an
            // image source (green) at the bottom left.
            let path = "/images/w=400,h=300,f=png,wmt=\(text):1:nw:10:10,wm=1:se:10:10,wmu=\(Self.base64("green.png")):1:sw:10:10/white.png"
            let answer = try await get(client, path)
            #expect(answer.status == .ok, "\(String(buffer: answer.body))")
            let image = try Self.bitmap(answer)
            #expect(try await Self.count(image, x: 10..<200, y: 10..<70, channel: 0) > 300, "red text at the top left")
            #expect(try await Self.count(image, x: 350..<390, y: 270..<290, channel: 2) == 800, "the blue mark at the bottom right")
            #expect(try await Self.count(image, x: 10..<50, y: 270..<290, channel: 1) == 800, "the green mark at the bottom left")
            #expect(try await Self.count(image, x: 150..<300, y: 100..<250, channel: 0) == 0, "nothing in the middle")
            // imgproxy's one mark: `wm` places `wmt`'s text, with a shadow.
            let imgproxy = try await get(client, "/imgproxy/insecure/wm:1:soea:10:10/wmt:\(text)/wmsh:3/plain/local:///white.png@png")
            #expect(imgproxy.status == .ok, "\(String(buffer: imgproxy.body))")
            let marked = try Self.bitmap(imgproxy)
            #expect(try await Self.count(marked, x: 200..<390, y: 230..<290, channel: 0) > 300, "red text at the bottom right")
            #expect(try await Self.count(marked, x: 0..<200, y: 0..<150, channel: 0) == 0)
            // `wmt` without `wm` shows nothing (imgproxy's rule); bad markup is a 400.
            let unshown = try Self.bitmap(try await get(client, "/imgproxy/insecure/wmt:\(text)/plain/local:///white.png@png"))
            #expect(try await Self.count(unshown, x: 0..<400, y: 0..<300, channel: 0) == 0)
            #expect(try await get(client, "/imgproxy/insecure/wm:1/wmt:\(Self.base64("<b>oops"))/plain/local:///white.png@png").status == .badRequest)
            // thumbor: two watermark filters, two marks.
            let thumbor = try Self.bitmap(try await get(client, "/thumbor/unsafe/400x300/filters:watermark(green.png,10,10,0):watermark(green.png,-10,-10,0):format(png)/white.png"))
            #expect(try await Self.count(thumbor, x: 10..<50, y: 10..<30, channel: 1) == 800)
            #expect(try await Self.count(thumbor, x: 350..<390, y: 270..<290, channel: 1) == 800)
            // thumbor's percentages: `20p` is 20 % of the image's width from the left, `-25p`
            // 25 % from the right (the 40×20 mark at x 80 and 260, y 30 and 130).
            let percent = try Self.bitmap(try await get(client, "/thumbor/unsafe/400x300/filters:watermark(green.png,20p,10p,0):watermark(green.png,-25p,-50p,0):format(png)/white.png"))
            #expect(try await Self.count(percent, x: 80..<120, y: 30..<50, channel: 1) == 800, "20p, 10p")
            #expect(try await Self.count(percent, x: 260..<300, y: 130..<150, channel: 1) == 800, "-25p, -50p")
            #expect(try await Self.count(percent, x: 0..<400, y: 0..<300, channel: 1) == 1600, "two marks, nothing else")
            // Past 100p the mark is outside the image: answered, unmarked (as thumbor answers).
            let outside = try await get(client, "/thumbor/unsafe/400x300/filters:watermark(green.png,101p,0,0):format(png)/white.png")
            #expect(outside.status == .ok)
            #expect(try await Self.count(try Self.bitmap(outside), x: 0..<400, y: 0..<300, channel: 1) == 0)
            // `wms` fits the mark into a box in the pixels of the requested size: times the dpr,
            // and another identity with it.
            func blue(_ path: String) async throws -> Int {
                let answer = try await get(client, path)
                #expect(answer.status == .ok, "\(path): \(String(buffer: answer.body))")
                return try await Self.count(try Self.bitmap(answer), x: 0..<400, y: 0..<300, channel: 2)
            }
            let one = try await blue("/imgproxy/insecure/rs:fit:400:300/wm:1:nowe/wms:100:0/plain/local:///white.png@png")
            let two = try await blue("/imgproxy/insecure/rs:fit:200:150/dpr:2/wm:1:nowe/wms:100:0/plain/local:///white.png@png")
            #expect(abs(one - 100 * 50) < 200 && abs(two - 200 * 100) < 400, "\(one) and \(two) blue pixels")
            // A box far past the image is refused, not made: the mark it would make (65,536 ×
            // 32,768 here) is over four times the image's pixels (`Watermark.scaledMark`), a 422.
            let boxed = try await get(client, "/imgproxy/insecure/rs:fit:100:100/dpr:8/wm:1/wms:8192:8192/plain/local:///white.png@png")
            #expect(boxed.status == .unprocessableContent && String(buffer: boxed.body).contains("too large"),
                    "\(boxed.status): \(String(buffer: boxed.body))")
            // A shadow darkens the white around imgproxy's text mark.
            let plain = try Self.bitmap(try await get(client, "/imgproxy/insecure/wm:1:ce/wmt:\(text)/plain/local:///white.png@png"))
            let shadowed = try Self.bitmap(try await get(client, "/imgproxy/insecure/wm:1:ce/wmt:\(text)/wmsh:4/plain/local:///white.png@png"))
            @Sendable func grey(_ bitmap: Bitmap) -> Int {
                var found = 0
                for y in 0..<bitmap.height { for x in 0..<bitmap.width {
                    let p = bitmap.pixel(x: x, y: y).map(Int.init)
                    if p[0] < 235, abs(p[0] - p[1]) < 10, abs(p[1] - p[2]) < 10 { found += 1 }
                } }
                return found
            }
            let (withShadow, without) = try await offThePool { (grey(shadowed), grey(plain)) }
            #expect(withShadow > without + 500, "\(withShadow) grey pixels with a shadow, \(without) without")
            // imgproxy Pro's chained pipelines: one mark each (the second the configured blue).
            let green = Self.base64("local:///green.png")
            let chained = try Self.bitmap(try await get(client, "/imgproxy/insecure/rs:fit:400:300/wm:1:nowe/wmu:\(green)/-/wm:1:soea/plain/local:///white.png@png"))
            #expect(try await Self.count(chained, x: 0..<40, y: 0..<20, channel: 1) == 800, "green at the top left")
            #expect(try await Self.count(chained, x: 360..<400, y: 280..<300, channel: 2) == 800, "blue at the bottom right")
            #expect(try await get(client, "/imgproxy/insecure/wm:1/-/rs:fit:10:10/plain/local:///white.png@png").status == .badRequest)
            // At most 8 marks.
            let nine = Array(repeating: "wm=1", count: 9).joined(separator: ",")
            #expect(try await get(client, "/images/w=100,h=100,\(nine)/white.png").status == .badRequest)
            #expect(try await get(client, "/images/w=100,h=100,wmt=!!/white.png").status == .badRequest)
        }
    }

    @Test func aVideoIsAnsweredAsTheFrameAtTheSecondAsked() async throws {
        let server = try Self.server()
        _ = try await threeColourVideo(in: server.origin.url, name: "clip.mp4")
        _ = try await threeColourVideo(in: server.origin.url, name: "clip.webm", codec: ["-c:v", "libvpx-vp9", "-b:v", "200k", "-deadline", "realtime", "-cpu-used", "8"])
        try await server.test { (client: any TestClientProtocol) async throws in
            func centre(_ path: String) async throws -> [Int] {
                let answer = try await get(client, path)
                #expect(answer.status == .ok, "\(path): \(String(buffer: answer.body))")
                let image = try Self.bitmap(answer)
                return image.pixel(x: image.width / 2, y: image.height / 2).prefix(3).map(Int.init)
            }
            func near(_ p: [Int], _ q: [Int]) -> Bool { zip(p, q).allSatisfy { abs($0 - $1) <= 16 } }
            for (second, colour) in [(0.5, [255, 0, 0]), (1.5, [0, 128, 0]), (2.5, [0, 0, 255])] {
                #expect(near(try await centre("/images/w=80,h=60,f=png,t=\(second)/clip.mp4"), colour), "native \(second) s")
                #expect(near(try await centre("/imgproxy/insecure/rs:fit:80:60/vts:\(second)/plain/local:///clip.webm@png"), colour), "imgproxy \(second) s")
            }
            // The default is 1 s; named formats work too; a video is never answered as it is.
            #expect(near(try await centre("/images/thumb/clip.mp4"), [0, 128, 0]))
            let raw = try await get(client, "/imgproxy/insecure/raw:1/plain/local:///clip.mp4")
            #expect(raw.status == .unprocessableContent && String(buffer: raw.body).contains("unsupported or corrupt image"),
                    "\(raw.status): \(String(buffer: raw.body))")
            let info = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await get(client, "/info/clip.webm").body)) as? [String: Any])
            #expect(info["format"] as? String == "matroska" && info["width"] as? Int == 160 && info["height"] as? Int == 120)
            let video = try #require(info["video"] as? [String: Any])
            #expect(video["codec"] as? String == "vp9" && abs((video["duration"] as? Double ?? 0) - 3) < 0.1, "\(video)")
            #expect(try await get(client, "/images/w=80,h=60,t=-1/clip.mp4").status == .badRequest)
            // The extras are of the frame asked for: blue at 2.5 s.
            let late = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await get(client, "/info/clip.mp4?t=2.5&average=1").body))
                as? [String: Any])
            #expect((late["video"] as? [String: Any])?["frameSecond"] as? Double == 2.5)
            let blue = ((late["average"] as? [String: Any])?["color"] as? String).map { hex in
                stride(from: 1, to: 7, by: 2).map { Int(hex.dropFirst($0).prefix(2), radix: 16) ?? -1 }
            } ?? []
            #expect(blue.count == 3 && blue[0] < 20 && blue[1] < 20 && blue[2] > 235, "\(late)")
            let imgproxyLate = try #require(try JSONSerialization.jsonObject(
                with: Data(buffer: try await get(client, "/imgproxy/info/insecure/vts:0.5/avg:1/plain/local:///clip.webm").body)) as? [String: Any])
            #expect(((imgproxyLate["average"] as? [String: Int])?["R"] ?? 0) > 240, "red at 0.5 s: \(imgproxyLate)")
            // A damaged video is a 422 with a reason (bad input, not the server's failure), never a crash.
            try Data(try Data(contentsOf: server.origin.child("clip.mp4")).prefix(2000)).write(to: server.origin.child("cut.mp4"))
            let cut = try await get(client, "/images/w=80,h=60,f=png/cut.mp4")
            #expect(cut.status == .unprocessableContent && String(buffer: cut.body).contains("unsupported or corrupt image"),
                    "\(cut.status): \(String(buffer: cut.body))")
        }
    }

    @Test func aVideoFromAnHTTPOriginOrS3IsAnsweredToo() async throws {
        let directory = try TemporaryDirectory()
        let clip = try Data(contentsOf: try await threeColourVideo(in: directory.url, name: "clip.mp4"))
        @Sendable func near(_ bitmap: Bitmap, _ colour: [Int]) -> Bool {
            zip(bitmap.pixel(x: bitmap.width / 2, y: bitmap.height / 2).prefix(3).map(Int.init), colour).allSatisfy { abs($0 - $1) <= 16 }
        }
        // HTTP: an origin on loopback, sending it as video/mp4.
        let origin = Origin()
        origin.serve("/clip.mp4", .file(clip, headers: ["Content-Type": "video/mp4"]))
        try await origin.run { base in
            let server = try TestServer { $0.origin = base.absoluteString; $0.allowUnsignedAdHoc = true }
            try await server.test { (client: any TestClientProtocol) async throws in
                let answer = try await get(client, "/images/w=80,h=60,f=png,t=2.5/clip.mp4")
                #expect(answer.status == .ok, "\(String(buffer: answer.body))")
                #expect(near(try Self.bitmap(answer), [0, 0, 255]), "blue at 2.5 s")
            }
        }
        // S3: moto's server, through the pipeline's S3 fetcher.
        let s3 = try await S3TestServer.shared()
        let key = "video-\(UUID().uuidString)/clip.mp4"
        let client = S3Client(configuration: try .fromEnvironment(s3.environment))
        try await client.put(bucket: S3TestServer.bucket, key: key, data: clip, contentType: "video/mp4")
        let cache = try TemporaryDirectory()
        let pipeline = try ImagePipeline(configuration: .init(formats: [], cacheDirectory: cache.url, fetchers: [S3Fetcher(client: client)],
                                                              downloadRate: nil))
        var request = ImageRequest(url: URL(string: "s3://\(S3TestServer.bucket)/\(key)")!,
                                   processing: .processors([Resize(width: 80, height: 60)]))
        do {
            request.video = VideoPosition(second: 0.5)
            let red = try await pipeline.image(for: request)
            #expect(red.image.width == 80 && near(red.image, [255, 0, 0]), "red at 0.5 s")
            request.video = VideoPosition(second: 1.5)
            #expect(near(try await pipeline.image(for: request).image, [0, 128, 0]), "green at 1.5 s: another variant")
        } catch {
            await pipeline.close()
            try await client.shutdown()
            throw error
        }
        await pipeline.close()
        try await client.shutdown()
    }
}
