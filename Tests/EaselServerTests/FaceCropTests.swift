import EaselCodecs
@testable import EaselServer
import EaselTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Face-aware crops in every URL style (native `g=face`, imgproxy's `g:obj:face`, thumbor's
/// `smart` and `focal()`), and thumbor's `redeye()`, asked of a server: the answer shows the face
/// where the attention crop shows the louder distractor; red pupils lose their red.
@Suite(.timeLimit(.minutes(2))) struct FaceCropTests {
    @Test func everyStyleAsksForTheFaceCrop() async throws {
        try #require(FaceDetector.isAvailable, "OpenCV's cascades (opencv-data) are installed by make deps")
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        // (Painted off the cooperative pool: its seconds of debug-build pixel work would hold one
        // of the two threads every server of the run needs.)
        try await offThePool { try ImageEncoder.encode(try faceCanvas(face: (720, 420), loud: (90, 60)), as: .png()) }
            .write(to: server.origin.child("canvas.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func faces(_ path: String) async throws -> Int {
                let answer = try await get(client, path)
                #expect(answer.status == .ok, "\(path): \(String(buffer: answer.body))")
                return try FaceDetector.faces(in: try ImageDecoder.decode(Data(buffer: answer.body))).count
            }
            for path in ["/images/w=600,h=600,fit=fill,g=face,f=png/canvas.png",
                         "/thumbor/unsafe/600x600/smart/filters:format(png)/canvas.png",
                         "/thumbor/unsafe/600x600/filters:focal():format(png)/canvas.png"] {
                #expect(try await faces(path) == 1, "\(path)")
            }
            // imgproxy's window is placed on its resized image (imgproxy's order: resize, then
            // cut), where the others cut the source first: the same window to within a pixel,
            // whose face sits at its edge, where the detector's verdict on the answer turns on
            // resampling details. Compared with the native face crop instead, at a tenth of the
            // size (the canvas's noise averaged out): the same picture.
            func small(_ path: String) async throws -> Bitmap {
                let answer = try await get(client, path)
                #expect(answer.status == .ok, "\(path): \(String(buffer: answer.body))")
                return try Resize(width: 60, height: 60, mode: .exact).process(try ImageDecoder.decode(Data(buffer: answer.body)))
            }
            let native = try await small("/images/w=600,h=600,fit=fill,g=face,f=png/canvas.png")
            let imgproxy = try await small("/imgproxy/insecure/rs:fill:600:600/g:obj:face/plain/local:///canvas.png@png")
            func difference(_ a: Bitmap, _ b: Bitmap) -> Double {
                var total = 0
                for y in 0..<60 { for x in 0..<60 { for c in 0..<3 { total += abs(Int(a.pixel(x: x, y: y)[c]) - Int(b.pixel(x: x, y: y)[c])) } } }
                return Double(total) / Double(60 * 60 * 3)
            }
            #expect(difference(native, imgproxy) < 6, "imgproxy's face crop is the native one: \(difference(native, imgproxy))")
            // (The attention crop, checked below, shows the distractor: not this picture.)
            #expect(try await faces("/images/w=600,h=600,fit=fill,g=sm,f=png/canvas.png") == 0, "attention goes to the distractor")
            #expect(try await get(client, "/imgproxy/insecure/g:obj:car/plain/local:///canvas.png").status == .badRequest)
        }
    }

    /// thumbor's `redeye()` asked of a server: red pupils painted at the eyes OpenCV finds in the
    /// astronaut's face take the mean of their green and blue (30) as their red; the same red on
    /// the suit, in no eye, stays; and without the filter the pupils stay red.
    @Test func thumborsRedeyeCorrectsRedPupilsOnly() async throws {
        try #require(FaceDetector.isAvailable, "OpenCV's cascades (opencv-data) are installed by make deps")
        // (Detected and painted off the cooperative pool, as the canvas above.)
        let (png, eyes) = try await offThePool { () throws -> (Data, [FaceDetector.Box]) in
            var photo = try ImageDecoder.decode(try Data(contentsOf: sampleURL("astronaut.jpg")))
            guard let face = try FaceDetector.faces(in: photo).first else { return (Data(), []) }
            let eyes = try FaceDetector.eyes(in: photo, face: face)
            let rowBytes = photo.rowBytes
            photo.withUnsafeMutableBytes { bytes in
                for (cx, cy) in eyes.map({ ($0.x + $0.width / 2, $0.y + $0.height / 2) }) + [(100, 400)] {
                    for y in (cy - 2)...(cy + 2) { for x in (cx - 2)...(cx + 2) {
                        let o = y * rowBytes + x * 4
                        (bytes[o], bytes[o + 1], bytes[o + 2]) = (220, 30, 30)
                    } }
                }
            }
            return (try ImageEncoder.encode(photo, as: .png()), eyes)
        }
        try #require(!eyes.isEmpty, "an eye is found in the astronaut's face")
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try png.write(to: server.origin.child("red-eyes.png"))
        let pupils = eyes.map { ($0.x + $0.width / 2, $0.y + $0.height / 2) }
        try await server.test { (client: any TestClientProtocol) async throws in
            func image(_ path: String) async throws -> Bitmap {
                let answer = try await get(client, path)
                #expect(answer.status == .ok, "\(path): \(String(buffer: answer.body))")
                return try ImageDecoder.decode(Data(buffer: answer.body))
            }
            let corrected = try await image("/thumbor/unsafe/filters:redeye():format(png)/red-eyes.png")
            let plain = try await image("/thumbor/unsafe/filters:format(png)/red-eyes.png")
            for (cx, cy) in pupils {
                let p = corrected.pixel(x: cx, y: cy)
                #expect(p[0] <= 40 && p[1] == 30 && p[2] == 30, "the pupil at \(cx),\(cy): \(p)")
                #expect(Array(plain.pixel(x: cx, y: cy).prefix(3)) == [220, 30, 30], "without redeye() the pupil at \(cx),\(cy) stays red")
            }
            #expect(corrected.pixel(x: 100, y: 400) == [220, 30, 30, 255], "red outside the eyes stays")
        }
    }
}
