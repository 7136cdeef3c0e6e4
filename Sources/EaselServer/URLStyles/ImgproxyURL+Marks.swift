import EaselPipeline
import EaselCodecs
import EaselSupport
import Foundation

/// One imgproxy option's arguments, read as imgproxy reads them: empty ones are absent, and
/// every error names the option.
struct OptionArguments {
    let name: Substring
    let args: [Substring]

    func arg(_ index: Int) -> Substring? { index < args.count && !args[index].isEmpty ? args[index] : nil }

    /// Argument `index` as a whole number in `range` (`RequestNumber`), nil when it is absent.
    func int(_ index: Int, _ what: String, in range: ClosedRange<Int> = 0...RequestNumber.largest) throws -> Int? {
        guard let text = arg(index) else { return nil }
        guard let value = RequestNumber.whole(text, in: range) else {
            throw RequestError.invalid("\(name): \(what) is a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// Argument `index` as a finite decimal in `range` (`RequestNumber`), nil when it is absent.
    func double(_ index: Int, _ what: String, in range: ClosedRange<Double> = RequestNumber.anyDecimal) throws -> Double? {
        guard let text = arg(index) else { return nil }
        guard let value = RequestNumber.decimal(text, in: range) else {
            throw RequestError.invalid("\(name): \(what) is a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    func bool(_ index: Int) throws -> Bool? {
        guard let text = arg(index) else { return nil }
        switch text.lowercased() {
        case "1", "t", "true": return true
        case "0", "f", "false": return false
        default: throw RequestError.invalid("\(name): \(text) is not a boolean")
        }
    }

    /// Argument `index` as base64url-encoded UTF-8 text, not empty; `refusal` is the 400's text
    /// otherwise.
    func base64URL(_ index: Int, _ refusal: String) throws -> String {
        guard let text = arg(index), let data = URLSigner.decodeBase64URL(String(text)), let decoded = String(data: data, encoding: .utf8),
              !decoded.isEmpty else {
            throw RequestError.invalid(refusal)
        }
        return decoded
    }

    /// No argument is accepted and ignored: past what an option reads is a 400.
    func atMost(_ count: Int) throws {
        guard args.count <= count else {
            throw RequestError.invalid("option \(name) takes at most \(count) argument\(count == 1 ? "" : "s")")
        }
    }
}

/// imgproxy's watermark options: `wm` and Pro's `wmu`, `wmt`, `wms`, `wmsh` and `wmr`, one mark
/// a pipeline.
extension ImgproxyURL {
    /// The options a chained pipeline may have: a mark's.
    static let markOptions: Set<String> = ["watermark", "wm", "watermark_url", "wmu", "watermark_text", "wmt", "watermark_size", "wms",
                                           "watermark_shadow", "wmsh", "watermark_rotate", "wm_rot", "wmr"]

    /// Changes the pipeline's one mark (imgproxy has one per pipeline: `wm` shows it, `wmu`,
    /// `wmt`, `wms` and `wmsh` shape it, in any order).
    static func updateImgproxyMark(_ options: inout ImagePlan,
                                   _ change: (inout ImagePlan.Mark) throws -> Void) throws {
        var mark = options.watermarks.first ?? ImagePlan.Mark()
        if !options.imgproxyMarkSet { mark.opacity = 0 }
        try change(&mark)
        options.watermarks = [mark]
    }

    /// One of `markOptions`, applied to the pipeline's mark.
    static func applyMark(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "watermark", "wm":
            // wm:opacity:position:x:y:scale; opacity 0 is imgproxy's "no watermark". The
            // mark's image (the configured one, `wmu`'s or `wmt`'s text) is set apart.
            try a.atMost(5)
            let opacity = try a.double(0, "opacity") ?? 0
            guard (0...1).contains(opacity) else { throw RequestError.invalid("watermark: opacity is 0–1") }
            var mark = options.watermarks.first ?? ImagePlan.Mark()
            mark.opacity = opacity
            mark.position = .center
            if let position = a.arg(1) {
                switch position {
                case "re": mark.position = .tiled
                default:
                    guard let gravity = ImagePlan.gravity(named: position), let place = Watermark.Position(gravity) else {
                        throw RequestError.invalid("watermark position \(position) is not ce, no, so, ea, we, noea, nowe, soea, sowe or re")
                    }
                    mark.position = place
                }
            }
            let dx = try a.double(2, "x offset") ?? 0, dy = try a.double(3, "y offset") ?? 0
            guard dx.magnitude <= 1_048_576, dy.magnitude <= 1_048_576 else { throw RequestError.invalid("watermark offsets are at most 1048576") }
            guard dx.rounded() == dx, dy.rounded() == dy else { throw RequestError.invalid("watermark offsets are whole pixels") }
            if mark.position == .tiled, dx < 0 || dy < 0 {
                throw RequestError.invalid("watermark re: the gaps between copies (x, y) are 0 or more")
            }
            mark.offsetX = Int(checked: dx)
            mark.offsetY = Int(checked: dy)
            // imgproxy: the mark fits inside scale × the image, on both axes.
            let scale = try a.double(4, "scale") ?? 0
            guard (0...1).contains(scale) else { throw RequestError.invalid("watermark: scale is 0–1") }
            mark.scale = scale
            mark.heightScale = scale
            options.watermarks = [mark]
            options.imgproxyMarkSet = true
        case "watermark_url", "wmu":
            // The mark's image from a URL (base64url), read like a source.
            try a.atMost(1)
            let url = try a.base64URL(0, "watermark_url is a base64url-encoded URL")
            try updateImgproxyMark(&options) { $0.image = .source(try source(url)) }
        case "watermark_text", "wmt":
            // Text (base64url), Pango markup allowed; black sans 16 px unless it says otherwise.
            try a.atMost(1)
            let text = a.arg(0) ?? ""
            guard let data = URLSigner.decodeBase64URL(String(text)), let markup = String(data: data, encoding: .utf8) else {
                throw RequestError.invalid("watermark_text is base64url-encoded UTF-8 text")
            }
            guard !markup.isEmpty, markup.utf8.count <= TextMark.maxTextBytes else {
                throw RequestError.invalid("watermark_text has 1–\(TextMark.maxTextBytes) bytes")
            }
            try updateImgproxyMark(&options) { $0.image = .text(TextMark(text: markup, markup: true)) }
        case "watermark_size", "wms":
            try a.atMost(2)
            let width = try a.int(0, "width") ?? 0, height = try a.int(1, "height") ?? 0
            guard width <= 8192, height <= 8192 else { throw RequestError.invalid("watermark_size is at most 8192 a side") }
            try updateImgproxyMark(&options) { $0.size = width == 0 && height == 0 ? nil : (width, height) }
        case "watermark_shadow", "wmsh":
            try a.atMost(1)
            let sigma = try a.double(0, "sigma") ?? 0
            guard (0...Watermark.maxShadowSigma).contains(sigma) else {
                throw RequestError.invalid("watermark_shadow: sigma is 0–\(Int(Watermark.maxShadowSigma))")
            }
            try updateImgproxyMark(&options) { $0.shadow = sigma }
        case "watermark_rotate", "wm_rot", "wmr":
            // Degrees clockwise, any whole number (turns past 360 wrap).
            try a.atMost(1)
            guard let text = a.arg(0), let degrees = RequestNumber.whole(text, in: RequestNumber.anyWhole), degrees.magnitude <= 36_000 else {
                throw RequestError.invalid("watermark_rotate: the angle is whole degrees, at most 36000 either way")
            }
            try updateImgproxyMark(&options) { $0.rotation = Double(degrees) }
        default:
            throw RequestError.invalid("\(a.name) is no watermark option")
        }
    }
}
