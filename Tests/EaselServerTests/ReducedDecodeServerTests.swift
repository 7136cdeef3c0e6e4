import EaselCodecs
import EaselPipeline
@testable import EaselServer
import EaselTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// imgproxy's turn, flip and crop come before its resize; since they moved there, a 24 MP JPEG
/// asked for at 256 px was decoded at full size. Geometry from the header keeps the decode
/// reduced whatever comes first (`ReducedDecode`): asserted on the pixels each decode made.
@Suite(.timeLimit(.minutes(2))) struct ReducedDecodeServerTests {
    @Test func turnedFlippedAndCroppedImgproxyURLsDecodeAtTheReducedScale() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        // Made by ffmpeg (one encoder thread): quick in every build, ThreadSanitizer's included.
        try #require(FileManager.default.isExecutableFile(atPath: ffmpeg), "no ffmpeg: run `make deps-test`")
        let made = try await runToolOffThePool(ffmpeg, ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=6000x4000:rate=1",
                                                        "-frames:v", "1", "-threads", "1", "-q:v", "4", server.origin.child("p.jpg").path])
        try #require(made, "ffmpeg made no photo")
        let full = 6000 * 4000
        // (options, the answer's size, the most pixels its decode may make)
        let cases: [(String, (Int, Int), Int)] = [
            ("rs:fit:256:256", (256, 171), full / 64),
            ("rot:90/rs:fit:256:256", (171, 256), full / 64),
            ("fl:1/rs:fit:256:256", (256, 171), full / 64),
            // 2000 px of 6000 to 256: 1/8 would be 250 px across, short of 256; 1/4 covers it.
            ("c:2000:1500/rs:fit:256:256", (256, 192), full / 16),
            // imgproxy's geometry as one step (`ImgproxyGeometry`) plans its decode too: padding;
            // a turn, then a fill placed by a fractional offset.
            ("pd:10/rs:fit:256:256", (276, 191), full / 64),
            ("rot:90/rs:fill:200:256/g:so:0.1:0", (200, 256), full / 64),
        ]
        try await server.test { (client: any TestClientProtocol) async throws in
            for (options, size, most) in cases {
                let before = server.server.pipeline.counters
                let response = try await get(client, "/imgproxy/insecure/\(options)/plain/local:///p.jpg@png")
                #expect(response.status == .ok, "\(options): \(String(buffer: response.body))")
                let image = try ImageDecoder.decode(Data(buffer: response.body))
                #expect((image.width, image.height) == size, "\(options)")
                let after = server.server.pipeline.counters
                #expect(after.decodes == before.decodes + 1, "\(options)")
                let made = after.decodedPixels - before.decodedPixels
                #expect(made > 0 && made <= most, "\(options): the decode made \(made) pixels, at most \(most) expected")
            }
        }
    }
}
