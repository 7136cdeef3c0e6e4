@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// GIF out: animations and stills with a median-cut palette a frame, read back by Easel and by
/// Pillow with their frames, delays and transparency.
@Suite("GIF out", .timeLimit(.minutes(2)))
struct GIFOutTests {
    /// Frame `i` of 3: a bar of red, green or blue moving right on white, the top-left 4×4 clear.
    static func frame(_ i: Int) -> Bitmap {
        painted(width: 40, height: 20) { x, y in
            if x < 4 && y < 4 { return [0, 0, 0, 0] }
            let bar = x >= i * 10 && x < i * 10 + 10
            return bar ? [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]][i] : [255, 255, 255, 255]
        }
    }

    @Test func anAnimationKeepsItsFramesDelaysAndTransparency() throws {
        let encoder = AnimatedGIFEncoder()
        for i in 0..<3 { try encoder.add(AnimationFrame(image: Self.frame(i), duration: [100, 250, 40][i])) }
        let data = try encoder.finish()
        let info = try ImageDecoder.info(of: data)
        #expect(info.fileType == .gif && info.frameCount == 3 && info.isAnimated && info.width == 40 && info.height == 20)
        var frames: [AnimationFrame] = []
        _ = try AnimationReader.frames(of: data, info: info) { frames.append($0) }
        #expect(frames.map(\.duration) == [100, 250, 40])
        // Few colours: every pixel exactly (the clear corner clear, in every frame).
        for i in 0..<3 { #expect(BMPAndICOTests.pixels(frames[i].image) == BMPAndICOTests.pixels(Self.frame(i)), "frame \(i)") }
        // Pillow reads the same frames and delays.
        let directory = try TemporaryDirectory()
        try data.write(to: directory.child("anim.gif"))
        let program = """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1])
            frames = []
            for i in range(im.n_frames):
                im.seek(i)
                frames.append(im.info.get("duration"))
            assert im.n_frames == 3, im.n_frames
            assert frames == [100, 250, 40], frames
            im.seek(1)
            rgba = im.convert("RGBA")
            assert rgba.getpixel((15, 10)) == (0, 255, 0, 255), rgba.getpixel((15, 10))
            assert rgba.getpixel((1, 1))[3] == 0, rgba.getpixel((1, 1))
            """
        #expect(try runTool(BMPAndICOTests.python, ["-c", program, directory.child("anim.gif").path]), "Pillow read the animation")
    }

    @Test func aTransparentPixelNeverShowsTheFrameBeforeAndLoopsRoundTrip() throws {
        // An opaque red frame, then one clear on its left half: the left half is clear, not red.
        let red = paintedOpaque(width: 8, height: 4) { _, _ in [255, 0, 0] }
        let half = painted(width: 8, height: 4) { x, _ in x < 4 ? [0, 0, 0, 0] : [0, 0, 255, 255] }
        for plays in [0, 1, 3] {
            let encoder = AnimatedGIFEncoder()
            try encoder.add(AnimationFrame(image: red, duration: 50, loopCount: plays))
            try encoder.add(AnimationFrame(image: half, duration: 50, loopCount: plays))
            let data = try encoder.finish()
            var frames: [AnimationFrame] = []
            let loops = try AnimationReader.frames(of: data, info: try ImageDecoder.info(of: data)) { frames.append($0) }
            #expect(BMPAndICOTests.pixels(frames[1].image)[0] == [0, 0, 0, 0], "plays \(plays)")
            #expect(BMPAndICOTests.pixels(frames[1].image)[7] == [0, 0, 255, 255])
            // Plays as written: forever, once, three times.
            #expect(loops == plays && frames[0].loopCount == plays, "plays \(plays): read \(loops)")
        }
    }

    /// A frame of no more colours than a palette holds keeps each exactly: 250 shades of a
    /// gradient (5-bit cells merged them into 32 bands), and 255 with transparent pixels; one
    /// colour more is quantized (and so no longer exact).
    @Test func aFrameOfFewColoursKeepsEveryShade() throws {
        let shades = painted(width: 250, height: 8) { x, _ in [UInt8(x), UInt8(x / 2), 255, 255] }
        let back = try ImageDecoder.decode(try ImageEncoder.encode(shades, as: .gif))
        #expect(BMPAndICOTests.pixels(back) == BMPAndICOTests.pixels(shades))
        let clear = painted(width: 256, height: 2) { x, _ in x == 255 ? [0, 0, 0, 0] : [UInt8(x), 9, 0, 255] }
        #expect(BMPAndICOTests.pixels(try ImageDecoder.decode(try ImageEncoder.encode(clear, as: .gif))) == BMPAndICOTests.pixels(clear))
        let full = Quantizer.quantize(painted(width: 256, height: 1) { x, _ in [UInt8(x), 0, 0, 255] })
        #expect(full.palette.count == 256 * 3 && full.transparent == nil && full.indexes == (0..<256).map { UInt8($0) })
        let over = Quantizer.quantize(painted(width: 257, height: 1) { x, _ in [UInt8(x % 256), x == 256 ? 7 : 0, 0, 255] })
        #expect(over.palette.count <= 256 * 3 && Set(over.indexes).count < 257)
    }

    @Test func aPhotoIsQuantizedCloselyAndAStillIsOneFrame() throws {
        let photo = try ImageDecoder.decode(try Data(contentsOf: sampleURL("chelsea-cat.jpg")), covering: (160, 160))
        let gif = try ImageEncoder.encode(photo, as: .gif)
        let info = try ImageDecoder.info(of: gif)
        #expect(info.fileType == .gif && info.frameCount == 1 && !info.isAnimated)
        let back = try ImageDecoder.decode(gif)
        #expect(back.width == photo.width && back.height == photo.height)
        // 256 colours by median cut: within a few levels on average over a photo.
        var total = 0
        back.withUnsafeBytes { a in
            photo.withUnsafeBytes { b in
                for y in 0..<photo.height { for x in 0..<(photo.width * 4) { total += abs(Int(a[y * back.rowBytes + x]) - Int(b[y * photo.rowBytes + x])) } }
            }
        }
        let mean = Double(total) / Double(photo.width * photo.height * 4)
        #expect(mean < 4, "mean error \(mean)")
        // A still takes one frame only.
        let still = AnimatedGIFEncoder(animated: false)
        try still.add(AnimationFrame(image: photo, duration: 0))
        #expect(throws: CodecError.self) { try still.add(AnimationFrame(image: photo, duration: 0)) }
    }
}
