import CGIF
import CWebP
import Foundation

/// One frame of an animation: the whole canvas as shown, and for how long.
public struct AnimationFrame: Sendable {
    public var image: Bitmap
    /// Milliseconds.
    public var duration: Int

    public init(image: Bitmap, duration: Int) {
        self.image = image
        self.duration = duration
    }
}

/// Reads every frame of an animated GIF or WebP, one at a time, each composed on the canvas
/// (GIF disposal methods and WebP blending applied, as browsers show them). Memory stays one
/// canvas whatever the frame count; the caller processes each frame as it comes (a thumbnail
/// keeps only small frames).
public enum AnimationReader {
    /// Browsers show GIF frames with a delay under 20 ms for 100 ms; so do the frames read here.
    public static let shortestGIFDelay = 20
    public static let defaultGIFDelay = 100

    /// Calls `body` with each frame in order. Returns the loop count (0: forever).
    /// - Throws: `CodecError.tooManyFrames` (before anything is decoded when the container
    ///   says how many: WebP; GIF as soon as the count passes the limit),
    ///   `.tooManyAnimationPixels` when frames × canvas pixels would pass
    ///   `limits.maxAnimationPixels`, `.corrupt`.
    @discardableResult
    public static func frames(of data: Data, info: ImageInfo, limits: DecodingLimits = .default,
                              _ body: (AnimationFrame) throws -> Void) throws -> Int {
        guard info.pixelCount <= limits.maxPixels else {
            throw CodecError.tooManyPixels(width: info.width, height: info.height, limit: limits.maxPixels)
        }
        guard info.frameCount <= limits.maxFrames else { throw CodecError.tooManyFrames(limit: limits.maxFrames) }
        func checkPixels(_ frames: Int) throws {
            if frames * info.pixelCount > limits.maxAnimationPixels {
                throw CodecError.tooManyAnimationPixels(limit: limits.maxAnimationPixels)
            }
        }
        try checkPixels(info.frameCount)
        switch info.fileType {
        case .gif: return try gifFrames(data, info: info, limits: limits, checkPixels: checkPixels, body)
        case .webp: return try webpFrames(data, info: info, limits: limits, checkPixels: checkPixels, body)
        default:
            try body(AnimationFrame(image: try ImageDecoder.decode(data, info: info, limits: limits), duration: 0))
            return 0
        }
    }

    private static func gifFrames(_ data: Data, info: ImageInfo, limits: DecodingLimits, checkPixels: (Int) throws -> Void,
                                  _ body: (AnimationFrame) throws -> Void) throws -> Int {
        var message = [CChar](repeating: 0, count: Int(EASEL_GIF_MESSAGE_SIZE))
        return try data.withUnsafeBytes { raw -> Int in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self),
                  let reader = easel_gif_reader_open(base, raw.count, Int32(info.width), Int32(info.height), &message) else {
                throw CodecError.corrupt(format: .gif, reason: cMessage(message))
            }
            defer { easel_gif_reader_close(reader) }
            var canvas = Bitmap(width: info.width, height: info.height, pixelFormat: .rgba8)  // zeroed: transparent
            let rowBytes = canvas.rowBytes
            var count = 0, loops: Int32 = -1
            while true {
                var delay: Int32 = 0
                let result = canvas.withUnsafeMutableBytes { pixels in
                    easel_gif_reader_next(reader, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                          limits.maxPixels, &delay, &loops, &message)
                }
                if result == 2 { break }
                guard result == 1 else {
                    // A damaged frame after good ones ends the animation there, as browsers do.
                    if count > 0 { break }
                    throw CodecError.corrupt(format: .gif, reason: cMessage(message))
                }
                count += 1
                guard count <= limits.maxFrames else { throw CodecError.tooManyFrames(limit: limits.maxFrames) }
                try checkPixels(count)
                let duration = Int(delay) < shortestGIFDelay ? defaultGIFDelay : Int(delay)
                try body(AnimationFrame(image: canvas, duration: duration))  // copy-on-write: the next frame copies
            }
            return loops < 0 ? 1 : Int(loops)
        }
    }

    private static func webpFrames(_ data: Data, info: ImageInfo, limits: DecodingLimits, checkPixels: (Int) throws -> Void,
                                   _ body: (AnimationFrame) throws -> Void) throws -> Int {
        var message = [CChar](repeating: 0, count: Int(EASEL_WEBP_MESSAGE_SIZE))
        return try data.withUnsafeBytes { raw -> Int in
            var width: Int32 = 0, height: Int32 = 0, frames: Int32 = 0, loops: Int32 = 0
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self),
                  let decoder = easel_webp_anim_decoder_new(base, raw.count, &width, &height, &frames, &loops, &message) else {
                throw CodecError.corrupt(format: .webp, reason: cMessage(message))
            }
            defer { easel_webp_anim_decoder_free(decoder) }
            guard Int(width) == info.width, Int(height) == info.height else {
                throw CodecError.corrupt(format: .webp, reason: "animation canvas differs from its header")
            }
            // The container says how many frames: both limits are checked before any is decoded.
            guard Int(frames) <= limits.maxFrames else { throw CodecError.tooManyFrames(limit: limits.maxFrames) }
            try checkPixels(Int(frames))
            var canvas = Bitmap(width: info.width, height: info.height, pixelFormat: .rgba8)
            let rowBytes = canvas.rowBytes
            var previous: Int32 = 0
            while true {
                var timestamp: Int32 = 0
                let result = canvas.withUnsafeMutableBytes { pixels in
                    easel_webp_anim_decoder_next(decoder, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes, &timestamp)
                }
                if result == 2 { break }
                guard result == 1 else { throw CodecError.corrupt(format: .webp, reason: "undecodable animation frame") }
                try body(AnimationFrame(image: canvas, duration: Int(timestamp - previous)))
                previous = timestamp
            }
            return Int(loops)
        }
    }
}

/// Writes animations.
public enum AnimationWriter {
    /// An animated WebP of `frames` (all of one size), lossy at `quality` or lossless; loops
    /// `loopCount` times (0: forever).
    public static func webp(_ frames: [AnimationFrame], loopCount: Int = 0, quality: Int = 80, lossless: Bool = false) throws -> Data {
        guard let first = frames.first else { throw CodecError.invalidParameters("an animation needs at least one frame") }
        var message = [CChar](repeating: 0, count: Int(EASEL_WEBP_MESSAGE_SIZE))
        guard let encoder = easel_webp_anim_encoder_new(Int32(first.image.width), Int32(first.image.height), Int32(loopCount), &message) else {
            throw CodecError.encodingFailed(format: .webp, reason: cMessage(message))
        }
        var time = 0
        for frame in frames {
            guard frame.image.width == first.image.width, frame.image.height == first.image.height else {
                easel_webp_anim_encoder_free(encoder)
                throw CodecError.invalidParameters("animation frames differ in size")
            }
            let rgba = frame.image.converted(to: .rgba8)
            let ok = rgba.withUnsafeBytes { pixels in
                easel_webp_anim_encoder_add(encoder, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rgba.rowBytes, Int32(time),
                                            Int32(quality), lossless ? 1 : 0, &message)
            }
            guard ok != 0 else {
                easel_webp_anim_encoder_free(encoder)
                throw CodecError.encodingFailed(format: .webp, reason: cMessage(message))
            }
            time += max(frame.duration, 1)
        }
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard easel_webp_anim_encoder_finish(encoder, Int32(time), &output, &size, &message) != 0, let output else {
            throw CodecError.encodingFailed(format: .webp, reason: cMessage(message))
        }
        defer { WebPFree(output) }
        return Data(bytes: output, count: size)
    }
}
