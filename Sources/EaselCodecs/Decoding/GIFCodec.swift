import CGIF
import Foundation

/// GIF through giflib: the first frame, composed onto the logical screen, as RGBA.
package enum GIFCodec {
    /// The frame count is read by skipping each frame's compressed data (no decoding), up to
    /// one past `limits.maxFrames`.
    static func info(_ data: Data, limits: DecodingLimits = .default) throws -> ImageInfo {
        var width: Int32 = 0, height: Int32 = 0
        try call(data) { easel_gif_read_header($0, $1, &width, &height, $2) }
        var interlaced: Int32 = 0, firstPixels = 0
        let frames = data.withUnsafeBytes { raw in
            easel_gif_count_frames(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count,
                                   Int32(clamping: limits.maxFrames == .max ? .max : limits.maxFrames + 1), &interlaced, &firstPixels, nil)
        }
        var info = ImageInfo(fileType: .gif, width: Int(width), height: Int(height), hasAlpha: true, isGrayscale: false, isProgressive: false, isAnimated: frames > 1)
        info.frameCount = max(1, Int(frames))
        // Shrunk on load: a row of palette indexes (an interlaced frame's indexes whole, a byte a
        // pixel) and a row of sums (16 bytes an output pixel: 8 a source column at most).
        let rows = Int.checkedProduct(Int(width), 17) ?? .max
        info.shrunkDecodeWorkingBytes = interlaced != 0 ? firstPixels.addingReportingOverflow(rows).partialValue : rows
        return info
    }

    /// Whether the first frame decodes shrunk on load (`decode(_:info:covering:pixelFormat:limits:)`):
    /// every GIF's can; a later page is composed from the frames before it at full size.
    static func scales(_ info: ImageInfo) -> Bool { info.fileType == .gif && info.page == 0 }

    /// The first frame on its canvas; with `minimumSize`, shrunk on load by the largest of 1/2,
    /// 1/4 and 1/8 that still covers it (`easel_gif_decode_first_frame_shrunk`: the canvas's
    /// blocks' means, the full-size canvas never made).
    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)? = nil,
                       pixelFormat: Bitmap.PixelFormat, limits: DecodingLimits) throws -> Bitmap {
        let factor = scales(info) ? JPEGCodec.scaleDenominator(width: info.width, height: info.height, covering: minimumSize) : 1
        var bitmap = Bitmap(width: (info.width + factor - 1) / factor, height: (info.height + factor - 1) / factor, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        try bitmap.withUnsafeMutableBytes { pixels in
            let target = pixels.baseAddress!.assumingMemoryBound(to: UInt8.self)
            try call(data) { bytes, count, message in
                factor > 1
                    ? easel_gif_decode_first_frame_shrunk(bytes, count, target, rowBytes, Int32(info.width), Int32(info.height),
                                                          Int32(factor), limits.maxPixels, message)
                    : easel_gif_decode_first_frame(bytes, count, target, rowBytes, Int32(info.width), Int32(info.height),
                                                   limits.maxPixels, message)
            }
        }
        return bitmap.converted(to: pixelFormat)
    }

    private static func call(_ data: Data, _ body: (UnsafePointer<UInt8>, Int, UnsafeMutablePointer<CChar>) -> Int32) throws {
        _ = try callShim(data, format: .gif, messageSize: EASEL_GIF_MESSAGE_SIZE, body)
    }
}

extension GIFCodec {
    /// An animated GIF of `frames` (palette indexes, row by row) over one global palette of RGB
    /// triples, each shown `delays[i]` centiseconds, looping forever. For tests and tools.
    package static func encodeAnimation(width: Int, height: Int, frames: [[UInt8]], palette: [UInt8], delays: [Int]) throws -> Data {
        let indexes = frames.flatMap { $0 }
        let cDelays = delays.map { Int32($0) }
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_GIF_MESSAGE_SIZE))
        guard indexes.count == width * height * frames.count, delays.count == frames.count,
              easel_gif_encode_indexed(indexes, Int32(width), Int32(height), Int32(frames.count), palette, Int32(palette.count / 3),
                                       cDelays, &output, &size, &message) != 0, let output else {
            throw CodecError.encodingFailed(format: .gif, reason: cMessage(message))
        }
        defer { free(output) }
        return Data(bytes: output, count: size)
    }
}

extension GIFCodec {
    /// One frame of a test GIF: its rectangle on the screen, palette indexes row by row, its
    /// disposal method (0-3) and transparent index.
    package struct TestFrame {
        package var left: Int, top: Int, width: Int, height: Int
        package var indexes: [UInt8]
        package var disposal: Int
        package var transparent: Int?
        package var delay: Int  // centiseconds

        package init(left: Int = 0, top: Int = 0, width: Int, height: Int, indexes: [UInt8], disposal: Int = 0,
                     transparent: Int? = nil, delay: Int = 10) {
            (self.left, self.top, self.width, self.height) = (left, top, width, height)
            self.indexes = indexes
            self.disposal = disposal
            self.transparent = transparent
            self.delay = delay
        }
    }

    /// A GIF of frames at their own rectangles, with disposal methods and transparency.
    package static func encodeFrames(width: Int, height: Int, frames: [TestFrame], palette: [UInt8]) throws -> Data {
        var offsets: [Int] = []
        var indexes: [UInt8] = []
        for frame in frames {
            offsets.append(indexes.count)
            indexes += frame.indexes
        }
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: Int(EASEL_GIF_MESSAGE_SIZE))
        func ints(_ key: (TestFrame) -> Int) -> [Int32] { frames.map { Int32(key($0)) } }
        guard easel_gif_encode_frames(Int32(width), Int32(height), Int32(frames.count), indexes, offsets, ints(\.left), ints(\.top),
                                      ints(\.width), ints(\.height), ints(\.disposal), ints { $0.transparent ?? -1 },
                                      palette, Int32(palette.count / 3), ints(\.delay), &output, &size, &message) != 0,
              let output else {
            throw CodecError.encodingFailed(format: .gif, reason: cMessage(message))
        }
        defer { free(output) }
        return Data(bytes: output, count: size)
    }
}
