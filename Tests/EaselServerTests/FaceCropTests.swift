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
/// where the attention crop shows the louder distractor.
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
                         "/imgproxy/insecure/rs:fill:600:600/g:obj:face/plain/local:///canvas.png@png",
                         "/thumbor/unsafe/600x600/smart/filters:format(png)/canvas.png",
                         "/thumbor/unsafe/600x600/filters:focal():format(png)/canvas.png"] {
                #expect(try await faces(path) == 1, "\(path)")
            }
            #expect(try await faces("/images/w=600,h=600,fit=fill,g=sm,f=png/canvas.png") == 0, "attention goes to the distractor")
            #expect(try await get(client, "/thumbor/unsafe/300x300/filters:redeye()/canvas.png").status == .ok)
            #expect(try await get(client, "/imgproxy/insecure/g:obj:car/plain/local:///canvas.png").status == .badRequest)
        }
    }
}
