import EaselSupport
import CGIF
import CWebP
import Foundation

/// One frame of an animation: the whole canvas as shown, and for how long.
public struct AnimationFrame: Sendable {
    /// The whole canvas (the animation's full size) as shown once this frame is composed on it.
    public var image: Bitmap
    /// Milliseconds.
    public var duration: Int
    /// How many times the animation plays (0: forever), as far as the reader knows it when it
    /// hands this frame over (a GIF says it before its first frame).
    public var loopCount: Int

    /// A frame showing `image` for `duration` milliseconds, in an animation that plays `loopCount`
    /// times (0, the default: forever).
    public init(image: Bitmap, duration: Int, loopCount: Int = 0) {
        self.image = image
        self.duration = duration
        self.loopCount = loopCount
    }
}

/// Reads every frame of an animated GIF or WebP, one at a time, each composed on the canvas
/// (GIF disposal methods and WebP blending applied, as browsers show them). Memory stays one
/// canvas whatever the frame count; the caller processes each frame as it comes (a thumbnail
/// keeps only small frames).
public enum AnimationReader {
    /// Browsers show GIF frames with a delay under 20 ms for 100 ms; so do the frames read here.
    public static let shortestGIFDelay = 20
    /// The delay in milliseconds given to GIF frames whose own delay is under `shortestGIFDelay`:
    /// 100, as browsers show them.
    public static let defaultGIFDelay = 100

    /// Calls `body` with each frame in order (colour converted from an embedded profile as
    /// `color` says, like still images). Returns the loop count (0: forever; GIF's count of
    /// repeats is turned into plays, as browsers play it).
    /// - Throws: `CodecError.tooManyFrames` (before anything is decoded when the container
    ///   says how many: WebP; GIF as soon as the count passes the limit),
    ///   `.tooManyAnimationPixels` when frames × canvas pixels — or, for GIF, the frames' own
    ///   areas — would pass `limits.maxAnimationPixels`, `.tooManyPixels` when the canvas passes
    ///   `limits.maxAnimationFramePixels`, `.corrupt`.
    @discardableResult
    public static func frames(of data: Data, info: ImageInfo, limits: DecodingLimits = .default,
                              color: ColorHandling = .convertToSRGB, _ body: (AnimationFrame) throws -> Void) throws -> Int {
        try limits.check(width: info.width, height: info.height)
        guard info.frameCount <= limits.maxFrames else { throw CodecError.tooManyFrames(limit: limits.maxFrames) }
        guard info.pixelCount <= limits.maxAnimationFramePixels else {
            throw CodecError.tooManyPixels(width: info.width, height: info.height, limit: limits.maxAnimationFramePixels)
        }
        func checkPixels(_ frames: Int) throws {
            if (Int.checkedProduct(frames, info.pixelCount) ?? .max) > limits.maxAnimationPixels {
                throw CodecError.tooManyAnimationPixels(limit: limits.maxAnimationPixels)
            }
        }
        try checkPixels(info.frameCount)
        switch info.fileType {
        case .gif: return try gifFrames(data, info: info, limits: limits, checkPixels: checkPixels, body)
        case .webp:
            let profile = color == .convertToSRGB ? info.colorProfile.profile : nil
            return try webpFrames(data, info: info, limits: limits, checkPixels: checkPixels) { frame in
                guard let profile else { return try body(frame) }
                var converted = frame
                ColorConverter.convertToSRGB(&converted.image, from: profile)
                try body(converted)
            }
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
                if WorkCancellation.isCancelled { throw CodecError.cancelled }
                var delay: Int32 = 0
                let result = canvas.withUnsafeMutableBytes { pixels in
                    easel_gif_reader_next(reader, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                          limits.maxPixels, limits.maxAnimationPixels, &delay, &loops, &message)
                }
                if result == 2 { break }
                // The frames' own areas add up past the limit (small canvas, huge frames).
                if result == -1 { throw CodecError.tooManyAnimationPixels(limit: limits.maxAnimationPixels) }
                guard result == 1 else {
                    // A damaged frame after good ones ends the animation there, as browsers do.
                    if count > 0 { break }
                    throw CodecError.corrupt(format: .gif, reason: cMessage(message))
                }
                count += 1
                guard count <= limits.maxFrames else { throw CodecError.tooManyFrames(limit: limits.maxFrames) }
                try checkPixels(count)
                let duration = Int(delay) < shortestGIFDelay ? defaultGIFDelay : Int(delay)
                // copy-on-write: the next frame copies
                try body(AnimationFrame(image: canvas, duration: duration, loopCount: plays(gifLoops: Int(loops))))
            }
            return plays(gifLoops: Int(loops))
        }
    }

    /// A GIF's NETSCAPE loop count is how many times it repeats after the first play (0:
    /// forever; none: play once); WebP's is how many times it plays.
    /// (At most 65,535: WebP's field has 16 bits.)
    static func plays(gifLoops: Int) -> Int { gifLoops < 0 ? 1 : gifLoops == 0 ? 0 : min(gifLoops + 1, 65_535) }

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
                if WorkCancellation.isCancelled { throw CodecError.cancelled }
                var timestamp: Int32 = 0
                let result = canvas.withUnsafeMutableBytes { pixels in
                    easel_webp_anim_decoder_next(decoder, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes, &timestamp)
                }
                if result == 2 { break }
                guard result == 1 else { throw CodecError.corrupt(format: .webp, reason: "undecodable animation frame") }
                // Wrapping: libwebp sums durations (each < 2²⁴ ms) in a C int, which an animation
                // longer than 24 days overflows; the difference modulo 2³² is still the duration.
                try body(AnimationFrame(image: canvas, duration: Int(timestamp &- previous), loopCount: Int(loops)))
                previous = timestamp
            }
            return Int(loops)
        }
    }
}

/// Writes an animation one frame at a time (frames need not be kept until the end).
public protocol AnimationEncoder: AnyObject {
    /// Adds a frame; every frame must have the first one's size. The first frame's
    /// `loopCount` is the animation's.
    func add(_ frame: AnimationFrame) throws
    /// The file (the encoder is done with).
    func finish() throws -> Data
}

/// Writes an animated WebP one frame at a time (frames need not be kept until the end).
public final class AnimatedWebPEncoder: AnimationEncoder {
    private var encoder: UnsafeMutableRawPointer?
    private var size: (width: Int, height: Int)?
    private var time = 0
    private let quality: Int
    private let lossless: Bool

    /// Lossy at `quality` (0–100), or lossless.
    public init(quality: Int = 80, lossless: Bool = false) {
        self.quality = quality
        self.lossless = lossless
    }

    deinit { easel_webp_anim_encoder_free(encoder) }

    /// Adds a frame; every frame must have the first one's size. The first frame's
    /// `loopCount` is the animation's.
    public func add(_ frame: AnimationFrame) throws {
        var message = [CChar](repeating: 0, count: Int(EASEL_WEBP_MESSAGE_SIZE))
        if encoder == nil {
            guard let created = easel_webp_anim_encoder_new(Int32(frame.image.width), Int32(frame.image.height),
                                                            Int32(frame.loopCount), &message) else {
                throw CodecError.encodingFailed(format: .webp, reason: cMessage(message))
            }
            encoder = created
            size = (frame.image.width, frame.image.height)
        }
        guard let size, frame.image.width == size.width, frame.image.height == size.height else {
            throw CodecError.invalidParameters("animation frames differ in size")
        }
        guard let timestamp = Int32(exactly: time) else {
            throw CodecError.encodingFailed(format: .webp, reason: "an animation longer than \(Int32.max) ms")
        }
        let rgba = frame.image.converted(to: .rgba8)
        let ok = rgba.withUnsafeBytes { pixels in
            easel_webp_anim_encoder_add(encoder, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rgba.rowBytes, timestamp,
                                        Int32(quality), lossless ? 1 : 0, &message)
        }
        guard ok != 0 else { throw CodecError.encodingFailed(format: .webp, reason: cMessage(message)) }
        time += max(frame.duration, 1)
    }

    /// The animation (the encoder is done with).
    public func finish() throws -> Data {
        guard let encoder else { throw CodecError.invalidParameters("an animation needs at least one frame") }
        self.encoder = nil
        var message = [CChar](repeating: 0, count: Int(EASEL_WEBP_MESSAGE_SIZE))
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard let end = Int32(exactly: time) else {
            throw CodecError.encodingFailed(format: .webp, reason: "an animation longer than \(Int32.max) ms")
        }
        guard easel_webp_anim_encoder_finish(encoder, end, &output, &size, &message) != 0, let output else {
            throw CodecError.encodingFailed(format: .webp, reason: cMessage(message))
        }
        defer { WebPFree(output) }
        return Data(bytes: output, count: size)
    }
}

/// Writes animations.
public enum AnimationWriter {
    /// An animated WebP of `frames` (all of one size), lossy at `quality` or lossless; loops
    /// `loopCount` times (0: forever).
    public static func webp(_ frames: [AnimationFrame], loopCount: Int = 0, quality: Int = 80, lossless: Bool = false) throws -> Data {
        let encoder = AnimatedWebPEncoder(quality: quality, lossless: lossless)
        for var frame in frames {
            frame.loopCount = loopCount
            try encoder.add(frame)
        }
        return try encoder.finish()
    }
}
