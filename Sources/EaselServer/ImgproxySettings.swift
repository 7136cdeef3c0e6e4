import EaselCodecs
import EaselPipeline
import Foundation

/// How imgproxy-compatible URLs (`/imgproxy/…`) are read and answered, beyond keys, presets and
/// the argument separator (`ServerConfiguration.imgproxyKeys` and the rest): imgproxy's own
/// settings of the same names, in the configuration file's `imgproxy` object or through
/// imgproxy's environment variables.
public struct ImgproxySettings: Sendable, Codable, Equatable {
    /// Put before every source URL that does not already start with it (`IMGPROXY_BASE_URL`).
    public var baseURL = ""
    /// Rewrites of source URLs, `pattern=replacement` pairs separated by `;`: a pattern matches
    /// the URL's start, each `*` any run without `/`, which the replacement names `${1}`, `${2}`…
    /// (`IMGPROXY_URL_REPLACEMENTS`). Applied in order, before `baseURL`.
    public var urlReplacements = ""
    /// A base64 source may be followed by `/{file name}`, which is ignored
    /// (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`).
    public var base64URLIncludesFilename = false
    /// URLs name presets only: `/{signature}/{preset}:{preset}…/{source}` (`IMGPROXY_ONLY_PRESETS`).
    public var onlyPresets = false
    /// When not empty, the only option names (as written: `w`, `width`…) a URL may use; a preset's
    /// own options may be any (`IMGPROXY_ALLOWED_PROCESSING_OPTIONS`, comma-separated). Others
    /// are a 403.
    public var allowedProcessingOptions: [String] = []
    /// Source types answered as they are, unprocessed, when the answer would be in their type
    /// (`IMGPROXY_SKIP_PROCESSING_FORMATS`: `jpg`, `png`, `gif`, `webp`, `avif`, `svg`…); a URL's
    /// `skip_processing` adds its own.
    public var skipProcessingFormats: [String] = []
    /// WebP, AVIF or JPEG XL even when the URL names another format, for clients whose `Accept`
    /// names it (`IMGPROXY_ENFORCE_WEBP`, `IMGPROXY_ENFORCE_AVIF`, `IMGPROXY_ENFORCE_JXL`). A URL
    /// that names no format is negotiated whatever these say (AVIF, then WebP, for clients that
    /// name them: imgproxy's `IMGPROXY_AUTO_*` always on).
    public var enforceWebP = false
    /// AVIF over the URL's format for clients that name it (`IMGPROXY_ENFORCE_AVIF`).
    public var enforceAVIF = false
    /// JPEG XL over the URL's format for clients that name it (`IMGPROXY_ENFORCE_JXL`); turns on
    /// `ServerConfiguration.jpegXL` when set through the variable.
    public var enforceJXL = false
    /// The client's `Sec-CH-DPR`/`DPR` and `Sec-CH-Width`/`Width` set a URL's DPR and width
    /// where it names none (`IMGPROXY_ENABLE_CLIENT_HINTS`); answers then vary on them.
    public var enableClientHints = false
    /// Answers keep the source's EXIF Artist and Copyright (JPEG, PNG and WebP stills) unless
    /// the URL's `keep_copyright` says otherwise (`IMGPROXY_KEEP_COPYRIGHT`). Off by default:
    /// easel strips all metadata unless asked (imgproxy keeps copyright by default).
    public var keepCopyright = false
    /// Every imgproxy URL is autoquality (`ServerConfiguration.autoQuality`) unless it says
    /// `aq:none` (`IMGPROXY_AUTOQUALITY_METHOD=dssim`; `none` by default).
    public var autoQualityByDefault = false
    /// Every imgproxy answer is scaled down, whole, to at most this many pixels a side
    /// (`IMGPROXY_MAX_RESULT_DIMENSION`); 0: no such limit. A URL's `max_result_dimension` may
    /// only lower it.
    public var maxResultDimension = 0

    /// Every default: nothing rewritten, every option allowed, nothing skipped or enforced.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case baseURL, urlReplacements, base64URLIncludesFilename, onlyPresets, allowedProcessingOptions, skipProcessingFormats
        case enforceWebP, enforceAVIF, enforceJXL, enableClientHints, keepCopyright, autoQualityByDefault, maxResultDimension
    }

    /// Every key is optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T { try container.decodeIfPresent(T.self, forKey: key) ?? fallback }
        baseURL = try value(.baseURL, "")
        urlReplacements = try value(.urlReplacements, "")
        base64URLIncludesFilename = try value(.base64URLIncludesFilename, false)
        onlyPresets = try value(.onlyPresets, false)
        allowedProcessingOptions = try value(.allowedProcessingOptions, [])
        skipProcessingFormats = try value(.skipProcessingFormats, [])
        enforceWebP = try value(.enforceWebP, false)
        enforceAVIF = try value(.enforceAVIF, false)
        enforceJXL = try value(.enforceJXL, false)
        enableClientHints = try value(.enableClientHints, false)
        keepCopyright = try value(.keepCopyright, false)
        autoQualityByDefault = try value(.autoQualityByDefault, false)
        maxResultDimension = try value(.maxResultDimension, 0)
    }

    /// imgproxy's variables: `IMGPROXY_BASE_URL`, `IMGPROXY_URL_REPLACEMENTS`,
    /// `IMGPROXY_BASE64_URL_INCLUDES_FILENAME`, `IMGPROXY_ONLY_PRESETS`,
    /// `IMGPROXY_ALLOWED_PROCESSING_OPTIONS`, `IMGPROXY_SKIP_PROCESSING_FORMATS`,
    /// `IMGPROXY_ENFORCE_WEBP`, `IMGPROXY_ENFORCE_AVIF`, `IMGPROXY_ENFORCE_JXL`,
    /// `IMGPROXY_ENABLE_CLIENT_HINTS`, `IMGPROXY_KEEP_COPYRIGHT`, `IMGPROXY_MAX_RESULT_DIMENSION`,
    /// `IMGPROXY_AUTOQUALITY_METHOD`
    /// (and `IMGPROXY_AUTOQUALITY_TARGET`, `_MIN`, `_MAX`, read into
    /// `ServerConfiguration.autoQuality`).
    mutating func apply(environment: [String: String]) throws(ServerConfigurationError) {
        func flag(_ name: String, _ target: inout Bool) throws(ServerConfigurationError) {
            if let value = try ServerConfiguration.flag(environment, name) { target = value }
        }
        if let text = environment["IMGPROXY_BASE_URL"] { baseURL = text }
        if let text = environment["IMGPROXY_URL_REPLACEMENTS"] { urlReplacements = text }
        try flag("IMGPROXY_BASE64_URL_INCLUDES_FILENAME", &base64URLIncludesFilename)
        try flag("IMGPROXY_ONLY_PRESETS", &onlyPresets)
        if let text = environment["IMGPROXY_ALLOWED_PROCESSING_OPTIONS"] { allowedProcessingOptions = ServerConfiguration.list(text) }
        if let text = environment["IMGPROXY_SKIP_PROCESSING_FORMATS"] { skipProcessingFormats = ServerConfiguration.list(text) }
        try flag("IMGPROXY_ENFORCE_WEBP", &enforceWebP)
        try flag("IMGPROXY_ENFORCE_AVIF", &enforceAVIF)
        try flag("IMGPROXY_ENFORCE_JXL", &enforceJXL)
        try flag("IMGPROXY_ENABLE_CLIENT_HINTS", &enableClientHints)
        try flag("IMGPROXY_KEEP_COPYRIGHT", &keepCopyright)
        if let text = environment["IMGPROXY_MAX_RESULT_DIMENSION"] {
            guard let side = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw .invalidValue(name: "IMGPROXY_MAX_RESULT_DIMENSION", value: text)
            }
            maxResultDimension = side
        }
        if let method = environment["IMGPROXY_AUTOQUALITY_METHOD"] {
            switch method {
            case "dssim": autoQualityByDefault = true
            case "none", "": autoQualityByDefault = false
            default: throw .invalidValue(name: "IMGPROXY_AUTOQUALITY_METHOD", value: "\(method) (dssim or none)")
            }
        }
    }

    /// Checks every value; a bad one is an error naming it.
    func validate() throws(ServerConfigurationError) {
        guard maxResultDimension >= 0 else { throw .invalidValue(name: "imgproxy.maxResultDimension", value: "\(maxResultDimension)") }
        do { _ = try ImgproxyURL.URLReplacement.list(urlReplacements) } catch {
            throw .invalidValue(name: "imgproxy.urlReplacements", value: "\(error)")
        }
        for name in skipProcessingFormats where ImgproxyURL.sourceType(name) == nil {
            throw .invalidValue(name: "imgproxy.skipProcessingFormats", value: name)
        }
    }

    /// The formats that win over a URL's own for a client that names them, in imgproxy's order.
    var enforcedFormats: [ImageEncoding.Format] {
        (enforceJXL ? [.jxl] : []) + (enforceAVIF ? [.avif] : []) + (enforceWebP ? [.webp] : [])
    }
}

/// A client's Client Hints, as imgproxy reads them: `Sec-CH-DPR` (else `DPR`), above 0 and at
/// most 8 (taken as at least 0.1, the least a URL's `dpr` may be), and `Sec-CH-Width` (else
/// `Width`), a whole number above 0 (at most 2²⁰), in physical pixels.
struct ClientHints: Sendable, Equatable {
    var dpr: Double?
    var width: Int?

    /// The hints in `value(name)`'s header fields; nil when there are none.
    static func read(_ value: (String) -> String?) -> ClientHints? {
        var hints = ClientHints()
        for name in ["Sec-CH-DPR", "DPR"] {
            if let text = value(name), let dpr = Double(text.trimmingCharacters(in: .whitespaces)), dpr > 0, dpr <= 8 {
                hints.dpr = max(0.1, dpr)
                break
            }
        }
        for name in ["Sec-CH-Width", "Width"] {
            if let text = value(name), let width = Int(text.trimmingCharacters(in: .whitespaces)), width > 0, width <= 1 << 20 {
                hints.width = width
                break
            }
        }
        return hints.dpr == nil && hints.width == nil ? nil : hints
    }

    /// The layout viewport's width in CSS pixels (`Sec-CH-Viewport-Width`, else
    /// `Viewport-Width`), a whole number above 0 (at most 2²⁰); nil without one. imgproxy reads
    /// no such hint: only native `w=auto` does, as a cap where `Sec-CH-Width` is missing.
    static func viewportWidth(_ value: (String) -> String?) -> Int? {
        for name in ["Sec-CH-Viewport-Width", "Viewport-Width"] {
            if let text = value(name), let width = Int(text.trimmingCharacters(in: .whitespaces)), width > 0, width <= 1 << 20 {
                return width
            }
        }
        return nil
    }

    /// What answers to URLs that read hints vary on.
    static let vary = "Sec-CH-DPR, DPR, Sec-CH-Width, Width"
}
