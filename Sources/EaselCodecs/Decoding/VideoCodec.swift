import CVideo
import EaselSupport
import Foundation

/// Which frame of a video the image is made from (imgproxy Pro's `video_thumbnail_second` and
/// `video_thumbnail_keyframes`).
public struct VideoPosition: Sendable, Hashable, CustomStringConvertible {
    /// The time of the frame, in seconds from the start; past the end of the video (or when the
    /// video is shorter than the default 1 s), the first frame.
    public var second: Double
    /// The key frame at or before `second` rather than the exact frame: faster (nothing after it
    /// is decoded), less precise.
    public var keyframeOnly: Bool

    /// The frame at `second` (default 1 s, as imgproxy's).
    public init(second: Double = 1, keyframeOnly: Bool = false) {
        self.second = second
        self.keyframeOnly = keyframeOnly
    }

    /// The default: the frame at 1 s.
    public static let `default` = VideoPosition()

    /// The most a position may name (a day).
    public static let maxSecond = 86_400.0

    /// Stable text for identifiers: `at1.5`, `at1.5kf`.
    public var description: String { "at\(second)" + (keyframeOnly ? "kf" : "") }
}

/// A video's facts, from its container and its video stream.
public struct VideoDetails: Sendable, Hashable {
    /// The file's length in seconds (nil when the container does not say).
    public var duration: Double?
    /// The video codec (`h264`, `hevc`, `vp8`, `vp9`, `av1`, `mpeg4`, `mjpeg`).
    public var codec: String
    /// The container: `mp4` (MP4, QuickTime, 3GP) or `matroska` (Matroska, WebM).
    public var container: String
    /// Streams of every kind in the file.
    public var streams: Int
    /// A pixel's width over its height, as the stream says (1: square). The image has square
    /// pixels: an anamorphic frame is stretched to its display width (for an aspect within
    /// 1/4…4; others are taken as square).
    public var pixelAspect: Double
    /// The frame's size as coded (the image's width differs for an anamorphic video).
    public var codedWidth: Int
    /// The frame's coded height (the image's).
    public var codedHeight: Int
    /// The frame the image is made from.
    public var position: VideoPosition
}

/// Video files through FFmpeg (`CVideo`): the image of a video is one of its frames, at
/// `VideoPosition.second` (1 s by default). The file is read from memory only — no protocol,
/// no nested resource — by MP4/QuickTime and Matroska/WebM demuxers alone, and only H.264,
/// HEVC, VP8, VP9, AV1, MPEG-4 part 2 and MJPEG are decoded. Its size is checked against the
/// limits before any frame is decoded, with its duration and stream count
/// (`DecodingLimits.maxVideoDuration`, `.maxVideoStreams`); decoding after the seek is bounded
/// in frames. The display matrix's rotation is the image's orientation.
enum VideoCodec {
    /// Frames decoded after a seek, at most, before the frame asked for must have come (past
    /// it, or past `decodePixelBudget`, the last frame decoded is the image: the nearest before
    /// the time asked for).
    static let maxFramesDecoded = 1000
    /// Pixels decoded for one frame, at most, over all the frames after the seek: 1000 frames
    /// of 1080p, 240 of 4K (a few seconds of one core).
    static let decodePixelBudget = 2_073_600_000

    static func limits(_ limits: DecodingLimits, framePixels: Int = 0) -> easel_video_limits {
        // `maxPixels` bounds the probed size and what every decoder may allocate, stream
        // analysis included; a frame of another size than the probe's is refused.
        let side = Int32(clamping: min(limits.maxSide, 16_384))
        // Asked before each packet: a decode nobody waits for any more (its deadline passed, its
        // last requester left) stops there.
        let frames = framePixels > 0 ? max(1, min(maxFramesDecoded, decodePixelBudget / framePixels)) : maxFramesDecoded
        return easel_video_limits(max_streams: Int32(clamping: limits.maxVideoStreams), max_width: side, max_height: side,
                                  max_duration: max(limits.maxVideoDuration, 1e-9),  // (the shim takes 0 for "no limit")
                                  max_frames_decoded: Int32(frames), max_pixels: Int64(clamping: limits.maxPixels),
                                  should_stop: { WorkCancellation.isCancelled ? 1 : 0 })
    }

    static func error(_ result: Int32, _ message: [CChar], format: ImageFileType) -> CodecError {
        let text = cMessage(message)
        switch result {
        case -1: return .invalidParameters("video refused by a limit: \(text)")
        case -2: return .unsupportedFormat("video: \(text)")
        case -3: return .cancelled
        default: return .corrupt(format: format, reason: text.isEmpty ? "unreadable video" : text)
        }
    }

    static func info(_ data: Data, fileType: ImageFileType, limits: DecodingLimits, position: VideoPosition) throws -> ImageInfo {
        guard !data.isEmpty else { throw CodecError.corrupt(format: fileType, reason: "empty data") }
        var message = [CChar](repeating: 0, count: Int(EASEL_VIDEO_MESSAGE_SIZE))
        var videoLimits = Self.limits(limits)
        var probed = easel_video_info()
        let result = data.withUnsafeBytes { raw in
            easel_video_probe(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, &videoLimits, &probed, &message)
        }
        guard result == 1 else { throw error(result, message, format: fileType) }
        let orientation: Int? = switch probed.rotation {
        case 90: 6
        case 180: 3
        case 270: 8
        default: nil
        }
        // Square pixels: an anamorphic frame is as wide as it is shown (its pixel aspect within
        // 1/4…4, as far as the shim stretches; else taken as square).
        let aspect = probed.pixel_aspect >= 0.25 && probed.pixel_aspect <= 4 ? probed.pixel_aspect : 1
        let displayWidth = abs(aspect - 1) < 0.001 ? Int(probed.width)
            : max(1, Int(checked: (Double(probed.width) * aspect).rounded()))
        var info = ImageInfo(fileType: fileType, width: displayWidth, height: Int(probed.height), hasAlpha: false, isGrayscale: false, isProgressive: false)
        info.containerOrientation = orientation
        let duration = probed.duration >= 0 ? probed.duration : nil
        // Past the end (or the default second of a shorter video): the first frame.
        var position = position
        if let duration, position.second >= duration { position.second = 0 }
        info.video = VideoDetails(duration: duration, codec: Self.text(probed.codec), container: fileType == .mp4 ? "mp4" : "matroska",
                                  streams: Int(probed.streams), pixelAspect: probed.pixel_aspect > 0 ? probed.pixel_aspect : 1,
                                  codedWidth: Int(probed.width),
                                  codedHeight: Int(probed.height), position: position)
        return info
    }

    /// The size (in the stream's orientation) a decode covering `minimumSize` (stored
    /// orientation) makes: the display size divided by the largest of 8, 4 and 2 that still
    /// covers it, as JPEG shrinks on load; the display size otherwise.
    static func decodedSize(of info: ImageInfo, covering minimumSize: (width: Int, height: Int)?) -> (width: Int, height: Int) {
        let denominator = JPEGCodec.scaleDenominator(width: info.width, height: info.height, covering: minimumSize)
        return ((info.width + denominator - 1) / denominator, (info.height + denominator - 1) / denominator)
    }

    /// The frame at the info's position, as RGBA8 in the stream's coded orientation, at its
    /// display width, scaled (with the colour conversion, in one swscale pass) to what covers
    /// `minimumSize` (stored orientation).
    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)? = nil,
                       limits: DecodingLimits) throws -> Bitmap {
        let position = info.video?.position ?? .default
        var message = [CChar](repeating: 0, count: Int(EASEL_VIDEO_MESSAGE_SIZE))
        let width = info.video?.codedWidth ?? info.width, height = info.video?.codedHeight ?? info.height
        var videoLimits = Self.limits(limits, framePixels: width * height)
        let size = decodedSize(of: info, covering: minimumSize)
        var bitmap = Bitmap(width: size.width, height: size.height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        var frameTime = 0.0
        let result = data.withUnsafeBytes { raw in
            bitmap.withUnsafeMutableBytes { pixels in
                easel_video_frame(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, &videoLimits, position.second,
                                  position.keyframeOnly ? 1 : 0, 1, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                  Int32(width), Int32(height), Int32(size.width), Int32(size.height), &frameTime, &message)
            }
        }
        guard result == 1 else { throw error(result, message, format: info.fileType) }
        bitmap.markOpaque()
        return bitmap
    }

    /// A fixed-size C string field as text.
    static func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
