import EaselCodecs
import EaselPipeline
import Foundation

/// How a server reads imgproxy URLs (imgproxy's settings), and Client Hints held to the limits.
extension ImgproxyURL {
    /// How a server reads imgproxy URLs: imgproxy's own settings of the same names.
    struct Settings: Sendable {
        /// Option lists by name (`pr:name`); `default` applies to every URL (`IMGPROXY_PRESETS`).
        var presets: [String: [Substring]] = [:]
        /// Between an option's name and arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`).
        var separator: Character = ":"
        /// Put before every source URL that does not start with it (`IMGPROXY_BASE_URL`).
        var baseURL = ""
        /// Rewrites of source URLs, in order, before `baseURL` (`IMGPROXY_URL_REPLACEMENTS`).
        var replacements: [URLReplacement] = []
        /// A base64 source may be followed by `/{file name}`, which is ignored
        /// (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`).
        var base64IncludesFilename = false
        /// The options segment is a list of preset names and nothing else (`IMGPROXY_ONLY_PRESETS`).
        var onlyPresets = false
        /// When not empty, the only option names a URL may use (presets may use any):
        /// `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`.
        var allowedOptions: Set<String> = []
        /// Source types answered unprocessed when the answer is in their type
        /// (`IMGPROXY_SKIP_PROCESSING_FORMATS`; a URL's `skip_processing` adds to them).
        var skipProcessing: Set<ImageFileType> = []
        /// Formats that win over the URL's for clients that name them (`IMGPROXY_ENFORCE_*`).
        var enforcedFormats: [ImageEncoding.Format] = []
        /// Whether Client Hints set the width and DPR (`IMGPROXY_ENABLE_CLIENT_HINTS`).
        var clientHints = false
        /// Whether answers keep the source's Artist and Copyright unless the URL says otherwise
        /// (`IMGPROXY_KEEP_COPYRIGHT`).
        var keepCopyright = false
        /// Autoquality's settings where a URL gives none of its own.
        var autoQuality = AutoQuality()
        /// Every URL is autoquality unless it says otherwise (`IMGPROXY_AUTOQUALITY_METHOD=dssim`).
        var autoQualityByDefault = false
        /// Every answer at most this many pixels a side, scaled down whole
        /// (`IMGPROXY_MAX_RESULT_DIMENSION`); 0: none.
        var maxResultDimension = 0
        /// The ad-hoc limits (`maxAdHocSize`, `maxOutputPixels`): a DPR or width a Client Hint
        /// gave is lowered to stay within them (a URL's own is refused past them).
        var maxSide = 2048
        var maxPixels = 16_777_216
    }

    /// One of `IMGPROXY_URL_REPLACEMENTS`: a pattern matched at the start of the source URL, `*`
    /// matching any run without `/`, and its replacement, where `${1}`… are the runs.
    struct URLReplacement: Sendable {
        let regex: NSRegularExpression
        let template: String

        init(pattern: String, replacement: String) throws {
            let parts = pattern.split(separator: "*", omittingEmptySubsequences: false)
            let expression = "^" + parts.map { NSRegularExpression.escapedPattern(for: String($0)) }.joined(separator: "([^/]*)")
            do { regex = try NSRegularExpression(pattern: expression) } catch {
                throw RequestError.invalid("URL replacement pattern \(pattern) is not usable")
            }
            // Go's template rules: `$name` or `${name}`, the name the longest run of letters,
            // digits and `_`; a number names that group (0: the whole match), anything else (no
            // such group, a name) is empty; `$$` is `$`; a `$` that starts no name is itself.
            var template = ""
            var rest = replacement[...]
            func isNameCharacter(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || c == "_") }
            while let first = rest.first {
                rest = rest.dropFirst()
                guard first == "$" else {
                    template += first == "\\" ? "\\\\" : String(first)
                    continue
                }
                var name: Substring?
                if rest.first == "$" {
                    template += "\\$"
                    rest = rest.dropFirst()
                    continue
                } else if rest.first == "{", let close = rest.firstIndex(of: "}"),
                          rest[rest.index(after: rest.startIndex)..<close].allSatisfy(isNameCharacter),
                          rest.index(after: rest.startIndex) < close {
                    name = rest[rest.index(after: rest.startIndex)..<close]
                    rest = rest[rest.index(after: close)...]
                } else {
                    let run = rest.prefix(while: isNameCharacter)
                    if !run.isEmpty {
                        name = run
                        rest = rest.dropFirst(run.count)
                    }
                }
                guard let name else {
                    template += "\\$"
                    continue
                }
                if let group = Int(name), group >= 0, group < parts.count { template += "$\(group)" }
            }
            self.template = template
        }

        /// `pattern=replacement;pattern=replacement…`, as imgproxy reads it.
        static func list(_ text: String) throws -> [URLReplacement] {
            try text.split(separator: ";").map { pair in
                guard let equals = pair.firstIndex(of: "=") else { throw RequestError.invalid("URL replacement \(pair) is not pattern=replacement") }
                return try URLReplacement(pattern: String(pair[..<equals]), replacement: String(pair[pair.index(after: equals)...]))
            }
        }

        /// `url` rewritten, or as it is when the pattern does not match its start.
        func apply(to url: String) -> String {
            regex.stringByReplacingMatches(in: url, range: NSRange(url.startIndex..., in: url), withTemplate: template)
        }
    }

    /// A DPR and width that Client Hints gave (and the URL left as they were) lowered to stay
    /// within the limits: a client's screen never turns a URL into a refusal (imgproxy caps
    /// such answers at the source's size; here they also stop at the ad-hoc limits).
    static func clamp(_ options: inout ImagePlan, hints: ClientHints, hinted: (dpr: Double, width: Int), settings: Settings) {
        // In Double throughout: a URL's own sides and dpr are not checked yet (they are refused
        // later when past the limits), so nothing here may overflow or trap on them.
        let width = Double(options.width), height = Double(options.height)
        if hints.dpr != nil, options.dpr == hinted.dpr {
            var most = Double(settings.maxSide) / max(width, height, 1)
            if width > 0, height > 0 { most = min(most, (Double(settings.maxPixels) / (width * height)).squareRoot()) }
            options.dpr = max(0.01, min(options.dpr, most))
        }
        if hints.width != nil, options.width == hinted.width, options.dpr > 0 {
            var most = Double(settings.maxSide) / options.dpr
            if height > 0 { most = min(most, Double(settings.maxPixels) / (height * options.dpr * options.dpr)) }
            options.width = Int(checked: max(1, min(width, most.rounded(.down))))
        }
    }
}
