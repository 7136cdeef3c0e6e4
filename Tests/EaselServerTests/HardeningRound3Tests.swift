import EaselCodecs
import EaselSupport
@testable import EaselServer
import EaselTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The third adversarial round's findings (one test each beside the crash canary).
@Suite(.timeLimit(.minutes(2))) struct HardeningRound3Tests {
    @Test func signaturesAreAcceptedInExactlyOneSpelling() async throws {
        let server = try TestServer {
            $0.signingKeys = [keyA]; $0.signingSalt = salt
            $0.imgproxyKeys = [keyA]; $0.imgproxySalts = [salt]; $0.thumborSecurityKey = "k"
        }
        try await server.test { (client: any TestClientProtocol) async throws in
            // Native: the canonical s= answers; a padded one, or one spelt with + or /, does not.
            let path = "/images/w=32,h=32/cat.jpg"
            let canonical = signature(path)
            #expect(canonical.count == 43 && !canonical.contains("="))
            try await client.execute(uri: path + "?s=" + canonical, method: .get) { #expect($0.status == .ok) }
            var variants = [canonical + "=", canonical + "%3D"]
            if canonical.contains("-") { variants.append(canonical.replacingOccurrences(of: "-", with: "+")) }
            if canonical.contains("_") { variants.append(canonical.replacingOccurrences(of: "_", with: "/")) }
            // The same 32 bytes with other bits in the last character's unused low bits.
            let last = canonical.last!, alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let index = alphabet.firstIndex(of: last)!
            variants.append(String(canonical.dropLast()) + String(alphabet[index ^ 1]))
            for variant in variants {
                try await client.execute(uri: path + "?s=" + variant, method: .get) { #expect($0.status == .forbidden, "s=\(variant)") }
            }
            // imgproxy: the same rule.
            let plain = "/rs:fit:32:32/plain/local:///cat.jpg"
            let imgproxySignature = ImgproxyURL.signature(path: plain, key: Data(hex: keyA)!, salt: Data(hex: salt)!)
            try await client.execute(uri: "/imgproxy/" + imgproxySignature + plain, method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/imgproxy/" + imgproxySignature + "=" + plain, method: .get) { #expect($0.status == .forbidden) }
            // thumbor: padded, as thumbor writes and checks it; unpadded is refused.
            let thumborPath = "32x32/cat.jpg"
            let thumborSignature = ThumborURL.signature(path: Substring(thumborPath), key: "k")
            #expect(thumborSignature.hasSuffix("="))
            try await client.execute(uri: "/thumbor/" + thumborSignature + "/" + thumborPath, method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/thumbor/" + thumborSignature.dropLast() + "/" + thumborPath, method: .get) {
                #expect($0.status == .forbidden)
            }
        }
    }

    /// `meta/` answers thumbor's JSON (its operations: `ServerTests.thumborsMetaDescribesTheOperations`).
    @Test func thumborMetaAnswersJSON() async throws {
        try await TestServer { $0.allowUnsignedAdHoc = true }.test { (client: any TestClientProtocol) async throws in
            try await client.execute(uri: "/thumbor/unsafe/meta/100x100/cat.jpg", method: .get) { response in
                #expect(response.status == .ok && response.headers[.contentType] == "application/json")
                #expect(String(buffer: response.body).hasPrefix("{\"thumbor\":"))
            }
        }
    }

    @Test func anOversizedWatermarkIsRefusedFromItsHeaderWithoutADecode() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        // 7000×7000: 49 MB of gray pixels that compress to a small file.
        let big = try ImageEncoder.encode(Bitmap(width: 7000, height: 7000, pixelFormat: .gray8), as: .png(compressionLevel: 9))
        try big.write(to: server.origin.child("big.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            let before = server.server.pipeline.counters.decodes
            try await client.execute(uri: "/thumbor/unsafe/100x100/filters:watermark(big.png,0,0,50)/cat.jpg", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("at most 2048 pixels a side"))
            }
            // Neither the mark (refused from its header) nor the image it would have marked.
            #expect(server.server.pipeline.counters.decodes == before)
            // A mark within the limit still works.
            try await client.execute(uri: "/thumbor/unsafe/100x100/filters:watermark(cat.jpg,0,0,50)/cat.jpg", method: .get) {
                #expect($0.status == .ok)
            }
        }
    }

    @Test func aTransferCodingOtherThanChunkedIs501AndClosesTheConnection() async throws {
        try await live(try TestServer()) { port in
            try await BlockingIOPool.shared.run {
                // ("chunked, chunked" never reaches us: NIO's parser answers 400 and closes.)
                for coding in ["xchunked", "gzip", "gzip, chunked", "identity"] {
                    let socket = try RawSocket(port: port)
                    try socket.send("GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(coding)\r\n\r\n")
                    let answer = socket.readUntilClosed(within: .seconds(10))
                    #expect(answer.text.hasPrefix("HTTP/1.1 501"), "\(coding): \(answer.text)")
                    #expect(answer.closed, "\(coding): the connection closes after the answer")
                }
                // chunked itself is understood: an empty chunked body, then the answer, and the
                // connection stays open.
                let socket = try RawSocket(port: port)
                try socket.send("GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
                let answer = socket.read(until: "\r\n\r\nok\n", within: .seconds(10))
                #expect(answer.text.hasPrefix("HTTP/1.1 200") && answer.end == .marker, "\(answer.text)")
                // Still open: a second request on it is answered.
                try socket.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                let second = socket.read(until: "\r\n\r\nok\n", within: .seconds(10))
                #expect(second.end == .marker, "\(second.text)")
            }
        }
    }
}
