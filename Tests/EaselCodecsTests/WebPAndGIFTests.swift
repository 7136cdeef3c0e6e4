import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import Testing

/// GIF files written by hand: LZW with 9-bit codes and a clear code every 250 pixels, so the
/// code width never changes (valid, if not compact).
enum TestGIF {
    static func make(width: Int, height: Int, palette: [[UInt8]], transparentIndex: Int? = nil, indices: (Int, Int) -> Int) -> Data {
        var gif = Data("GIF89a".utf8)
        gif.append(contentsOf: le16(width) + le16(height) + [0xF7, 0, 0]) // global table of 256 colours
        for i in 0..<256 { gif.append(contentsOf: i < palette.count ? palette[i] : [0, 0, 0]) }
        if let transparentIndex { gif.append(contentsOf: [0x21, 0xF9, 4, 1, 0, 0, UInt8(transparentIndex), 0]) }
        gif.append(contentsOf: [0x2C] + le16(0) + le16(0) + le16(width) + le16(height) + [0])
        gif.append(8) // minimum code size
        var bits = 0, bitCount = 0, stream: [UInt8] = []
        func emit(_ code: Int) {
            bits |= code << bitCount
            bitCount += 9
            while bitCount >= 8 { stream.append(UInt8(bits & 0xFF)); bits >>= 8; bitCount -= 8 }
        }
        var sinceClear = 0
        emit(256)
        for y in 0..<height { for x in 0..<width {
            if sinceClear == 250 { emit(256); sinceClear = 0 }
            emit(indices(x, y)); sinceClear += 1
        } }
        emit(257)
        if bitCount > 0 { stream.append(UInt8(bits & 0xFF)) }
        var offset = 0
        while offset < stream.count {
            let count = min(255, stream.count - offset)
            gif.append(UInt8(count))
            gif.append(contentsOf: stream[offset..<(offset + count)])
            offset += count
        }
        gif.append(contentsOf: [0, 0x3B])
        return gif
    }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
}

/// An animated WebP with one frame, placed at an offset on a larger canvas, made around a
/// lossless still encoded by libwebp.
enum TestAnimatedWebP {
    static func make(canvas: (Int, Int), frame: Bitmap, at offset: (Int, Int)) throws -> Data {
        let still = try ImageEncoder.encode(frame, as: .webp(lossless: true))
        let vp8l = Array(still[12...]) // the VP8L chunk: fourcc, size, payload (and padding)
        func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le24(v) + [UInt8(v >> 24 & 0xFF)] }
        func chunk(_ fourcc: String, _ body: [UInt8]) -> [UInt8] {
            Array(fourcc.utf8) + le32(body.count) + body + (body.count % 2 == 1 ? [0] : [])
        }
        let vp8x = chunk("VP8X", [0x12, 0, 0, 0] + le24(canvas.0 - 1) + le24(canvas.1 - 1)) // animation + alpha
        let anim = chunk("ANIM", [0, 0, 0, 0, 0, 0])
        let anmf = chunk("ANMF", le24(offset.0 / 2) + le24(offset.1 / 2) + le24(frame.width - 1) + le24(frame.height - 1)
            + le24(100) + [0] + vp8l)
        let body = Array("WEBP".utf8) + vp8x + anim + anmf
        return Data(Array("RIFF".utf8) + le32(body.count) + body)
    }
}

@Suite("WebP and GIF")
struct WebPAndGIFTests {
    @Test func losslessWebPRoundTripsExactlyWithAlpha() throws {
        let original = gradient(width: 33, height: 17) { x, _ in UInt8(255 - x * 7) }
        let data = try ImageEncoder.encode(original, as: .webp(lossless: true))
        let info = try ImageDecoder.info(of: data)
        #expect(info.fileType == .webp && info.width == 33 && info.height == 17 && info.hasAlpha && !info.isAnimated)
        #expect(try ImageDecoder.decode(data).hasSamePixels(as: original))
    }

    @Test func lossyWebPRoundTripsClosely() throws {
        let original = gradient(width: 64, height: 48)
        let data = try ImageEncoder.encode(original, as: .webp(quality: 95))
        #expect(maxDifference(try ImageDecoder.decode(data), original) <= 16)
        let gray = try ImageDecoder.decode(data, pixelFormat: .gray8)
        #expect(gray.pixelFormat == .gray8 && gray.width == 64)
    }

    @Test func theFirstFrameOfAnAnimatedWebPIsPlacedOnItsCanvas() throws {
        let red = painted(width: 10, height: 10) { _, _ in [255, 0, 0, 255] }
        let animated = try TestAnimatedWebP.make(canvas: (20, 20), frame: red, at: (4, 6))
        let info = try ImageDecoder.info(of: animated)
        #expect(info.isAnimated && info.width == 20 && info.height == 20)
        let bitmap = try ImageDecoder.decode(animated)
        #expect(bitmap.pixel(x: 4, y: 6) == [255, 0, 0, 255] && bitmap.pixel(x: 13, y: 15) == [255, 0, 0, 255])
        #expect(bitmap.pixel(x: 0, y: 0)[3] == 0 && bitmap.pixel(x: 14, y: 16)[3] == 0)
    }

    @Test func gifFirstFrameDecodesWithItsTransparency() throws {
        let gif = TestGIF.make(width: 30, height: 20, palette: [[0, 0, 0], [255, 0, 0], [0, 0, 255]], transparentIndex: 0) { x, y in
            x < 10 ? 0 : (y < 10 ? 1 : 2)
        }
        let info = try ImageDecoder.info(of: gif)
        #expect(info.fileType == .gif && info.width == 30 && info.height == 20)
        let bitmap = try ImageDecoder.decode(gif)
        #expect(bitmap.pixel(x: 2, y: 2)[3] == 0)
        #expect(bitmap.pixel(x: 15, y: 5) == [255, 0, 0, 255])
        #expect(bitmap.pixel(x: 29, y: 19) == [0, 0, 255, 255])
    }

    @Test func truncatedOrDamagedWebPAndGIFAreCorrupt() throws {
        let webp = try ImageEncoder.encode(gradient(width: 64, height: 64), as: .webp(quality: 80))
        let gif = TestGIF.make(width: 64, height: 64, palette: [[1, 2, 3], [200, 100, 50]]) { x, y in (x + y) % 2 }
        for (file, name) in [(webp, "WebP"), (gif, "GIF")] {
            for length in [12, 30, file.count / 2, file.count - 8] {
                #expect(throws: CodecError.self, "length \(length) of \(file.count)") { try ImageDecoder.decode(Data(file.prefix(length))) }
            }
            // Four bytes flipped, 100 seeded ways (a failure names its seed): never a crash; an
            // error is a `CodecError`; an image is the size its header says and decodes the same
            // twice (nothing is read from memory the decoder did not write), a GIF's pixels each
            // opaque or transparent; and some of the damage is found and refused.
            var refused = 0
            for seed in UInt64(0)..<100 {
                do {
                    let image = try decodedConsistently(flippingBytes(of: file, seed: seed, from: 12), "\(name) seed \(seed)")
                    if name == "GIF" {
                        var alphas = Set<UInt8>()
                        for y in 0..<image.height { for x in 0..<image.width { alphas.insert(image.pixel(x: x, y: y)[3]) } }
                        #expect(alphas.isSubset(of: [0, 255]), "\(name) seed \(seed): alphas \(alphas.sorted())")
                    }
                } catch {
                    #expect(error is CodecError, "\(name) seed \(seed): \(error)")
                    refused += 1
                }
            }
            #expect(refused > 0, "no damaged \(name) of 100 was refused")
        }
    }

    @Test func hugeDeclaredWebPAndGIFAreRefusedBeforeAllocating() throws {
        var gif = TestGIF.make(width: 2, height: 2, palette: [[0, 0, 0]]) { _, _ in 0 }
        gif.replaceSubrange(6..<10, with: [0xFF, 0xFF, 0xFF, 0xFF]) // 65535 × 65535 screen
        #expect(throws: CodecError.tooManyPixels(width: 65_535, height: 65_535, limit: 50_000_000)) { try ImageDecoder.decode(gif) }
        let red = painted(width: 10, height: 10) { _, _ in [255, 0, 0, 255] }
        let animated = try TestAnimatedWebP.make(canvas: (16_000, 16_000), frame: red, at: (0, 0))
        #expect(throws: CodecError.tooManyPixels(width: 16_000, height: 16_000, limit: 50_000_000)) { try ImageDecoder.decode(animated) }
    }
}

@Suite("Decoding with a given info")
struct DecodeWithInfoTests {
    @Test func aJPEGDecodedWithAnotherFilesInfoIsRefusedNotOverflowed() throws {
        let small = try ImageEncoder.encode(gradient(width: 16, height: 16), as: .jpeg(quality: 80))
        let large = try ImageEncoder.encode(gradient(width: 64, height: 64), as: .jpeg(quality: 80))
        let smallInfo = try ImageDecoder.info(of: small)
        #expect(throws: CodecError.self) { try ImageDecoder.decode(large, info: smallInfo) }
    }

    @Test func emptyDataWithWebPInfoIsAnErrorNotACrash() throws {
        let webp = try ImageEncoder.encode(gradient(width: 8, height: 8), as: .webp(quality: 80))
        let info = try ImageDecoder.info(of: webp)
        #expect(throws: CodecError.self) { try ImageDecoder.decode(Data(), info: info) }
    }

    @Test func aGIFFrameFarLargerThanItsCanvasIsRefused() throws {
        var gif = TestGIF.make(width: 4, height: 4, palette: [[1, 2, 3]]) { _, _ in 0 }
        // The image descriptor follows the 13-byte header and the 768-byte colour table.
        let descriptor = 13 + 768
        #expect(gif[descriptor] == 0x2C)
        gif.replaceSubrange((descriptor + 5)..<(descriptor + 9), with: [0xFF, 0xFF, 0xFF, 0xFF]) // frame 65535 × 65535
        #expect(throws: CodecError.self) { try ImageDecoder.decode(gif) }
    }
}
