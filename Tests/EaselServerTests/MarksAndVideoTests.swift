import EaselCodecs
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

    /// Pixels in a region that are mostly `channel` (0 red, 1 green, 2 blue).
    static func count(_ bitmap: Bitmap, x: Range<Int>, y: Range<Int>, channel: Int) -> Int {
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
            #expect(Self.count(image, x: 10..<200, y: 10..<70, channel: 0) > 300, "red text at the top left")
            #expect(Self.count(image, x: 350..<390, y: 270..<290, channel: 2) == 800, "the blue mark at the bottom right")
            #expect(Self.count(image, x: 10..<50, y: 270..<290, channel: 1) == 800, "the green mark at the bottom left")
            #expect(Self.count(image, x: 150..<300, y: 100..<250, channel: 0) == 0, "nothing in the middle")
            // imgproxy's one mark: `wm` places `wmt`'s text, with a shadow.
            let imgproxy = try await get(client, "/imgproxy/insecure/wm:1:soea:10:10/wmt:\(text)/wmsh:3/plain/local:///white.png@png")
            #expect(imgproxy.status == .ok, "\(String(buffer: imgproxy.body))")
            let marked = try Self.bitmap(imgproxy)
            #expect(Self.count(marked, x: 200..<390, y: 230..<290, channel: 0) > 300, "red text at the bottom right")
            #expect(Self.count(marked, x: 0..<200, y: 0..<150, channel: 0) == 0)
            // `wmt` without `wm` shows nothing (imgproxy's rule); bad markup is a 400.
            let unshown = try Self.bitmap(try await get(client, "/imgproxy/insecure/wmt:\(text)/plain/local:///white.png@png"))
            #expect(Self.count(unshown, x: 0..<400, y: 0..<300, channel: 0) == 0)
            #expect(try await get(client, "/imgproxy/insecure/wm:1/wmt:\(Self.base64("<b>oops"))/plain/local:///white.png@png").status == .badRequest)
            // thumbor: two watermark filters, two marks.
            let thumbor = try Self.bitmap(try await get(client, "/thumbor/unsafe/400x300/filters:watermark(green.png,10,10,0):watermark(green.png,-10,-10,0):format(png)/white.png"))
            #expect(Self.count(thumbor, x: 10..<50, y: 10..<30, channel: 1) == 800 && Self.count(thumbor, x: 350..<390, y: 270..<290, channel: 1) == 800)
            // At most 8 marks.
            let nine = Array(repeating: "wm=1", count: 9).joined(separator: ",")
            #expect(try await get(client, "/images/w=100,h=100,\(nine)/white.png").status == .badRequest)
            #expect(try await get(client, "/images/w=100,h=100,wmt=!!/white.png").status == .badRequest)
        }
    }

    @Test func aVideoIsAnsweredAsTheFrameAtTheSecondAsked() async throws {
        let server = try Self.server()
        _ = try threeColourVideo(in: server.origin.url, name: "clip.mp4")
        _ = try threeColourVideo(in: server.origin.url, name: "clip.webm", codec: ["-c:v", "libvpx-vp9", "-b:v", "200k", "-deadline", "realtime"])
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
            #expect(try await get(client, "/imgproxy/insecure/raw:1/plain/local:///clip.mp4").status.code >= 400)
            let info = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await get(client, "/info/clip.webm").body)) as? [String: Any])
            #expect(info["format"] as? String == "matroska" && info["width"] as? Int == 160 && info["height"] as? Int == 120)
            let video = try #require(info["video"] as? [String: Any])
            #expect(video["codec"] as? String == "vp9" && abs((video["duration"] as? Double ?? 0) - 3) < 0.1, "\(video)")
            #expect(try await get(client, "/images/w=80,h=60,t=-1/clip.mp4").status == .badRequest)
            // A damaged video is a 4xx/5xx with a reason, never a crash.
            try Data(try Data(contentsOf: server.origin.child("clip.mp4")).prefix(2000)).write(to: server.origin.child("cut.mp4"))
            #expect(try await get(client, "/images/w=80,h=60,f=png/cut.mp4").status.code >= 400)
        }
    }
}
