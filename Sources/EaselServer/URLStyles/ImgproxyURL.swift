import EaselSupport
import Crypto
import EaselCodecs
import EaselPipeline
import Foundation
import Hummingbird

/// imgproxy-compatible URLs (under `/imgproxy/`):
/// `/{signature}/{option}/{option}…/plain/{source}[@{extension}]` and
/// `/{signature}/{option}…/{base64url source, may be split by /}[.{extension}]`.
///
/// The signature is base64url(HMAC-SHA256(key, salt ‖ path)) over the path after the signature,
/// as imgproxy computes it, with key/salt pairs as imgproxy reads them (`IMGPROXY_KEY` and
/// `IMGPROXY_SALT`, or the lists `IMGPROXY_KEYS`/`IMGPROXY_SALTS`, hex). Options are imgproxy's
/// names and short forms; one this server does not implement is a 400 that names it.
struct ImgproxyURL {
    var options: ImagePlan
    var source: ImageServer.Source
    /// The signature segment as written (`insecure`, or anything when unsigned URLs are served).
    var signature: Substring
    /// What the signature covers: `/` and everything after the signature segment.
    var signedPath: Substring

    /// The signature segment and what it covers (`/` and the rest), or nil without them.
    static func signatureAndPath(_ path: Substring) -> (Substring, Substring)? {
        let rest = path.drop { $0 == "/" }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return (rest[..<slash], rest[slash...])
    }

    /// imgproxy's default quality (`IMGPROXY_QUALITY`).
    static let defaultQuality = 80

    /// - Parameter path: the request path after the `/imgproxy` prefix (starting with `/`).
    /// - Parameter presets: option lists by name (`pr:name`); `default` applies to every URL.
    /// - Parameter separator: between an option's name and arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`).
    static func parse(_ path: Substring, presets: [String: [Substring]], separator: Character = ":") throws -> ImgproxyURL {
        try parse(path, settings: Settings(presets: presets, separator: separator))
    }

    /// - Parameter path: the request path after the `/imgproxy` prefix (starting with `/`).
    /// - Parameter hints: the client's Client Hints, when the server reads them: the width and
    ///   DPR of a URL that names none (imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS`).
    static func parse(_ path: Substring, settings: Settings, hints: ClientHints? = nil) throws -> ImgproxyURL {
        let separator = settings.separator, presets = settings.presets
        var rest = path.drop { $0 == "/" }
        guard let slash = rest.firstIndex(of: "/") else { throw RequestError.noSuchImage }
        let signature = rest[..<slash]
        let signedPath = rest[slash...]
        rest = rest[rest.index(after: slash)...]
        var segments = rest.split(separator: "/", omittingEmptySubsequences: false)
        var options = ImagePlan()
        // imgproxy enlarges in no resizing type unless asked (`enlarge`), and names every answer.
        options.enlarge = false
        options.contentDisposition = true
        // Turns and flips first: imgproxy's crops and gravities act on the turned image.
        options.turnsFirst = true
        options.skipProcessing = settings.skipProcessing
        options.keepCopyright = settings.keepCopyright
        if settings.autoQualityByDefault { options.autoQuality = settings.autoQuality }
        // Client Hints first (when the server reads them), then the `default` preset, then the
        // URL's own options: each later one wins, as in imgproxy.
        if let hints {
            if let dpr = hints.dpr { options.dpr = dpr }
            if let width = hints.width { options.width = max(1, Int(checked: (Double(width) / (hints.dpr ?? 1)).rounded())) }
        }
        let hinted = (dpr: options.dpr, width: options.width)
        var context = OptionContext(presets: presets, separator: separator, allowed: settings.allowedOptions, autoQuality: settings.autoQuality)
        if presets["default"] != nil {
            var everything = context
            everything.allowed = []
            try apply(["pr" + String(separator) + "default"], to: &options, context: everything)
        }
        if settings.onlyPresets {
            // `/{preset}:{preset}…/{source}`: the first segment names presets only.
            guard let first = segments.first, first != "plain", segments.count > 1 else { throw RequestError.notFound("no source in the URL") }
            segments.removeFirst()
            context.allowed = []
            try apply(["pr" + String(separator) + first], to: &options, context: context)
        } else {
            // imgproxy Pro's chained pipelines (`…/-/…`): each later one is run on the first's
            // result. Those that only draw marks (Pro's way to several watermarks) are taken,
            // their marks after the first's; any other option in one is refused.
            var pipelines: [[Substring]] = [[]]
            while let first = segments.first, first != "plain", first.contains(separator) || first == "-" {
                if first == "-" { pipelines.append([]) } else { pipelines[pipelines.count - 1].append(first) }
                segments.removeFirst()
            }
            try apply(pipelines[0], to: &options, context: context)
            for later in pipelines.dropFirst() where !later.isEmpty {
                for segment in later {
                    let name = segment.prefix { $0 != separator }
                    guard Self.markOptions.contains(String(name)) else {
                        throw RequestError.invalid("a chained pipeline may only draw watermarks (\(Self.markOptions.sorted().joined(separator: ", "))), not \(name)")
                    }
                }
                var chained = ImagePlan()
                try apply(later, to: &chained, context: context)
                options.watermarks += chained.watermarks.filter { $0.opacity > 0 }
            }
        }
        if let hints { clamp(&options, hints: hints, hinted: hinted, settings: settings) }
        guard !segments.isEmpty, !(segments.count == 1 && segments[0].isEmpty) else { throw RequestError.notFound("no source in the URL") }
        var sourceText: String
        var fileExtension: Substring?
        if segments.first == "plain" {
            var plain = segments.dropFirst().joined(separator: "/")[...]
            if let at = plain.lastIndex(of: "@") {
                fileExtension = plain[plain.index(after: at)...]
                plain = plain[..<at]
            }
            // A plain source may come path-escaped (`local:%2F%2F%2Fa.jpg`, `http%3A%2F%2F…`, as
            // Go's PathEscape writes it): unescaped once, as imgproxy does.
            sourceText = plain.contains("%") ? (String(plain).removingPercentEncoding ?? String(plain)) : String(plain)
        } else {
            if settings.base64IncludesFilename, segments.count > 1 { segments.removeLast() }
            var encoded = segments.joined()[...]
            if let dot = encoded.lastIndex(of: ".") {
                fileExtension = encoded[encoded.index(after: dot)...]
                encoded = encoded[..<dot]
            }
            guard let data = URLSigner.decodeBase64URL(String(encoded)), let text = String(data: data, encoding: .utf8) else {
                throw RequestError.invalid("the source is not base64url")
            }
            sourceText = text
        }
        guard !sourceText.isEmpty else { throw RequestError.notFound("no source in the URL") }
        for replacement in settings.replacements { sourceText = replacement.apply(to: sourceText) }
        if !settings.baseURL.isEmpty, !sourceText.hasPrefix(settings.baseURL) { sourceText = settings.baseURL + sourceText }
        // (A raw answer is the source's bytes: an extension names no format for it.)
        if let fileExtension, !fileExtension.isEmpty, !options.raw {
            if fileExtension == "best" {
                options.bestFormat = true
                options.format = nil
            } else {
                options.format = try outputFormat(fileExtension)
                options.bestFormat = false
            }
        }
        // A mark shaped but not shown (no `wm`, or `wm:0`) is no mark.
        options.watermarks.removeAll { $0.opacity == 0 }
        // The server's result limit stands unless the URL's is lower.
        if settings.maxResultDimension > 0 { options.maxResultSide = min(options.maxResultSide ?? .max, settings.maxResultDimension) }
        return ImgproxyURL(options: options, source: try source(sourceText), signature: signature, signedPath: signedPath)
    }

    /// What the options of one URL are read with.
    struct OptionContext {
        var presets: [String: [Substring]]
        var separator: Character = ":"
        /// When not empty, the only option names allowed (a preset's own options are not checked).
        var allowed: Set<String> = []
        /// The presets being applied, outermost first: one that names itself again, directly or
        /// not, is skipped (imgproxy's loop rule).
        var presetPath: [Substring] = []
        /// Autoquality's settings where an `autoquality` option gives none.
        var autoQuality = AutoQuality()
    }

    static func apply(_ segments: [Substring], to options: inout ImagePlan, presets: [String: [Substring]], depth: Int = 0,
                      separator: Character = ":") throws {
        try apply(segments, to: &options, context: OptionContext(presets: presets, separator: separator))
    }

    static func apply(_ segments: [Substring], to options: inout ImagePlan, context: OptionContext) throws {
        let separator = context.separator
        for segment in segments where !segment.isEmpty {
            let parts = segment.split(separator: separator, omittingEmptySubsequences: false)
            let name = parts[0], args = Array(parts.dropFirst())
            if !context.allowed.isEmpty, !context.allowed.contains(String(name)) {
                throw RequestError.refused("forbidden processing option \(name)")
            }
            let arguments = OptionArguments(name: name, args: args)
            func arg(_ index: Int) -> Substring? { arguments.arg(index) }
            func int(_ index: Int, _ what: String) throws -> Int? { try arguments.int(index, what) }
            func double(_ index: Int, _ what: String) throws -> Double? { try arguments.double(index, what) }
            func bool(_ index: Int) throws -> Bool? { try arguments.bool(index) }
            func resizingType(_ text: Substring) throws -> ResizeMode {
                switch text {
                case "fit": return .fit
                case "fill": return .fill
                case "fill-down": return .fillDown
                case "force": return .exact
                case "auto": return .auto
                default: throw RequestError.invalid("resizing type \(text) is not fit, fill, fill-down, force or auto")
                }
            }
            guard !args.isEmpty else { throw RequestError.invalid("option \(name) needs arguments") }
            /// No argument is accepted and ignored: past what an option reads is a 400.
            func atMost(_ count: Int) throws { try arguments.atMost(count) }
            /// Offsets after an empty gravity would be read by nothing.
            func gravityGiven(at index: Int) throws -> Substring? {
                if let gravity = arg(index) { return gravity }
                guard args.dropFirst(index + 1).allSatisfy(\.isEmpty) else {
                    throw RequestError.invalid("option \(name): offsets without a gravity")
                }
                return nil
            }
            switch name {
            case "resize", "rs":
                // rs:type:width:height:enlarge:extend[:gravity[:x:y]]
                try atMost(8)
                if let type = arg(0) { options.mode = try resizingType(type) }
                if let width = try int(1, "width") { options.width = width }
                if let height = try int(2, "height") { options.height = height }
                if let enlarge = try bool(3) { options.enlarge = enlarge }
                if let extend = try bool(4) { options.extend = extend }
                if let gravity = try gravityGiven(at: 5) { options.extendGravity = try extendGravity(gravity, Array(args.dropFirst(6)), option: name) }
            case "size", "s":
                try atMost(7)
                if let width = try int(0, "width") { options.width = width }
                if let height = try int(1, "height") { options.height = height }
                if let enlarge = try bool(2) { options.enlarge = enlarge }
                if let extend = try bool(3) { options.extend = extend }
                if let gravity = try gravityGiven(at: 4) { options.extendGravity = try extendGravity(gravity, Array(args.dropFirst(5)), option: name) }
            case "resizing_type", "rt":
                try atMost(1)
                options.mode = try resizingType(args[0])
            case "width", "w":
                try atMost(1)
                options.width = try int(0, "width") ?? 0
            case "height", "h":
                try atMost(1)
                options.height = try int(0, "height") ?? 0
            case "dpr":
                try atMost(1)
                guard let dpr = try double(0, "dpr"), dpr > 0 else { throw RequestError.invalid("dpr is above 0") }
                options.dpr = dpr
            case "enlarge", "el":
                try atMost(1)
                options.enlarge = try bool(0) ?? false
            case "extend", "ex":
                options.extend = try bool(0) ?? false
                try atMost(4)
                if let gravity = try gravityGiven(at: 1) { options.extendGravity = try extendGravity(gravity, Array(args.dropFirst(2)), option: name) }
            case "extend_aspect_ratio", "extend_ar", "exar":
                options.aspectExtend = try bool(0) ?? false
                try atMost(4)
                if let gravity = try gravityGiven(at: 1) {
                    options.aspectExtendGravity = try extendGravity(gravity, Array(args.dropFirst(2)), option: name)
                }
            case "flip", "fl":
                try atMost(2)
                options.flipHorizontal = try bool(0) ?? false
                options.flipVertical = try bool(1) ?? false
            case "max_result_dimension", "mrd":
                // Only ever tightens (`parse` keeps the server's when it is lower); 0: the
                // server's. Its own limits still refuse larger requests.
                try atMost(1)
                let side = try int(0, "size") ?? 0
                options.maxResultSide = side == 0 ? nil : side
            case "fallback_image_url", "fiu", "cache_tags", "ct":
                try applyDelivery(arguments, to: &options)
            case "gravity", "g":
                try atMost(3)
                options.gravity = try gravity(args[0], Array(args.dropFirst()), option: name)
            case "quality", "q":
                try atMost(1)
                guard let quality = try int(0, "quality"), quality <= 100 else { throw RequestError.invalid("quality is 0–100") }
                options.quality = quality == 0 ? nil : quality
            case "format", "f", "ext":
                try atMost(1)
                if args[0] == "best" {
                    // imgproxy Pro's best format: the smallest of the formats the client takes.
                    options.bestFormat = true
                    options.format = nil
                } else {
                    options.format = try outputFormat(args[0])
                    options.bestFormat = false
                }
            case "autoquality", "aq":
                // aq:method:target:min_quality:max_quality:allowed_error (imgproxy Pro's): `dssim`
                // (this server's perceptual distance, with its own scale) or `none`.
                try atMost(5)
                switch args[0] {
                case "none": options.autoQuality = nil
                case "dssim":
                    var settings = context.autoQuality
                    if let target = try double(1, "target") {
                        guard target > 0, target <= 1 else { throw RequestError.invalid("autoquality: the target is above 0, at most 1") }
                        settings.target = target
                    }
                    let low = try int(2, "min_quality") ?? settings.minQuality, high = try int(3, "max_quality") ?? settings.maxQuality
                    guard (1...100).contains(low), (low...100).contains(high) else {
                        throw RequestError.invalid("autoquality: 1 ≤ min_quality ≤ max_quality ≤ 100")
                    }
                    // allowed_error is the `size` method's (not offered): read and checked only.
                    if let allowed = try double(4, "allowed_error"), !(0...1).contains(allowed) { throw RequestError.invalid("autoquality: allowed_error is 0–1") }
                    options.autoQuality = AutoQuality(target: settings.target, minQuality: low, maxQuality: high)
                default:
                    throw RequestError.invalid("autoquality method \(args[0]) is not supported (dssim, none)")
                }
            case "crop", "c":
                let width = try double(0, "width") ?? 0, height = try double(1, "height") ?? 0
                guard width >= 0, height >= 0 else { throw RequestError.invalid("crop sizes are ≥ 0") }
                try atMost(5)
                options.cropGravity = try gravityGiven(at: 2).map { try gravity($0, Array(args.dropFirst(3)), option: "crop") }
                options.crop = .size(width: width, height: height, gravity: .center)
            case "blur", "bl":
                // 0 is imgproxy's "no blur"; a negative sigma is a 400, as in imgproxy.
                try atMost(1)
                let sigma = try double(0, "sigma") ?? 0
                guard sigma >= 0 else { throw RequestError.invalid("blur: sigma is 0 or more") }
                options.blur = sigma > 0 ? sigma : nil
            case "sharpen", "sh":
                try atMost(1)
                let sigma = try double(0, "sigma") ?? 0
                guard sigma >= 0 else { throw RequestError.invalid("sharpen: sigma is 0 or more") }
                options.sharpen = sigma > 0 ? sigma : nil
            case "watermark", "wm", "watermark_url", "wmu", "watermark_text", "wmt", "watermark_size", "wms", "watermark_shadow", "wmsh",
                 "watermark_rotate", "wm_rot", "wmr":
                try applyMark(arguments, to: &options)
            case "strip_metadata", "sm":
                try atMost(1)
                // Every answer is stripped of metadata; asking to keep it is not supported.
                if try bool(0) == false { throw RequestError.invalid("strip_metadata:0 is not supported: answers never carry metadata") }
            case "strip_color_profile", "scp":
                try atMost(1)
                // Colour is converted to sRGB and no profile is embedded, whichever is asked.
                _ = try bool(0)
            case "trim", "t":
                // trim:threshold[:colour[:equal_hor[:equal_ver]]]: the border within threshold
                // levels on every channel of the colour (else of the top-left pixel).
                try atMost(4)
                guard let threshold = try int(0, "threshold"), threshold <= 255 else { throw RequestError.invalid("trim: threshold is 0–255") }
                var trim = Trim(tolerance: threshold, metric: .perChannel)
                if let text = arg(1) {
                    guard let colour = ImagePlan.colour(text) else { throw RequestError.invalid("trim: bad colour \(text)") }
                    trim.colour = [colour.red, colour.green, colour.blue]
                }
                trim.equalHorizontal = try bool(2) ?? false
                trim.equalVertical = try bool(3) ?? false
                options.trim = trim
            case "format_quality", "fq":
                // fq:format:quality[:format:quality…]: each on its codec's own scale; 0 drops it.
                guard args.count % 2 == 0 else { throw RequestError.invalid("format_quality takes format:quality pairs") }
                for index in stride(from: 0, to: args.count, by: 2) {
                    let format = try outputFormat(args[index])
                    guard let quality = RequestNumber.whole(args[index + 1], in: RequestNumber.anyWhole), (0...100).contains(quality) else {
                        throw RequestError.invalid("format_quality: quality is 0–100")
                    }
                    options.formatQuality[format] = quality == 0 ? nil : quality
                }
            case "max_bytes", "mb":
                try atMost(1)
                let bytes = try int(0, "bytes") ?? 0
                options.maxBytes = bytes > 0 ? bytes : nil
            case "rotate", "rot":
                try atMost(1)
                guard let degrees = RequestNumber.whole(args[0], in: RequestNumber.anyWhole), degrees % 90 == 0, degrees.magnitude <= 3600 else {
                    throw RequestError.invalid("rotate takes 0, 90, 180 or 270 (multiples of 90)")
                }
                options.rotation = degrees
            case "padding", "pd":
                // imgproxy's CSS-like reading: top for every side; then right (and left), bottom,
                // left, each when given (an empty argument keeps what it carried); all 0: none.
                try atMost(4)
                let top = try int(0, "padding") ?? 0
                let right = try int(1, "padding") ?? top
                let bottom = try int(2, "padding") ?? top
                let left = try int(3, "padding") ?? right
                options.padding = top + right + bottom + left > 0 ? (top, right, bottom, left) : nil
            case "pixelate", "pix":
                try atMost(1)
                let size = try int(0, "size") ?? 0
                options.pixelate = size > 1 ? size : nil
            case "zoom", "z":
                try atMost(2)
                guard let x = try double(0, "zoom"), x > 0 else { throw RequestError.invalid("zoom is above 0") }
                let y = try double(1, "zoom") ?? x
                guard y > 0, x <= Scale.maximumFactor, y <= Scale.maximumFactor else { throw RequestError.invalid("zoom is above 0 and at most \(Scale.maximumFactor)") }
                options.zoom = (x, y)
            case "min-width", "mw":
                try atMost(1)
                options.minWidth = try int(0, "min-width") ?? 0
            case "min-height", "mh":
                try atMost(1)
                options.minHeight = try int(0, "min-height") ?? 0
            case "max_src_resolution", "msr", "max_src_file_size", "msfs", "max_animation_frames", "maf":
                // The URL's own limits on its source: tighter than the server's, never looser.
                try atMost(1)
                var limits = options.sourceLimits ?? DecodingLimits(maxPixels: .max, maxInputBytes: .max, maxFrames: .max, maxAnimationPixels: .max)
                switch name {
                case "max_src_resolution", "msr":
                    guard let megapixels = try double(0, "megapixels"), megapixels > 0, megapixels <= 1_000_000 else {
                        throw RequestError.invalid("max_src_resolution is megapixels above 0")
                    }
                    limits.maxPixels = Int(checked: (megapixels * 1_000_000).rounded())
                case "max_src_file_size", "msfs":
                    guard let bytes = try int(0, "bytes"), bytes > 0 else { throw RequestError.invalid("max_src_file_size is bytes above 0") }
                    limits.maxInputBytes = bytes
                default:
                    guard let frames = try int(0, "frames"), frames > 0 else { throw RequestError.invalid("max_animation_frames is above 0") }
                    limits.maxFrames = frames
                }
                options.sourceLimits = limits
            case "expires", "exp":
                try atMost(1)
                guard let text = arg(0), let time = Int64(text) else { throw RequestError.invalid("expires is a UNIX time in seconds") }
                options.expires = time
            case "filename", "fn":
                try atMost(2)
                guard let text = arg(0) else { throw RequestError.invalid("filename needs a name") }
                if try bool(1) == true {
                    guard let data = URLSigner.decodeBase64URL(String(text)), let decoded = String(data: data, encoding: .utf8) else {
                        throw RequestError.invalid("filename: the encoded name is not base64url")
                    }
                    options.filename = decoded
                } else {
                    options.filename = String(text).removingPercentEncoding ?? String(text)
                }
            case "return_attachment", "att":
                try atMost(1)
                options.attachment = try bool(0) ?? false
            case "auto_rotate", "ar":
                // Orientation is always applied (as imgproxy's default): asking for it is fine,
                // asking to leave it is not supported.
                try atMost(1)
                if try bool(0) == false { throw RequestError.invalid("auto_rotate:0 is not supported: the orientation is always applied") }
            case "preserve_hdr", "ph":
                // Accepted: answers are 8 bits a channel in sRGB (an HDR source is tone-mapped
                // by its decoder), so there is no HDR to keep.
                try atMost(1)
                _ = try bool(0)
            case "page", "pg":
                try atMost(1)
                options.page = try RequestError.planning { try ImagePlan.page(args[0]) }
            case "skip_processing", "skp":
                // Source types answered unprocessed when the answer is in their type.
                for text in args where !text.isEmpty {
                    guard let type = sourceType(text) else { throw RequestError.invalid("invalid image format in skip_processing: \(text)") }
                    options.skipProcessing.insert(type)
                }
            case "raw":
                try atMost(1)
                options.raw = try bool(0) ?? false
            case "video_thumbnail_second", "vts":
                // imgproxy Pro's: the frame of a video source at this second.
                try atMost(1)
                guard let second = try double(0, "second"), (0...VideoPosition.maxSecond).contains(second) else {
                    throw RequestError.invalid("video_thumbnail_second is 0–\(Int(VideoPosition.maxSecond)) seconds")
                }
                options.video.second = second
            case "video_thumbnail_keyframes", "vtk":
                try atMost(1)
                options.video.keyframeOnly = try bool(0) ?? false
            case "enforce_thumbnail", "eth":
                try atMost(1)
                options.embeddedThumbnail = try bool(0) ?? false
            case "keep_copyright", "kcr":
                try atMost(1)
                options.keepCopyright = try bool(0) ?? false
            case "max_animation_frame_resolution", "mafr":
                try atMost(1)
                guard let megapixels = try double(0, "megapixels"), megapixels >= 0, megapixels <= 1_000_000 else {
                    throw RequestError.invalid("max_animation_frame_resolution is megapixels, 0 or more")
                }
                // 0: imgproxy's "no limit of its own" (max_src_resolution still holds), also over
                // a preset's.
                var limits = options.sourceLimits ?? DecodingLimits(maxPixels: .max, maxInputBytes: .max, maxFrames: .max, maxAnimationPixels: .max)
                limits.maxAnimationFramePixels = megapixels > 0 ? Int(checked: (megapixels * 1_000_000).rounded()) : .max
                options.sourceLimits = limits == DecodingLimits(maxPixels: .max, maxInputBytes: .max, maxFrames: .max, maxAnimationPixels: .max)
                    ? nil : limits
            case "cachebuster", "cb":
                try atMost(1)
                break  // changes the URL (for CDNs), not the image
            case "monochrome", "mc", "duotone", "dt", "colorize", "col":
                try applyTone(arguments, to: &options)
            case "background", "bg":
                // bg:R:G:B or bg:hex (an empty one: none).
                guard args.count == 1 || args.count == 3 else { throw RequestError.invalid("background is R:G:B (0–255) or a hex colour") }
                if args.count == 3 {
                    guard let r = UInt8(args[0]), let g = UInt8(args[1]), let b = UInt8(args[2]) else {
                        throw RequestError.invalid("background is R:G:B (0–255) or a hex colour")
                    }
                    options.background = (r, g, b)
                } else if let colour = ImagePlan.colour(args[0]) {
                    options.background = colour
                } else if args[0].isEmpty {
                    options.background = nil
                } else {
                    throw RequestError.invalid("background is R:G:B (0–255) or a hex colour")
                }
            case "preset", "pr":
                // A preset already being applied is skipped (a loop), as imgproxy does; its own
                // options may be any, whatever the allowed list says.
                for presetName in args where !context.presetPath.contains(presetName) {
                    guard let preset = context.presets[String(presetName)] else { throw RequestError.invalid("unknown preset \(presetName)") }
                    var inner = context
                    inner.allowed = []
                    inner.presetPath.append(presetName)
                    try apply(preset, to: &options, context: inner)
                }
            default:
                throw RequestError.invalid("unknown option \(name)")
            }
        }
    }

    /// imgproxy Pro's `monochrome:%intensity:%color`, `duotone:%intensity:%color1:%color2` and
    /// `colorize:%opacity:%color:%keep_alpha`: one of each a request (a later one replaces it;
    /// an intensity or opacity of 0 removes it), after the resize, in `adjustments`.
    private static func applyTone(_ arguments: OptionArguments, to options: inout ImagePlan) throws {
        func colour(_ index: Int, _ fallback: RGBColour) throws -> RGBColour {
            guard let text = arguments.arg(index), !text.isEmpty else { return fallback }
            guard let rgb = ImagePlan.colour(text) else { throw RequestError.invalid("\(arguments.name): \(text) is not a hex colour") }
            return RGBColour(red: rgb.red, green: rgb.green, blue: rgb.blue)
        }
        let amount = try arguments.double(0, arguments.name.hasPrefix("col") ? "opacity" : "intensity", in: 0...1) ?? 0
        let step: any ImageProcessor
        switch arguments.name {
        case "monochrome", "mc":
            try arguments.atMost(2)
            options.adjustments.removeAll { $0 is Monochrome }
            step = try Monochrome(intensity: amount, colour: colour(1, Monochrome.defaultColour))
        case "duotone", "dt":
            try arguments.atMost(3)
            options.adjustments.removeAll { $0 is Duotone }
            step = try Duotone(intensity: amount, dark: colour(1, .black), light: colour(2, .white))
        default:
            try arguments.atMost(3)
            options.adjustments.removeAll { $0 is Colorize }
            step = try Colorize(opacity: amount, colour: colour(1, .black), keepAlpha: arguments.bool(2) ?? false)
        }
        if amount > 0 { options.adjustments.append(step) }
    }
}
