@testable import EaselCodecs
import Foundation
import Testing

/// Animated GIF and WebP: every frame kept through a resize, with its delay; bombs refused.
@Suite struct AnimationTests {
    static let palette: [UInt8] = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]

    /// `count` frames of 120×80: frame i paints a bar at x = 10·i in blue on white, with
    /// delays of 50, 60, 70… ms.
    static func gif(frames count: Int, width: Int = 120, height: Int = 80) throws -> Data {
        let frames = (0..<count).map { i in
            (0..<(width * height)).map { p -> UInt8 in
                let x = p % width
                return x >= 10 * i && x < 10 * i + 10 ? 2 : 3
            }
        }
        return try GIFCodec.encodeAnimation(width: width, height: height, frames: frames, palette: palette,
                                            delays: (0..<count).map { 5 + $0 })
    }

    @Test func aTenFrameGIFBecomesATenFrameWebPWithItsDelays() throws {
        let gif = try Self.gif(frames: 10)
        let info = try ImageDecoder.info(of: gif)
        #expect(info.isAnimated && info.frameCount == 10)
        var frames: [AnimationFrame] = []
        let loops = try AnimationReader.frames(of: gif, info: info) { frame in
            frames.append(AnimationFrame(image: try Resize(width: 60, height: 60, mode: .fit).process(frame.image), duration: frame.duration))
        }
        #expect(loops == 0)  // NETSCAPE2.0 with 0: forever
        #expect(frames.count == 10 && frames.map(\.duration) == (0..<10).map { 50 + 10 * $0 })
        #expect(frames.allSatisfy { $0.image.width == 60 && $0.image.height == 40 })
        let webp = try AnimationWriter.webp(frames, loopCount: loops, quality: 90)
        let webpInfo = try ImageDecoder.info(of: webp)
        #expect(webpInfo.fileType == .webp && webpInfo.isAnimated && webpInfo.frameCount == 10)
        #expect(webpInfo.width == 60 && webpInfo.height == 40)
        var read: [AnimationFrame] = []
        try AnimationReader.frames(of: webp, info: webpInfo) { read.append($0) }
        #expect(read.map(\.duration) == frames.map(\.duration))
        // Frame i has its blue bar at x = 5·i (half size): blue there, white beside it.
        for (i, frame) in read.enumerated() {
            let bar = frame.image.pixel(x: 5 * i + 2, y: 20), beside = frame.image.pixel(x: (5 * i + 30) % 60, y: 20)
            #expect(bar[2] > 200 && bar[0] < 60, "frame \(i) bar \(bar)")
            #expect(beside[0] > 200 && beside[1] > 200, "frame \(i) beside \(beside)")
        }
        // The still decoder keeps showing the first frame.
        #expect(try ImageDecoder.decode(gif).pixel(x: 2, y: 2)[2] > 200)
    }

    @Test func shortGIFDelaysPlayAsBrowsersPlayThem() throws {
        let gif = try GIFCodec.encodeAnimation(width: 4, height: 4, frames: [[UInt8](repeating: 0, count: 16), [UInt8](repeating: 1, count: 16)],
                                               palette: Self.palette, delays: [0, 1])
        var durations: [Int] = []
        try AnimationReader.frames(of: gif, info: try ImageDecoder.info(of: gif)) { durations.append($0.duration) }
        #expect(durations == [100, 100])
    }

    @Test func frameAndPixelBombsAreRefused() throws {
        let gif = try Self.gif(frames: 6, width: 80, height: 40)  // six different frames (equal ones would be merged in WebP)
        let info = try ImageDecoder.info(of: gif, limits: DecodingLimits(maxFrames: 3))
        #expect(info.frameCount == 4)  // counted up to one past the limit, nothing decoded
        var seen = 0
        #expect(throws: CodecError.tooManyFrames(limit: 3)) {
            try AnimationReader.frames(of: gif, info: info, limits: DecodingLimits(maxFrames: 3)) { _ in seen += 1 }
        }
        #expect(seen == 0)  // refused before the first frame
        // Frames × canvas over the limit: 6 × 3,200 pixels against 5,000.
        #expect(throws: CodecError.tooManyAnimationPixels(limit: 5000)) {
            try AnimationReader.frames(of: gif, info: try ImageDecoder.info(of: gif), limits: DecodingLimits(maxAnimationPixels: 5000)) { _ in }
        }
        // An animated WebP says its frame count: refused before any frame is decoded.
        var frames: [AnimationFrame] = []
        try AnimationReader.frames(of: gif, info: try ImageDecoder.info(of: gif)) { frames.append($0) }
        let webp = try AnimationWriter.webp(frames)
        let webpInfo = try ImageDecoder.info(of: webp)
        #expect(webpInfo.frameCount == 6)
        seen = 0
        #expect(throws: CodecError.tooManyFrames(limit: 5)) {
            try AnimationReader.frames(of: webp, info: webpInfo, limits: DecodingLimits(maxFrames: 5)) { _ in seen += 1 }
        }
        #expect(seen == 0)
        // A truncated animation: the frames before the damage are kept.
        let truncated = gif.prefix(gif.count * 2 / 3)
        var kept = 0
        try AnimationReader.frames(of: Data(truncated), info: try ImageDecoder.info(of: Data(truncated))) { _ in kept += 1 }
        #expect(kept >= 1 && kept < 6)
    }
}
