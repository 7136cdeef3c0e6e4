import Foundation

/// How answers go out to browsers and CDNs: CORS, Client Hints and Save-Data, the fallback
/// image, and cache tags (`ServerConfiguration.delivery`, JSON `delivery`).
public struct DeliverySettings: Sendable, Codable, Equatable {
    /// Origins a browser may read answers from (`Access-Control-Allow-Origin`): `["*"]` for
    /// any, else the origins named (the request's `Origin` echoed when listed, with `Vary:
    /// Origin`); empty: no CORS headers. Preflights (`OPTIONS`) are answered for images.
    /// `EASEL_CORS_ALLOW_ORIGIN` (comma-separated).
    public var corsAllowOrigins: [String] = []
    /// How long a browser may keep a preflight's answer, in seconds.
    public var corsMaxAge = 86_400
    /// The gallery page asks browsers for Client Hints (`Accept-CH: Sec-CH-DPR, Sec-CH-Width,
    /// Sec-CH-Viewport-Width`), which native `w=auto`/`dpr=auto` then read
    /// (`EASEL_ACCEPT_CH`).
    public var acceptClientHints = false
    /// `Save-Data: on` lowers the quality: a fixed quality by a quarter, an autoquality target
    /// doubled (answers then vary on `Save-Data`) (`EASEL_SAVE_DATA`).
    public var saveData = false
    /// Answered, processed as the source would be, when a source is missing or cannot be
    /// decoded: a file path or an http(s) URL (the allow-list applies to a URL). Nil: none
    /// (`EASEL_FALLBACK_IMAGE`, imgproxy's `IMGPROXY_FALLBACK_IMAGE_PATH` or `_URL`).
    public var fallbackImage: String?
    /// The status of a fallback answer (`EASEL_FALLBACK_STATUS`,
    /// `IMGPROXY_FALLBACK_IMAGE_HTTP_CODE`; 200 as imgproxy).
    public var fallbackStatus = 200
    /// How long caches may keep a fallback answer, in seconds (`IMGPROXY_FALLBACK_IMAGE_TTL`);
    /// nil: the usual `maxAge`.
    public var fallbackMaxAge: Int?
    /// The header every image answer names its cache tags in (its source's, and its
    /// watermark's): `Surrogate-Key` (Fastly, Varnish: space-separated), `Cache-Tag`
    /// (Cloudflare), `Edge-Cache-Tag` (Akamai) (comma-separated) or any other name
    /// (space-separated); empty: none (`EASEL_CACHE_TAG_HEADER`).
    public var cacheTagHeader = "Surrogate-Key"
    /// CDN endpoints a purge calls with the purged source's tag (purge by tag), besides the
    /// `BAN`s of `cdnBanURLs`.
    public var purgeByTag: [PurgeEndpoint] = []

    /// A CDN's purge-by-tag endpoint: `{tag}` in `url` and `body` is the tag.
    public struct PurgeEndpoint: Sendable, Codable, Equatable {
        /// Where to send it, e.g. `https://api.cloudflare.com/client/v4/zones/ZONE/purge_cache`
        /// or Fastly's `https://api.fastly.com/service/ID/purge/{tag}`.
        public var url: String
        /// The method (`POST` unless given).
        public var method: String?
        /// Header fields to send (`Authorization`, `Fastly-Key`…).
        public var headers: [String: String]?
        /// The body, e.g. `{"tags": ["{tag}"]}` (Cloudflare) or `{"objects": ["{tag}"]}` (Akamai);
        /// nil: none.
        public var body: String?

        /// An endpoint; `POST`, no header fields and no body unless given.
        public init(url: String, method: String? = nil, headers: [String: String]? = nil, body: String? = nil) {
            self.url = url
            self.method = method
            self.headers = headers
            self.body = body
        }
    }

    /// Every default: no CORS, no Client Hints, no Save-Data, no fallback, `Surrogate-Key` tags.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case corsAllowOrigins, corsMaxAge, acceptClientHints, saveData, fallbackImage, fallbackStatus, fallbackMaxAge, cacheTagHeader, purgeByTag
    }

    /// Every key is optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = DeliverySettings()
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T { try container.decodeIfPresent(T.self, forKey: key) ?? fallback }
        corsAllowOrigins = try value(.corsAllowOrigins, defaults.corsAllowOrigins)
        corsMaxAge = try value(.corsMaxAge, defaults.corsMaxAge)
        acceptClientHints = try value(.acceptClientHints, defaults.acceptClientHints)
        saveData = try value(.saveData, defaults.saveData)
        fallbackImage = try container.decodeIfPresent(String.self, forKey: .fallbackImage)
        fallbackStatus = try value(.fallbackStatus, defaults.fallbackStatus)
        fallbackMaxAge = try container.decodeIfPresent(Int.self, forKey: .fallbackMaxAge)
        cacheTagHeader = try value(.cacheTagHeader, defaults.cacheTagHeader)
        purgeByTag = try value(.purgeByTag, defaults.purgeByTag)
    }

    mutating func apply(environment: [String: String]) throws(ServerConfigurationError) {
        if let text = environment["EASEL_CORS_ALLOW_ORIGIN"] { corsAllowOrigins = ServerConfiguration.list(text) }
        if let on = try ServerConfiguration.flag(environment, "EASEL_ACCEPT_CH") { acceptClientHints = on }
        if let on = try ServerConfiguration.flag(environment, "EASEL_SAVE_DATA") { saveData = on }
        for name in ["IMGPROXY_FALLBACK_IMAGE_PATH", "IMGPROXY_FALLBACK_IMAGE_URL", "EASEL_FALLBACK_IMAGE"] {
            if let text = environment[name], !text.isEmpty { fallbackImage = text }
        }
        for name in ["IMGPROXY_FALLBACK_IMAGE_HTTP_CODE", "EASEL_FALLBACK_STATUS"] {
            guard let text = environment[name] else { continue }
            guard let status = Int(text) else { throw .invalidValue(name: name, value: text) }
            fallbackStatus = status
        }
        if let text = environment["IMGPROXY_FALLBACK_IMAGE_TTL"] {
            guard let seconds = Int(text) else { throw .invalidValue(name: "IMGPROXY_FALLBACK_IMAGE_TTL", value: text) }
            fallbackMaxAge = seconds > 0 ? seconds : nil
        }
        if let text = environment["EASEL_CACHE_TAG_HEADER"] { cacheTagHeader = text }
    }

    func validate() throws(ServerConfigurationError) {
        for origin in corsAllowOrigins where origin != "*" {
            guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme.lowercased()), url.host != nil,
                  url.path.isEmpty || url.path == "/" else {
                throw .invalidValue(name: "delivery.corsAllowOrigins", value: "\(origin) (an origin: scheme://host[:port], or *)")
            }
        }
        guard corsMaxAge >= 0 else { throw .invalidValue(name: "delivery.corsMaxAge", value: "\(corsMaxAge)") }
        // A status that carries a body (not 204, 205 or 304).
        guard (200...599).contains(fallbackStatus), ![204, 205, 304].contains(fallbackStatus) else {
            throw .invalidValue(name: "delivery.fallbackStatus", value: "\(fallbackStatus) (200–599, one with a body)")
        }
        if let fallbackMaxAge, fallbackMaxAge < 0 { throw .invalidValue(name: "delivery.fallbackMaxAge", value: "\(fallbackMaxAge)") }
        guard cacheTagHeader.isEmpty || cacheTagHeader.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw .invalidValue(name: "delivery.cacheTagHeader", value: cacheTagHeader)
        }
        for endpoint in purgeByTag {
            guard let url = URL(string: endpoint.url.replacingOccurrences(of: "{tag}", with: "t")), let scheme = url.scheme,
                  ["http", "https"].contains(scheme.lowercased()), url.host != nil else {
                throw .invalidValue(name: "delivery.purgeByTag url", value: endpoint.url)
            }
            if let method = endpoint.method, method.isEmpty || !method.allSatisfy({ $0.isASCII && $0.isUppercase }) {
                throw .invalidValue(name: "delivery.purgeByTag method", value: "\(method) (an upper-case method: POST, PURGE…)")
            }
        }
    }

    /// Whether the tags are comma-separated in `cacheTagHeader` (Cloudflare's and Akamai's).
    var commaSeparatedTags: Bool { ["cache-tag", "edge-cache-tag"].contains(cacheTagHeader.lowercased()) }
}
