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

    /// `page` of an animation is that frame as a still, composed as the reader shows it; a page
    /// past the last frame is `noSuchPage`; a still has one page.
    @Test func aPageOfAnAnimationIsThatFrameAsAStill() throws {
        let gif = try Self.gif(frames: 6)
        var shown: [[[UInt8]]] = []
        try AnimationReader.frames(of: gif, info: try ImageDecoder.info(of: gif)) { shown.append(BMPAndICOTests.pixels($0.image)) }
        let webp = try AnimationWriter.webp(try (0..<6).map { i in
            AnimationFrame(image: try ImageDecoder.decode(gif, info: try ImageDecoder.info(of: gif, page: i)), duration: 50)
        }, lossless: true)
        for page in [1, 3, 5] {
            let info = try ImageDecoder.info(of: gif, page: page)
            #expect(info.page == page && info.frameCount == 6)
            let frame = try ImageDecoder.decode(gif, info: info)
            #expect(BMPAndICOTests.pixels(frame) == shown[page], "frame \(page)")
            // Its bar (blue at x = 10·page).
            #expect(frame.pixel(x: 10 * page + 5, y: 40)[2] > 200 && frame.pixel(x: 10 * page + 5, y: 40)[0] < 60)
            // The same of an animated WebP (lossless: the same pixels).
            let webpFrame = try ImageDecoder.decode(webp, info: try ImageDecoder.info(of: webp, page: page))
            #expect(BMPAndICOTests.pixels(webpFrame) == shown[page], "WebP frame \(page)")
        }
        #expect(throws: CodecError.noSuchPage(page: 6, pages: 6)) { try ImageDecoder.info(of: gif, page: 6) }
        let png = try ImageEncoder.encode(Bitmap(width: 4, height: 4, pixelFormat: .rgba8), as: .png())
        #expect(throws: CodecError.noSuchPage(page: 1, pages: 1)) { try ImageDecoder.info(of: png, page: 1) }
        #expect(throws: CodecError.self) { try ImageDecoder.info(of: png, page: -1) }
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

    /// Disposal as browsers do it: 2 clears the frame's rectangle to transparent before the next
    /// frame, 3 restores what was under it; transparent pixels leave the canvas as it was; a
    /// frame partly off the screen is clipped.
    @Test func disposalMethodsComposeTheCanvasAsBrowsersDo() throws {
        // Palette: 0 red, 1 blue, 2 green, 3 white (transparent in frames 2 and 3).
        let palette: [UInt8] = [255, 0, 0, 0, 0, 255, 0, 255, 0, 255, 255, 255]
        func square(_ index: UInt8, _ side: Int) -> [UInt8] { [UInt8](repeating: index, count: side * side) }
        let frames: [GIFCodec.TestFrame] = [
            // 1. The whole 30×20 screen red; then "restore to background": cleared.
            .init(width: 30, height: 20, indexes: [UInt8](repeating: 0, count: 600), disposal: 2),
            // 2. A blue 6×6 at (2, 2), its corner pixel transparent; then "restore previous".
            .init(left: 2, top: 2, width: 6, height: 6, indexes: [3] + square(1, 6).dropFirst(), disposal: 3, transparent: 3),
            // 3. A green 6×6 at (27, 16): clipped to 3×4 by the screen; kept.
            .init(left: 27, top: 16, width: 6, height: 6, indexes: square(2, 6), disposal: 1),
        ]
        let gif = try GIFCodec.encodeFrames(width: 30, height: 20, frames: frames, palette: palette)
        var canvases: [Bitmap] = []
        try AnimationReader.frames(of: gif, info: try ImageDecoder.info(of: gif)) { canvases.append($0.image) }
        #expect(canvases.count == 3)
        #expect(canvases[0].pixel(x: 15, y: 10) == [255, 0, 0, 255])
        // Frame 2 on a cleared canvas: blue square, its transparent corner and the rest clear.
        #expect(canvases[1].pixel(x: 4, y: 4) == [0, 0, 255, 255])
        #expect(canvases[1].pixel(x: 2, y: 2)[3] == 0 && canvases[1].pixel(x: 15, y: 10)[3] == 0)
        // Frame 3: the blue square restored away (to the cleared canvas), green clipped in the corner.
        #expect(canvases[2].pixel(x: 4, y: 4)[3] == 0)
        #expect(canvases[2].pixel(x: 28, y: 18) == [0, 255, 0, 255] && canvases[2].pixel(x: 26, y: 18)[3] == 0)
    }

    /// A small screen with huge frames: the frames' own areas count against the limit, before
    /// each is decoded.
    @Test func hugeFramesOnASmallScreenAreRefused() throws {
        let big = GIFCodec.TestFrame(width: 400, height: 400, indexes: [UInt8](repeating: 0, count: 160_000))
        let gif = try GIFCodec.encodeFrames(width: 2, height: 2, frames: Array(repeating: big, count: 4), palette: Self.palette)
        let info = try ImageDecoder.info(of: gif)
        #expect(info.frameCount == 4 && info.pixelCount == 4)
        var seen = 0
        #expect(throws: CodecError.tooManyAnimationPixels(limit: 300_000)) {
            try AnimationReader.frames(of: gif, info: info, limits: DecodingLimits(maxAnimationPixels: 300_000)) { _ in seen += 1 }
        }
        #expect(seen == 1)  // the second frame's area passed the limit before it was decoded
    }

    @Test func gifLoopCountsBecomePlays() throws {
        #expect(AnimationReader.plays(gifLoops: -1) == 1)  // no loop extension: once
        #expect(AnimationReader.plays(gifLoops: 0) == 0)   // forever
        #expect(AnimationReader.plays(gifLoops: 2) == 3)   // repeated twice: three plays
        #expect(AnimationReader.plays(gifLoops: 65_535) == 65_535)  // WebP's 16-bit field
    }
}
