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
        var rest = path.drop { $0 == "/" }
        guard let slash = rest.firstIndex(of: "/") else { throw RequestError.noSuchImage }
        let signature = rest[..<slash]
        let signedPath = rest[slash...]
        rest = rest[rest.index(after: slash)...]
        var segments = rest.split(separator: "/", omittingEmptySubsequences: false)
        // Client Hints first (when the server reads them), then the `default` preset, then the
        // URL's own options: each later one wins, as in imgproxy.
        var options = startingPlan(settings: settings, hints: hints)
        let hinted = (dpr: options.dpr, width: options.width)
        try applyURLOptions(&segments, to: &options, settings: settings)
        if let hints { clamp(&options, hints: hints, hinted: hinted, settings: settings) }
        let (sourceText, fileExtension) = try readSource(segments, settings: settings)
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

    /// The plan before any option: imgproxy's defaults, the server's settings, and the width and
    /// DPR that Client Hints give (when the server reads them).
    static func startingPlan(settings: Settings, hints: ClientHints?) -> ImagePlan {
        var options = ImagePlan()
        // imgproxy enlarges in no resizing type unless asked (`enlarge`), and names every answer.
        options.enlarge = false
        options.contentDisposition = true
        // Turns and flips first: imgproxy's crops and gravities act on the turned image.
        options.turnsFirst = true
        // Sizes, crops, extensions and padding as imgproxy computes them.
        options.imgproxyGeometry = true
        options.skipProcessing = settings.skipProcessing
        options.keepCopyright = settings.keepCopyright
        if settings.autoQualityByDefault { options.autoQuality = settings.autoQuality }
        if let hints {
            if let dpr = hints.dpr { options.dpr = dpr }
            if let width = hints.width { options.width = max(1, Int(checked: (Double(width) / (hints.dpr ?? 1)).rounded())) }
        }
        return options
    }

    /// The `default` preset (when there is one), then the URL's options, taken off the front of
    /// `segments`: a segment of preset names (`IMGPROXY_ONLY_PRESETS`), else options in one or
    /// more chained pipelines.
    static func applyURLOptions(_ segments: inout [Substring], to options: inout ImagePlan, settings: Settings) throws {
        let separator = settings.separator, presets = settings.presets
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
            try applyPipelines(&segments, to: &options, context: context)
        }
    }

    /// The option segments at the front of `segments` (taken off), as imgproxy Pro's chained
    /// pipelines (`…/-/…`): each later one is run on the first's result. Those that only draw
    /// marks (Pro's way to several watermarks) are taken, their marks after the first's; any
    /// other option in one is refused.
    static func applyPipelines(_ segments: inout [Substring], to options: inout ImagePlan, context: OptionContext) throws {
        let separator = context.separator
        var pipelines: [[Substring]] = [[]]
        // (An empty segment is no option: imgproxy reads `/insecure//plain/…` as no options.)
        while let first = segments.first, first != "plain", first.isEmpty || first.contains(separator) || first == "-" {
            if first == "-" { pipelines.append([]) } else if !first.isEmpty { pipelines[pipelines.count - 1].append(first) }
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

    /// The source URL after the options (`plain/{source}[@{extension}]`, else base64url, maybe
    /// split by `/`, then `[.{extension}]`), the server's replacements and base URL applied, and
    /// its extension as written.
    static func readSource(_ segments: [Substring], settings: Settings) throws -> (String, Substring?) {
        var segments = segments
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
        return (sourceText, fileExtension)
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

    /// Option segments (`name:arg:arg…`), in order: a later one overrides an earlier one, and a
    /// preset's options stand where it is named.
    static func apply(_ segments: [Substring], to options: inout ImagePlan, context: OptionContext) throws {
        for segment in segments where !segment.isEmpty {
            let parts = segment.split(separator: context.separator, omittingEmptySubsequences: false)
            let name = parts[0], args = Array(parts.dropFirst())
            if !context.allowed.isEmpty, !context.allowed.contains(String(name)) {
                throw RequestError.refused("forbidden processing option \(name)")
            }
            guard !args.isEmpty else { throw RequestError.invalid("option \(name) needs arguments") }
            try applyOption(OptionArguments(name: name, args: args), to: &options, context: context)
        }
    }

    /// One option, handed by its name (or short form) to the function for its concern; a name
    /// none of them knows is a 400.
    static func applyOption(_ a: OptionArguments, to options: inout ImagePlan, context: OptionContext) throws {
        switch a.name {
        case "resize", "rs", "size", "s", "resizing_type", "rt", "width", "w", "height", "h", "dpr", "enlarge", "el",
             "min-width", "mw", "min-height", "mh", "zoom", "z", "max_result_dimension", "mrd":
            try applySizing(a, to: &options)
        case "gravity", "g", "crop", "c", "trim", "t", "extend", "ex", "extend_aspect_ratio", "extend_ar", "exar", "padding", "pd":
            try applyCropping(a, to: &options)
        case "flip", "fl", "rotate", "rot", "auto_rotate", "ar":
            try applyOrientation(a, to: &options)
        case "quality", "q", "format", "f", "ext", "format_quality", "fq", "autoquality", "aq", "max_bytes", "mb":
            try applyOutput(a, to: &options, context: context)
        case "strip_metadata", "sm", "strip_color_profile", "scp", "keep_copyright", "kcr", "preserve_hdr", "ph":
            try applyMetadata(a, to: &options)
        case "blur", "bl", "sharpen", "sh", "pixelate", "pix", "background", "bg",
             "monochrome", "mc", "duotone", "dt", "colorize", "col":
            try applyEffect(a, to: &options)
        case "watermark", "wm", "watermark_url", "wmu", "watermark_text", "wmt", "watermark_size", "wms", "watermark_shadow", "wmsh",
             "watermark_rotate", "wm_rot", "wmr":
            try applyMark(a, to: &options)
        case "max_src_resolution", "msr", "max_src_file_size", "msfs", "max_animation_frames", "maf",
             "max_animation_frame_resolution", "mafr":
            try applySourceLimits(a, to: &options)
        case "page", "pg", "video_thumbnail_second", "vts", "video_thumbnail_keyframes", "vtk", "enforce_thumbnail", "eth",
             "skip_processing", "skp", "raw":
            try applySource(a, to: &options)
        case "expires", "exp", "filename", "fn", "return_attachment", "att", "cachebuster", "cb",
             "fallback_image_url", "fiu", "cache_tags", "ct":
            try applyDelivery(a, to: &options)
        case "preset", "pr":
            try applyPresets(a, to: &options, context: context)
        default:
            throw RequestError.invalid("unknown option \(a.name)")
        }
    }

    /// `preset`/`pr`: each named preset's options, applied where the preset is named. A preset
    /// already being applied is skipped (a loop), as imgproxy does; its own options may be any,
    /// whatever the allowed list says.
    static func applyPresets(_ a: OptionArguments, to options: inout ImagePlan, context: OptionContext) throws {
        for presetName in a.args where !context.presetPath.contains(presetName) {
            guard let preset = context.presets[String(presetName)] else { throw RequestError.invalid("unknown preset \(presetName)") }
            var inner = context
            inner.allowed = []
            inner.presetPath.append(presetName)
            try apply(preset, to: &options, context: inner)
        }
    }
}
