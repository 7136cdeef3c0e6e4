import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// imgproxy's output options: the answer's format, quality and size in bytes, and what
/// metadata it carries.
extension ImgproxyURL {
    /// The answer's encoding: `quality`, `format`, `format_quality`, `autoquality` and
    /// `max_bytes`.
    static func applyOutput(_ a: OptionArguments, to options: inout ImagePlan, context: OptionContext) throws {
        switch a.name {
        case "quality", "q":
            try a.atMost(1)
            guard let quality = try a.int(0, "quality"), quality <= 100 else { throw RequestError.invalid("quality is 0–100") }
            options.quality = quality == 0 ? nil : quality
        case "format", "f", "ext":
            try a.atMost(1)
            if a.args[0] == "best" {
                // imgproxy Pro's best format: the smallest of the formats the client takes.
                options.bestFormat = true
                options.format = nil
            } else {
                options.format = try outputFormat(a.args[0])
                options.bestFormat = false
            }
        case "format_quality", "fq":
            // fq:format:quality[:format:quality…]: each on its codec's own scale; 0 drops it.
            guard a.args.count % 2 == 0 else { throw RequestError.invalid("format_quality takes format:quality pairs") }
            for index in stride(from: 0, to: a.args.count, by: 2) {
                let format = try outputFormat(a.args[index])
                guard let quality = RequestNumber.whole(a.args[index + 1], in: RequestNumber.anyWhole), (0...100).contains(quality) else {
                    throw RequestError.invalid("format_quality: quality is 0–100")
                }
                options.formatQuality[format] = quality == 0 ? nil : quality
            }
        case "autoquality", "aq":
            try applyAutoQuality(a, to: &options, defaults: context.autoQuality)
        case "max_bytes", "mb":
            try a.atMost(1)
            let bytes = try a.int(0, "bytes") ?? 0
            options.maxBytes = bytes > 0 ? bytes : nil
        default:
            throw RequestError.invalid("\(a.name) is no output option")
        }
    }

    /// `aq:method:target:min_quality:max_quality:allowed_error` (imgproxy Pro's): `dssim` (this
    /// server's perceptual distance, with its own scale) or `none`; `defaults` stand for the
    /// arguments not given.
    private static func applyAutoQuality(_ a: OptionArguments, to options: inout ImagePlan, defaults: AutoQuality) throws {
        try a.atMost(5)
        switch a.args[0] {
        case "none": options.autoQuality = nil
        case "dssim":
            var settings = defaults
            if let target = try a.double(1, "target") {
                guard target > 0, target <= 1 else { throw RequestError.invalid("autoquality: the target is above 0, at most 1") }
                settings.target = target
            }
            let low = try a.int(2, "min_quality") ?? settings.minQuality, high = try a.int(3, "max_quality") ?? settings.maxQuality
            guard (1...100).contains(low), (low...100).contains(high) else {
                throw RequestError.invalid("autoquality: 1 ≤ min_quality ≤ max_quality ≤ 100")
            }
            // allowed_error is the `size` method's (not offered): read and checked only.
            if let allowed = try a.double(4, "allowed_error"), !(0...1).contains(allowed) { throw RequestError.invalid("autoquality: allowed_error is 0–1") }
            options.autoQuality = AutoQuality(target: settings.target, minQuality: low, maxQuality: high)
        default:
            throw RequestError.invalid("autoquality method \(a.args[0]) is not supported (dssim, none)")
        }
    }

    /// What the answer carries besides pixels: `strip_metadata`, `strip_color_profile`,
    /// `keep_copyright` and `preserve_hdr`.
    static func applyMetadata(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "strip_metadata", "sm":
            try a.atMost(1)
            // Every answer is stripped of metadata; asking to keep it is not supported.
            if try a.bool(0) == false { throw RequestError.invalid("strip_metadata:0 is not supported: answers never carry metadata") }
        case "strip_color_profile", "scp":
            try a.atMost(1)
            // Colour is converted to sRGB and no profile is embedded, whichever is asked.
            _ = try a.bool(0)
        case "keep_copyright", "kcr":
            try a.atMost(1)
            options.keepCopyright = try a.bool(0) ?? false
        case "preserve_hdr", "ph":
            // Accepted: answers are 8 bits a channel in sRGB (an HDR source is tone-mapped
            // by its decoder), so there is no HDR to keep.
            try a.atMost(1)
            _ = try a.bool(0)
        default:
            throw RequestError.invalid("\(a.name) is no metadata option")
        }
    }
}
