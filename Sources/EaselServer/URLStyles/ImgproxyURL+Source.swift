import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// imgproxy's options on the source rather than the answer: the URL's own limits on it, and
/// which of its pages, frames or bytes are read.
extension ImgproxyURL {
    /// The URL's own limits on its source, tighter than the server's, never looser:
    /// `max_src_resolution`, `max_src_file_size`, `max_animation_frames` and
    /// `max_animation_frame_resolution`.
    static func applySourceLimits(_ a: OptionArguments, to options: inout ImagePlan) throws {
        try a.atMost(1)
        let unlimited = DecodingLimits(maxPixels: .max, maxInputBytes: .max, maxFrames: .max, maxAnimationPixels: .max)
        var limits = options.sourceLimits ?? unlimited
        switch a.name {
        case "max_src_resolution", "msr":
            guard let megapixels = try a.double(0, "megapixels"), megapixels > 0, megapixels <= 1_000_000 else {
                throw RequestError.invalid("max_src_resolution is megapixels above 0")
            }
            limits.maxPixels = Int(checked: (megapixels * 1_000_000).rounded())
        case "max_src_file_size", "msfs":
            guard let bytes = try a.int(0, "bytes"), bytes > 0 else { throw RequestError.invalid("max_src_file_size is bytes above 0") }
            limits.maxInputBytes = bytes
        case "max_animation_frames", "maf":
            guard let frames = try a.int(0, "frames"), frames > 0 else { throw RequestError.invalid("max_animation_frames is above 0") }
            limits.maxFrames = frames
        case "max_animation_frame_resolution", "mafr":
            guard let megapixels = try a.double(0, "megapixels"), megapixels >= 0, megapixels <= 1_000_000 else {
                throw RequestError.invalid("max_animation_frame_resolution is megapixels, 0 or more")
            }
            // 0: imgproxy's "no limit of its own" (max_src_resolution still holds), also over
            // a preset's.
            limits.maxAnimationFramePixels = megapixels > 0 ? Int(checked: (megapixels * 1_000_000).rounded()) : .max
            options.sourceLimits = limits == unlimited ? nil : limits
            return
        default:
            throw RequestError.invalid("\(a.name) is no source limit")
        }
        options.sourceLimits = limits
    }

    /// What is read of the source and whether it is processed: `page`, `video_thumbnail_second`,
    /// `video_thumbnail_keyframes`, `enforce_thumbnail`, `skip_processing` and `raw`.
    static func applySource(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "page", "pg":
            try a.atMost(1)
            options.page = try RequestError.planning { try ImagePlan.page(a.args[0]) }
        case "video_thumbnail_second", "vts":
            // imgproxy Pro's: the frame of a video source at this second.
            try a.atMost(1)
            guard let second = try a.double(0, "second"), (0...VideoPosition.maxSecond).contains(second) else {
                throw RequestError.invalid("video_thumbnail_second is 0–\(Int(VideoPosition.maxSecond)) seconds")
            }
            options.video.second = second
        case "video_thumbnail_keyframes", "vtk":
            try a.atMost(1)
            options.video.keyframeOnly = try a.bool(0) ?? false
        case "enforce_thumbnail", "eth":
            try a.atMost(1)
            options.embeddedThumbnail = try a.bool(0) ?? false
        case "skip_processing", "skp":
            // Source types answered unprocessed when the answer is in their type.
            for text in a.args where !text.isEmpty {
                guard let type = sourceType(text) else { throw RequestError.invalid("invalid image format in skip_processing: \(text)") }
                options.skipProcessing.insert(type)
            }
        case "raw":
            try a.atMost(1)
            options.raw = try a.bool(0) ?? false
        default:
            throw RequestError.invalid("\(a.name) is no source option")
        }
    }
}
