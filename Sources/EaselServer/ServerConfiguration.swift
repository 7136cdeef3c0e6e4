import EaselCodecs
import EaselPipeline
import EaselRemote
import EaselStorage
import EaselTables
import Foundation

/// Everything `easel serve` can be told, from a JSON file, the environment and flags (later ones
/// win). Every limit has a safe default.
///
/// ```json
/// { "port": 8080, "origin": "/srv/photos", "allowHosts": ["images.example.com"],
///   "signingKeys": ["9f3c…"], "signingSalt": "51a2…", "maxAge": 86400,
///   "formats": [{ "name": "thumb", "width": 256, "height": 256, "fit": "fit", "output": "jpeg", "quality": 82 }] }
/// ```
public struct ServerConfiguration: Sendable, Codable, Equatable {
    /// A named output format.
    public struct Format: Sendable, Codable, Equatable {
        /// The name URLs use (`/images/{name}/…`): unique, not empty, without `=` or `/`.
        public var name: String
        /// The width of the output box in pixels, 1 to `ServerConfiguration.largestSide`
        /// (width × height at most `maxOutputPixels`).
        public var width: Int
        /// The height of the output box in pixels, 1 to `ServerConfiguration.largestSide`
        /// (width × height at most `maxOutputPixels`).
        public var height: Int
        /// "fit" (inside the box), "fill" (cover and crop) or "exact".
        public var fit: String
        /// Formats of one family share a decode: a cold request's decode makes the family's other
        /// formats it covers after the answer (`familyInBackground`).
        public var family: String?
        /// Nil: negotiated (AVIF, then WebP, for clients that name them; JPEG otherwise).
        /// "jpeg" or "png": always that. "webp" or "avif": that for clients that take it, JPEG
        /// for others. "best": the smallest of the formats the client takes.
        public var output: String?
        /// Encoder quality, 1–100; nil: the pipeline's default (82).
        public var quality: Int?
        /// Entries the format's image table holds before it evicts the least recently used; nil:
        /// 512 MiB of RGBA pixels' worth at this size, between 100 and 10,000.
        public var maximumCount: Int?
        /// An unsharp mask after the resize, with this sigma (0.3–2 suits strong downscales;
        /// nil: none). Opt-in per format.
        public var sharpen: Double?
        /// Autoquality for this format's answers with this target distance (see
        /// `ServerConfiguration.autoQuality`); nil: `quality` as it is.
        public var qualityTarget: Double?

        /// Creates a format; the defaults are a `fit` box and no family. The rest start as
        /// negotiated output, the default quality and table size, no sharpening and no
        /// autoquality, and are set on the value.
        public init(name: String, width: Int, height: Int, fit: String = "fit", family: String? = nil) {
            self.name = name
            self.width = width
            self.height = height
            self.fit = fit
            self.family = family
        }
    }

    /// The address to listen on (JSON `host`, `EASEL_HOST`, `--host`). Default `127.0.0.1`.
    public var host: String = "127.0.0.1"
    /// The port to listen on, 0–65535; 0 takes any free port (JSON `port`, `EASEL_PORT`,
    /// `--port`). Default 8080.
    public var port: Int = 8080
    /// A directory, an http(s) base URL, or `s3://BUCKET/PREFIX/` (credentials from `AWS_*`,
    /// a custom endpoint from `EASEL_S3_ENDPOINT`). Default: the bundled `Samples/` directory.
    public var origin: String?
    /// A result tier shared by several servers: `s3://BUCKET/PREFIX/`. Encoded variants are
    /// read there before any fetch or decode and written there after they are made.
    public var sharedCache: String?
    /// Seconds a shared-cache read may take before the server does the work itself.
    public var sharedCacheTimeout: Double = 1
    /// Base URLs of the other instances (`http://10.0.0.2:8080`): a purge is relayed to each
    /// (with the admin token) before it is answered.
    public var peers: [String] = []
    /// URLs a purge also sends `BAN` to (a Varnish in front, see `docs/varnish.vcl`), naming the
    /// source's tag in `Surrogate-Key` (which answers carry: `DeliverySettings.cacheTagHeader`).
    public var cdnBanURLs: [String] = []
    /// Default: `$XDG_CACHE_HOME/easel/serve` (or `~/.cache/easel/serve`).
    public var cacheDirectory: String?
    /// Hosts that remote sources (`/images/thumb/https://host/a.jpg`) may come from: `host`
    /// (ports 80 and 443) or `host:port`. URLs under an http `origin` are always allowed.
    /// Loopback, private, link-local and metadata addresses are refused after DNS resolution
    /// unless the entry is that very address or `localhost` (a local origin in development).
    public var allowHosts: [String] = []
    /// The named formats served under `/images/{name}/…` (JSON `formats`); at least one. The
    /// gallery shows the first as thumbnails linking to the second (or the first again, when
    /// alone). Default: ``defaultFormats``.
    public var formats: [Format] = ServerConfiguration.defaultFormats
    /// Seconds in `Cache-Control: public, max-age=…`.
    public var maxAge: Int = 86_400
    /// Hex keys for HMAC-SHA256 URL signatures; several at once for rotation.
    public var signingKeys: [String] = []
    /// Hex salt prepended to the signed path.
    public var signingSalt: String = ""
    /// Also require signatures on named formats (ad-hoc sizes always need one, or `allowUnsignedAdHoc`).
    public var signNamedFormats: Bool = false
    /// Serve ad-hoc sizes without a signature (development only: anyone can make variants).
    public var allowUnsignedAdHoc: Bool = false
    /// Negotiate JPEG XL for clients that name `image/jxl` in `Accept` (off by default: few
    /// browsers take it, and its encoder is slow). A URL that pins it (`f=jxl`, `@jxl`) gets it
    /// either way.
    public var jpegXL: Bool = false
    /// Bearer token for `DELETE /images/…`; without one, purging is off.
    public var adminToken: String?
    /// Largest source image in pixels (width × height), checked from its header before
    /// decoding (JSON `maxSourcePixels`). Default 50 megapixels.
    public var maxSourcePixels: Int = 50_000_000
    /// Largest source in bytes, for downloads, files and S3 objects alike (JSON
    /// `maxSourceBytes`). Default 20 MB.
    public var maxSourceBytes: Int = 20_000_000
    /// Seconds for a whole source download.
    public var downloadTimeout: Double = 10
    /// Images processed at once; default: one per core.
    public var processingConcurrency: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Requests allowed to wait beyond those being processed; past it, 429 at once.
    public var maxQueue: Int = 64
    /// Seconds a request may take before it gets 504 (Gateway Timeout).
    public var requestTimeout: Double = 30
    /// Bytes of decoded and encoded images kept in memory.
    public var memoryLimit: Int = 256 << 20
    /// Bytes the decodes, processing and encodes under way may take together, by each
    /// request's estimate from its source's header (`MemoryEstimate`); requests past it wait
    /// their turn, and one whose estimate alone is over it is a 422 naming it. 0: no budget.
    /// Nil (the default): a quarter of the machine's memory, and never less than one decode of
    /// `maxSourcePixels` at full size, so that the default refuses nothing the limits let in
    /// (`effectiveMemoryBudget`).
    public var memoryBudget: Int?

    /// The budget the pipeline gets: `memoryBudget`, its default when nil, none for 0.
    public var effectiveMemoryBudget: Int? {
        switch memoryBudget {
        case .none:
            let quarter = Int(clamping: ProcessInfo.processInfo.physicalMemory / 4)
            let fullDecode = MemoryEstimate.peakBytes(pixels: maxSourcePixels)
            return max(256 << 20, quarter, fullDecode)
        case .some(let bytes): return bytes > 0 ? bytes : nil
        }
    }
    /// Bytes of the ready-answer index for the warm path (per request: the variant's key and the
    /// header fields its answer went out with; the bodies are the memory tier's): 0 turns ready
    /// answers off.
    public var readyAnswerLimit: Int = 64 << 20
    /// Bytes on disk (originals and variants; tables come on top, sized by the formats).
    public var diskLimit: Int = 2 << 30
    /// Largest ad-hoc width or height (at most `ServerConfiguration.largestSide`).
    public var maxAdHocSize: Int = 2048
    /// Largest output in pixels (width × height), for named formats and ad-hoc sizes alike: it
    /// bounds the memory one request can take whatever the sides.
    public var maxOutputPixels: Int = 16_777_216
    /// Seconds a connection may stay without a complete request: keep-alive idlers and
    /// clients that send their headers slowly (slowloris) are closed after it.
    public var idleTimeout: Double = 30
    /// Open connections at most; past it the oldest idle connection is closed to make room.
    /// The server also keeps 256 file descriptors below its `RLIMIT_NOFILE` for its own files.
    public var maxConnections: Int = 10_000
    /// Whether `GET /` shows the gallery (otherwise 404).
    public var gallery: Bool = true
    /// Images per gallery page (`/?page=N`).
    public var galleryPageSize: Int = 100
    /// imgproxy-compatible URLs (`/imgproxy/…`): key/salt pairs (hex), as imgproxy's
    /// `IMGPROXY_KEY`/`IMGPROXY_SALT` (or `IMGPROXY_KEYS`/`IMGPROXY_SALTS`); the first signs.
    public var imgproxyKeys: [String] = []
    /// The hex salts paired, in order, with `imgproxyKeys` (as many as keys; JSON `imgproxySalts`,
    /// `IMGPROXY_SALTS` comma-separated or `IMGPROXY_SALT`).
    public var imgproxySalts: [String] = []
    /// imgproxy presets: name → options (`"thumb": "rs:fill:200:200/q:75"`); `default` applies
    /// to every imgproxy URL.
    public var imgproxyPresets: [String: String] = [:]
    /// The character between an imgproxy option's name and its arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`):
    /// `:` by default; one character, not `/`.
    public var imgproxyArgumentsSeparator = ":"
    /// CORS, Client Hints, Save-Data, the fallback image and cache tags: JSON `delivery`.
    public var delivery = DeliverySettings()
    /// Autoquality's defaults (`q=auto`, imgproxy's `autoquality`, a format's `qualityTarget`):
    /// JSON `autoQuality` `{"target": 0.004, "minQuality": 30, "maxQuality": 95}`,
    /// `EASEL_AUTOQUALITY_TARGET`.
    public var autoQuality = AutoQualityConfiguration()
    /// The rest of imgproxy's URL settings (base URL, replacements, allowed options, skipped and
    /// enforced formats, Client Hints): JSON `imgproxy`, or imgproxy's variables.
    public var imgproxy = ImgproxySettings()
    /// thumbor-compatible URLs (`/thumbor/…`): thumbor's `SECURITY_KEY` (text, not hex).
    public var thumborSecurityKey: String?
    /// The watermark image of imgproxy's `watermark` option: a file path.
    public var watermark: String?
    /// After a named format's answer, make the other formats of its family that its decode
    /// covers, in the background (true), or each format only when asked for (false).
    public var familyInBackground: Bool = true
    /// One log line per answer (info: method, path, route, status, bytes, duration, tier,
    /// request ID, trace ID when tracing; see `AccessLog`). On by default, as imgproxy's is;
    /// `--no-access-log`, `EASEL_ACCESS_LOG=0` or JSON `"accessLog": false` turn it off.
    public var accessLog: Bool = true
    /// Where SVG and PDF documents render, and each render worker's limits.
    public var renderWorkers = RenderWorkerSettings()

    /// A configuration with every default.
    public init() {}

    /// The configured secrets, which no log line may show (`RedactingLogHandler`): the admin
    /// token, signing keys and salts of every URL style.
    public var secrets: [String] {
        [adminToken, signingSalt, thumborSecurityKey].compactMap { $0 } + signingKeys + imgproxyKeys + imgproxySalts
    }

    /// The largest width or height any output may have.
    public static let largestSide = 8192

    /// The formats served when none are configured: `thumb` (fit 256×256), `small` (fit
    /// 512×512) and `square` (fill 256×256), all of family `default`.
    public static let defaultFormats: [Format] = [
        Format(name: "thumb", width: 256, height: 256, fit: "fit", family: "default"),
        Format(name: "small", width: 512, height: 512, fit: "fit", family: "default"),
        Format(name: "square", width: 256, height: 256, fit: "fill", family: "default"),
    ]

    enum CodingKeys: String, CodingKey {
        case host, port, origin, sharedCache, sharedCacheTimeout, peers, cdnBanURLs, cacheDirectory, allowHosts, formats, maxAge, signingKeys, signingSalt, signNamedFormats
        case allowUnsignedAdHoc, jpegXL, adminToken, maxSourcePixels, maxSourceBytes, downloadTimeout, processingConcurrency
        case maxQueue, requestTimeout, memoryLimit, memoryBudget, readyAnswerLimit, diskLimit, maxAdHocSize, maxOutputPixels, idleTimeout, maxConnections
        case gallery, galleryPageSize, imgproxyKeys, imgproxySalts, imgproxyPresets, imgproxyArgumentsSeparator, imgproxy, autoQuality, delivery, thumborSecurityKey, watermark
        case familyInBackground, accessLog, renderWorkers
    }

    /// Every key is optional: a file may set only what it changes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T { try container.decodeIfPresent(T.self, forKey: key) ?? fallback }
        let defaults = ServerConfiguration()
        host = try value(.host, defaults.host)
        port = try value(.port, defaults.port)
        origin = try container.decodeIfPresent(String.self, forKey: .origin)
        sharedCache = try container.decodeIfPresent(String.self, forKey: .sharedCache)
        sharedCacheTimeout = try value(.sharedCacheTimeout, defaults.sharedCacheTimeout)
        peers = try value(.peers, defaults.peers)
        cdnBanURLs = try value(.cdnBanURLs, defaults.cdnBanURLs)
        cacheDirectory = try container.decodeIfPresent(String.self, forKey: .cacheDirectory)
        allowHosts = try value(.allowHosts, defaults.allowHosts)
        formats = try value(.formats, defaults.formats)
        maxAge = try value(.maxAge, defaults.maxAge)
        signingKeys = try value(.signingKeys, defaults.signingKeys)
        signingSalt = try value(.signingSalt, defaults.signingSalt)
        signNamedFormats = try value(.signNamedFormats, defaults.signNamedFormats)
        allowUnsignedAdHoc = try value(.allowUnsignedAdHoc, defaults.allowUnsignedAdHoc)
        jpegXL = try value(.jpegXL, defaults.jpegXL)
        adminToken = try container.decodeIfPresent(String.self, forKey: .adminToken)
        maxSourcePixels = try value(.maxSourcePixels, defaults.maxSourcePixels)
        maxSourceBytes = try value(.maxSourceBytes, defaults.maxSourceBytes)
        downloadTimeout = try value(.downloadTimeout, defaults.downloadTimeout)
        processingConcurrency = try value(.processingConcurrency, defaults.processingConcurrency)
        maxQueue = try value(.maxQueue, defaults.maxQueue)
        requestTimeout = try value(.requestTimeout, defaults.requestTimeout)
        memoryLimit = try value(.memoryLimit, defaults.memoryLimit)
        memoryBudget = try value(.memoryBudget, defaults.memoryBudget)
        readyAnswerLimit = try value(.readyAnswerLimit, defaults.readyAnswerLimit)
        diskLimit = try value(.diskLimit, defaults.diskLimit)
        maxAdHocSize = try value(.maxAdHocSize, defaults.maxAdHocSize)
        maxOutputPixels = try value(.maxOutputPixels, defaults.maxOutputPixels)
        idleTimeout = try value(.idleTimeout, defaults.idleTimeout)
        maxConnections = try value(.maxConnections, defaults.maxConnections)
        gallery = try value(.gallery, defaults.gallery)
        galleryPageSize = try value(.galleryPageSize, defaults.galleryPageSize)
        imgproxyKeys = try value(.imgproxyKeys, defaults.imgproxyKeys)
        imgproxySalts = try value(.imgproxySalts, defaults.imgproxySalts)
        imgproxyPresets = try value(.imgproxyPresets, defaults.imgproxyPresets)
        imgproxyArgumentsSeparator = try value(.imgproxyArgumentsSeparator, defaults.imgproxyArgumentsSeparator)
        imgproxy = try value(.imgproxy, defaults.imgproxy)
        autoQuality = try value(.autoQuality, defaults.autoQuality)
        delivery = try value(.delivery, defaults.delivery)
        thumborSecurityKey = try container.decodeIfPresent(String.self, forKey: .thumborSecurityKey)
        watermark = try container.decodeIfPresent(String.self, forKey: .watermark)
        familyInBackground = try value(.familyInBackground, defaults.familyInBackground)
        accessLog = try value(.accessLog, defaults.accessLog)
        renderWorkers = try value(.renderWorkers, defaults.renderWorkers)
    }

    /// Reads a JSON configuration file.
    public static func load(file: String) throws(ServerConfigurationError) -> ServerConfiguration {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
            throw .unreadable(file: file, reason: error.localizedDescription)
        }
        do { return try JSONDecoder().decode(ServerConfiguration.self, from: data) } catch {
            throw .invalid(file: file, reason: "\(error)")
        }
    }

    /// Applies `EASEL_HOST`, `EASEL_PORT`, `EASEL_ORIGIN`, `EASEL_SHARED_CACHE`, `EASEL_PEERS`
    /// (comma-separated), `EASEL_CDN_BAN_URLS` (comma-separated), `EASEL_CACHE_DIR`,
    /// `EASEL_ALLOW_HOSTS` (comma-separated), `EASEL_SIGNING_KEYS` (comma-separated),
    /// `EASEL_SIGNING_SALT`, `EASEL_ADMIN_TOKEN`, `EASEL_ACCESS_LOG` and `EASEL_JPEG_XL` (1/true/0/false); and imgproxy's and thumbor's own:
    /// `IMGPROXY_KEY`, `IMGPROXY_SALT` (or the comma-separated `IMGPROXY_KEYS`,
    /// `IMGPROXY_SALTS`), `IMGPROXY_PRESETS`, `IMGPROXY_WATERMARK_PATH`, `IMGPROXY_ARGUMENTS_SEPARATOR`,
    /// those `ImgproxySettings.apply(environment:)` reads, and `THUMBOR_SECURITY_KEY`.
    public mutating func apply(environment: [String: String]) throws(ServerConfigurationError) {
        if let host = environment["EASEL_HOST"] { self.host = host }
        if let port = environment["EASEL_PORT"] {
            guard let number = Int(port) else { throw .invalidValue(name: "EASEL_PORT", value: port) }
            self.port = number
        }
        if let origin = environment["EASEL_ORIGIN"] { self.origin = origin }
        if let shared = environment["EASEL_SHARED_CACHE"] { sharedCache = shared.isEmpty ? nil : shared }
        if let peers = environment["EASEL_PEERS"] { self.peers = Self.list(peers) }
        if let urls = environment["EASEL_CDN_BAN_URLS"] { cdnBanURLs = Self.list(urls) }
        if let directory = environment["EASEL_CACHE_DIR"] { cacheDirectory = directory }
        if let hosts = environment["EASEL_ALLOW_HOSTS"] { allowHosts = hosts.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        if let keys = environment["EASEL_SIGNING_KEYS"] { signingKeys = keys.split(separator: ",").map(String.init) }
        if let salt = environment["EASEL_SIGNING_SALT"] { signingSalt = salt }
        if let token = environment["EASEL_ADMIN_TOKEN"] { adminToken = token }
        if let on = try Self.flag(environment, "EASEL_ACCESS_LOG") { accessLog = on }
        if let text = environment["EASEL_MEMORY_BUDGET"] {
            guard let bytes = Self.byteCount(text) else { throw .invalidValue(name: "EASEL_MEMORY_BUDGET", value: text) }
            memoryBudget = bytes
        }
        if let on = try Self.flag(environment, "EASEL_JPEG_XL") { jpegXL = on }
        // imgproxy's "JPEG XL for clients that name it" is this server's JPEG XL negotiation.
        let autoJXL = try Self.flag(environment, "IMGPROXY_AUTO_JXL"), enforceJXL = try Self.flag(environment, "IMGPROXY_ENFORCE_JXL")
        if autoJXL == true || enforceJXL == true { jpegXL = true }
        if let keys = environment["IMGPROXY_KEYS"] ?? environment["IMGPROXY_KEY"] { imgproxyKeys = Self.list(keys) }
        if let salts = environment["IMGPROXY_SALTS"] ?? environment["IMGPROXY_SALT"] { imgproxySalts = Self.list(salts) }
        if let presets = environment["IMGPROXY_PRESETS"] {
            for (name, options) in ImgproxyURL.presets(presets) { imgproxyPresets[name] = options.joined(separator: "/") }
        }
        if let path = environment["IMGPROXY_WATERMARK_PATH"] { watermark = path.isEmpty ? nil : path }
        if let separator = environment["IMGPROXY_ARGUMENTS_SEPARATOR"] { imgproxyArgumentsSeparator = separator }
        try imgproxy.apply(environment: environment)
        try delivery.apply(environment: environment)
        try renderWorkers.apply(environment: environment)
        for name in ["IMGPROXY_AUTOQUALITY_TARGET", "EASEL_AUTOQUALITY_TARGET"] {
            guard let text = environment[name] else { continue }
            guard let target = Double(text) else { throw .invalidValue(name: name, value: text) }
            autoQuality.target = target
        }
        for (name, path) in [("IMGPROXY_AUTOQUALITY_MIN", \AutoQualityConfiguration.minQuality), ("IMGPROXY_AUTOQUALITY_MAX", \.maxQuality)] {
            guard let text = environment[name] else { continue }
            guard let quality = Int(text) else { throw .invalidValue(name: name, value: text) }
            autoQuality[keyPath: path] = quality
        }
        if let key = environment["THUMBOR_SECURITY_KEY"] { thumborSecurityKey = key.isEmpty ? nil : key }
    }

    /// A byte count: a whole number, optionally with `K`, `M` or `G` (powers of 1024; `KB`,
    /// `MiB`… read the same), or nil.
    public static func byteCount(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let number = Int(digits) else { return nil }
        let shift: Int
        switch trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).uppercased() {
        case "", "B": shift = 0
        case "K", "KB", "KIB": shift = 10
        case "M", "MB", "MIB": shift = 20
        case "G", "GB", "GIB": shift = 30
        default: return nil
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: 1 << shift)
        return overflow ? nil : bytes
    }

    /// A yes/no variable (1/true/t/yes/on, 0/false/f/no/off or empty), nil when unset.
    static func flag(_ environment: [String: String], _ name: String) throws(ServerConfigurationError) -> Bool? {
        guard let text = environment[name] else { return nil }
        switch text.lowercased() {
        case "1", "true", "yes", "on", "t": return true
        case "0", "false", "no", "off", "f", "": return false
        default: throw .invalidValue(name: name, value: text)
        }
    }

    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Checks every value; a bad one is an error naming it.
    public func validate() throws(ServerConfigurationError) {
        if let sharedCache, (try? S3Location(sharedCache)) == nil {
            throw .invalidValue(name: "sharedCache", value: "\(sharedCache) (use s3://BUCKET/PREFIX/)")
        }
        guard sharedCacheTimeout > 0 else { throw .invalidValue(name: "sharedCacheTimeout", value: "\(sharedCacheTimeout)") }
        for url in peers + cdnBanURLs {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  parsed.host != nil else {
                throw .invalidValue(name: "peer or CDN URL", value: url)
            }
        }
        if !peers.isEmpty, adminToken == nil { throw .invalidValue(name: "peers", value: "relaying purges needs an admin token") }
        guard (0...65_535).contains(port) else { throw .invalidValue(name: "port", value: "\(port)") }
        guard imgproxyArgumentsSeparator.count == 1, imgproxyArgumentsSeparator != "/" else {
            throw .invalidValue(name: "imgproxyArgumentsSeparator", value: "\(imgproxyArgumentsSeparator) (one character, not /)")
        }
        try imgproxy.validate()
        try autoQuality.validate(name: "autoQuality")
        try delivery.validate()
        try renderWorkers.validate()
        if !cdnBanURLs.isEmpty, delivery.cacheTagHeader.lowercased() != "surrogate-key" {
            throw .invalidValue(name: "delivery.cacheTagHeader", value: "\(delivery.cacheTagHeader) (the BANs of cdnBanURLs match Surrogate-Key)")
        }
        guard !formats.isEmpty else { throw .invalidValue(name: "formats", value: "[]") }
        var names = Set<String>()
        for format in formats {
            guard names.insert(format.name).inserted else { throw .invalidValue(name: "formats", value: "two formats named \(format.name)") }
            guard !format.name.isEmpty, !format.name.contains("="), !format.name.contains("/") else {
                throw .invalidValue(name: "format name", value: format.name)
            }
            guard (1...Self.largestSide).contains(format.width), (1...Self.largestSide).contains(format.height),
                  format.width * format.height <= maxOutputPixels else {
                throw .invalidValue(name: "format \(format.name) size", value: "\(format.width)x\(format.height)")
            }
            guard ResizeMode(rawValue: format.fit) != nil else { throw .invalidValue(name: "format \(format.name) fit", value: format.fit) }
            if let target = format.qualityTarget, !(target > 0 && target <= 1) {
                throw .invalidValue(name: "format \(format.name) qualityTarget", value: "\(target) (above 0, at most 1)")
            }
            guard format.output == nil || format.output == "best" || ImageEncoding.Format(name: format.output!) != nil else {
                throw .invalidValue(name: "format \(format.name) output", value: format.output!)
            }
            if let sharpen = format.sharpen, !(sharpen > 0 && sharpen <= 10) {
                throw .invalidValue(name: "format \(format.name) sharpen", value: "\(sharpen) (above 0, at most 10)")
            }
            if let quality = format.quality, !(1...100).contains(quality) {
                throw .invalidValue(name: "format \(format.name) quality", value: "\(quality)")
            }
        }
        for key in signingKeys where Data(hex: key) == nil || key.isEmpty { throw .invalidValue(name: "signing key", value: "(not hex)") }
        guard imgproxyKeys.count == imgproxySalts.count, imgproxyKeys.allSatisfy({ !$0.isEmpty && Data(hex: $0) != nil }),
              imgproxySalts.allSatisfy({ Data(hex: $0) != nil }) else {
            throw .invalidValue(name: "imgproxy keys and salts", value: "(pairs of hex strings, keys not empty, as many keys as salts)")
        }
        if let thumborSecurityKey, thumborSecurityKey.isEmpty {
            throw .invalidValue(name: "thumborSecurityKey", value: "(empty)")
        }
        if let adminToken, adminToken.count < 16 { throw .invalidValue(name: "admin token", value: "(shorter than 16 characters)") }
        guard signingSalt.isEmpty || Data(hex: signingSalt) != nil else { throw .invalidValue(name: "signing salt", value: "(not hex)") }
        guard maxSourcePixels > 0, maxSourceBytes > 0, downloadTimeout > 0, processingConcurrency > 0, maxQueue >= 0,
              requestTimeout > 0, memoryLimit >= 0, (memoryBudget ?? 0) >= 0, readyAnswerLimit >= 0, diskLimit > 0, maxAdHocSize > 0, maxOutputPixels > 0, idleTimeout > 0,
              maxConnections > 0, galleryPageSize > 0 else {
            throw .invalidValue(name: "limits", value: "every limit must be positive")
        }
        guard maxAdHocSize <= Self.largestSide else {
            throw .invalidValue(name: "maxAdHocSize", value: "\(maxAdHocSize) (at most \(Self.largestSide))")
        }
        guard maxOutputPixels <= Self.largestSide * Self.largestSide else {
            throw .invalidValue(name: "maxOutputPixels", value: "\(maxOutputPixels) (at most \(Self.largestSide * Self.largestSide))")
        }
    }

    /// The pipeline formats (stored in image tables).
    var imageFormats: [ImageFormat] {
        formats.map { format in
            var made = ImageFormat(name: format.name, family: format.family, width: format.width, height: format.height,
                                   fit: ResizeMode(rawValue: format.fit) ?? .fit,
                                   maximumCount: format.maximumCount ?? max(100, min(10_000, (512 << 20) / (format.width * format.height * 4))))
            // (`validate()` refused a sigma out of range before any format is made.)
            made.processors = format.sharpen.flatMap { try? Sharpen(sigma: $0) }.map { [$0] } ?? []
            return made
        }
    }
}

/// Autoquality's defaults in a configuration (`ServerConfiguration.autoQuality`).
public struct AutoQualityConfiguration: Sendable, Codable, Equatable {
    /// The most perceptual distance an answer may have (`PerceptualDistance`): above 0, at
    /// most 1. Default `AutoQuality.defaultTarget`.
    public var target = AutoQuality.defaultTarget
    /// The lowest quality searched, 1–100. Default 30.
    public var minQuality = 30
    /// The highest quality searched (and the answer's when none meets the target), 1–100, at
    /// least `minQuality`. Default 95.
    public var maxQuality = 95

    /// The defaults.
    public init() {}

    /// Every key is optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        target = try container.decodeIfPresent(Double.self, forKey: .target) ?? AutoQuality.defaultTarget
        minQuality = try container.decodeIfPresent(Int.self, forKey: .minQuality) ?? 30
        maxQuality = try container.decodeIfPresent(Int.self, forKey: .maxQuality) ?? 95
    }

    /// These settings with another target (a URL's or a format's own).
    public func settings(target: Double? = nil) -> AutoQuality {
        AutoQuality(target: target ?? self.target, minQuality: minQuality, maxQuality: maxQuality)
    }

    func validate(name: String) throws(ServerConfigurationError) {
        guard target > 0, target <= 1, (1...100).contains(minQuality), (minQuality...100).contains(maxQuality) else {
            throw .invalidValue(name: name, value: "target \(target), qualities \(minQuality)–\(maxQuality) (a target above 0 and at most 1; 1 ≤ minQuality ≤ maxQuality ≤ 100)")
        }
    }
}

/// Why a configuration could not be loaded or used; `description` is the message shown.
public enum ServerConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration file could not be read (missing, not permitted).
    case unreadable(file: String, reason: String)
    /// The configuration file is not JSON of a ``ServerConfiguration``.
    case invalid(file: String, reason: String)
    /// A setting (a JSON key, an environment variable) has a value out of its range or form.
    case invalidValue(name: String, value: String)
    /// The origin is neither an existing directory, an http(s) URL nor an `s3://` location.
    case originNotFound(String)

    public var description: String {
        switch self {
        case .unreadable(let file, let reason): "cannot read \(file): \(reason)"
        case .invalid(let file, let reason): "\(file) is not a valid configuration: \(reason)"
        case .invalidValue(let name, let value): "invalid \(name): \(value)"
        case .originNotFound(let origin): "origin \(origin) is neither a directory, an http(s) URL nor an s3:// location"
        }
    }
}

extension Data {
    /// Bytes from a hex string, or nil.
    init?(hex: String) {
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
