/// One setting of `easel serve`, as the configuration reference (`docs/configuration.md`, made
/// by `easel settings`) lists it: where it is set — a JSON key of
/// ``ServerConfiguration`` (a path for nested objects), environment variables, a flag — and what
/// it does. Defaults are read from a default ``ServerConfiguration`` itself, so they cannot
/// drift from the code; a test fails when a property, a variable the sources read or a flag of
/// `easel serve` has no entry.
public struct ConfigurationSetting: Sendable, Equatable {
    /// The JSON key path (`delivery.corsAllowOrigins`, `formats[].width`); nil for a variable or
    /// flag without one.
    public let key: String?
    /// Environment variables that set it, ours before the peer's.
    public let variables: [String]
    /// The `easel serve` flag that sets it, with its leading dashes.
    public let flag: String?
    /// What it does, with its range.
    public let meaning: String
    /// The default in words, where the value alone would mislead (it depends on the machine,
    /// or has no JSON key); nil: the default configuration's value.
    public let defaultInWords: String?

    init(_ key: String?, variables: [String] = [], flag: String? = nil, default defaultInWords: String? = nil, _ meaning: String) {
        self.key = key
        self.variables = variables
        self.flag = flag
        self.meaning = meaning
        self.defaultInWords = defaultInWords
    }
}

/// A group of settings, one table of the reference.
public struct ConfigurationSection: Sendable {
    /// The table's title.
    public let title: String
    /// Its settings, in the order shown.
    public let settings: [ConfigurationSetting]
}

extension ServerConfiguration {
    /// Every setting of `easel serve`, by topic.
    public static let reference: [ConfigurationSection] = [
        ConfigurationSection(title: "Listening, origin and caches", settings: [
            .init("host", variables: ["EASEL_HOST"], flag: "--host", "The address to listen on."),
            .init("port", variables: ["EASEL_PORT"], flag: "--port", "The port, 0–65535; 0 takes any free port."),
            .init("origin", variables: ["EASEL_ORIGIN"], flag: "--origin", default: "the bundled `Samples/`",
                  "Where sources come from: a directory, an http(s) base URL or `s3://BUCKET/PREFIX/`."),
            .init("cacheDirectory", variables: ["EASEL_CACHE_DIR"], flag: "--cache-dir", default: "`$XDG_CACHE_HOME/easel/serve`, else `~/.cache/easel/serve`",
                  "The disk cache (originals, variants, image tables)."),
            .init("diskLimit", "Bytes on disk for originals and variants; image tables come on top, sized by the formats."),
            .init("memoryLimit", "Bytes of decoded and encoded images kept in memory."),
            .init("readyAnswerLimit", "Bytes of the ready-answer index (the warm path's replays); 0 turns ready answers off."),
            .init("maxAge", "Seconds in `Cache-Control: public, max-age=…`."),
            .init("gallery", "Whether `GET /` shows the gallery (otherwise 404)."),
            .init("galleryPageSize", "Images per gallery page (`/?page=N`)."),
            .init("familyInBackground", "After a named format's answer, make the other formats of its family that its decode covers, in the background."),
        ]),
        ConfigurationSection(title: "Named formats (`formats`, each an object)", settings: [
            .init("formats", default: "`thumb` (fit 256×256), `small` (fit 512×512), `square` (fill 256×256), family `default`",
                  "The formats served under `/images/{name}/…`; at least one. The gallery shows the first, linking to the second."),
            .init("formats[].name", default: "(required)", "The name URLs use: unique, not empty, without `=` or `/`."),
            .init("formats[].width", default: "(required)", "The box's width, 1–8192 (width × height at most `maxOutputPixels`)."),
            .init("formats[].height", default: "(required)", "The box's height, 1–8192."),
            .init("formats[].fit", default: "`fit`", "`fit` (inside the box), `fill` (cover and crop) or `exact`."),
            .init("formats[].family", default: "none", "Formats of one family share a decode (see `familyInBackground`)."),
            .init("formats[].output", default: "negotiated", "`jpeg`, `png`, `webp`, `avif`, `jxl`, `heic` or `best`; none: AVIF, then WebP, for clients that name them, JPEG otherwise."),
            .init("formats[].quality", default: "82", "Encoder quality, 1–100."),
            .init("formats[].maximumCount", default: "512 MiB of RGBA pixels at this size, 100–10,000", "Entries the format's image table holds before it evicts the least recently used."),
            .init("formats[].sharpen", default: "none", "An unsharp mask after the resize with this sigma (above 0, at most 10)."),
            .init("formats[].qualityTarget", default: "none", "Autoquality for this format's answers with this target distance (above 0, at most 1)."),
        ]),
        ConfigurationSection(title: "Sources and limits", settings: [
            .init("allowHosts", variables: ["EASEL_ALLOW_HOSTS"], flag: "--allow-host",
                  "Hosts remote sources may come from (`host` or `host:port`); private and loopback addresses are refused after DNS unless named."),
            .init("maxSourcePixels", "The largest source in pixels, checked from its header before decoding."),
            .init("maxSourceBytes", "The largest source in bytes (downloads, files and S3 objects)."),
            .init("downloadTimeout", "Seconds for a whole source download."),
            .init("processingConcurrency", default: "one per core", "Images decoded, processed and encoded at once."),
            .init("memoryBudget", variables: ["EASEL_MEMORY_BUDGET"], flag: "--memory-budget", default: "a quarter of the machine's memory, never less than one full-size decode of `maxSourcePixels`",
                  "Bytes the decodes, processing and encodes under way may take together, by each request's estimate from its source's header; past it requests wait their turn, and one over it alone is a 422 naming it. 0: no budget. In bytes; the flag and the variable also read `300M`, `2G`."),
            .init("maxQueue", "Requests allowed to wait beyond those being processed; past it, 429 at once."),
            .init("requestTimeout", "Seconds a request may take before it gets 504."),
            .init("maxAdHocSize", "The largest ad-hoc width or height (at most 8192)."),
            .init("maxOutputPixels", "The largest output in pixels, for every style and format."),
            .init("idleTimeout", "Seconds a connection may stay without a complete request (keep-alive idlers, slowloris)."),
            .init("maxConnections", "Open connections at most; past it the oldest idle one is closed."),
            .init("jpegXL", variables: ["EASEL_JPEG_XL", "IMGPROXY_AUTO_JXL"], flag: "--jpeg-xl",
                  "Negotiate JPEG XL for clients that name `image/jxl` in `Accept` (a URL that pins it gets it either way)."),
        ]),
        ConfigurationSection(title: "Signatures and purges", settings: [
            .init("signingKeys", variables: ["EASEL_SIGNING_KEYS"], "Hex HMAC-SHA256 keys for native URL signatures, comma-separated in the variable; several at once for rotation."),
            .init("signingSalt", variables: ["EASEL_SIGNING_SALT"], "Hex salt put before the signed path."),
            .init("signNamedFormats", "Also require signatures on named formats (ad-hoc sizes always need one)."),
            .init("allowUnsignedAdHoc", flag: "--allow-unsigned-ad-hoc", "Serve ad-hoc sizes without a signature (development only)."),
            .init("adminToken", variables: ["EASEL_ADMIN_TOKEN"], "The bearer token of `DELETE /images/…` (at least 16 characters); none: purging is off."),
        ]),
        ConfigurationSection(title: "Several instances and CDNs", settings: [
            .init("sharedCache", variables: ["EASEL_SHARED_CACHE"], flag: "--shared-cache", "A result tier shared by every instance: `s3://BUCKET/PREFIX/`."),
            .init("sharedCacheTimeout", "Seconds a shared-tier read may take before the server does the work itself."),
            .init("peers", variables: ["EASEL_PEERS"], flag: "--peer", "Base URLs of the other instances a purge is relayed to (needs `adminToken`)."),
            .init("cdnBanURLs", variables: ["EASEL_CDN_BAN_URLS"], flag: "--cdn-ban-url", "Varnish instances a purge sends `BAN` to (see `docs/varnish.vcl`)."),
            .init(nil, variables: ["EASEL_S3_ENDPOINT"], default: "AWS", "An S3-compatible endpoint (path-style) for S3 origins and the shared tier."),
            .init(nil, variables: ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"], default: "none", "S3 credentials."),
            .init(nil, variables: ["AWS_REGION", "AWS_DEFAULT_REGION"], default: "`us-east-1`", "The S3 region."),
        ]),
        ConfigurationSection(title: "Delivery (`delivery`)", settings: [
            .init("delivery.corsAllowOrigins", variables: ["EASEL_CORS_ALLOW_ORIGIN"], "Origins a browser may read answers from: `*`, or those named; none: no CORS headers."),
            .init("delivery.corsMaxAge", "Seconds a browser may keep a preflight's answer."),
            .init("delivery.acceptClientHints", variables: ["EASEL_ACCEPT_CH"], "The gallery asks for Client Hints, which native `w=auto` and `dpr=auto` read."),
            .init("delivery.saveData", variables: ["EASEL_SAVE_DATA"], "`Save-Data: on` lowers the quality (answers then vary on `Save-Data`)."),
            .init("delivery.fallbackImage", variables: ["EASEL_FALLBACK_IMAGE", "IMGPROXY_FALLBACK_IMAGE_PATH", "IMGPROXY_FALLBACK_IMAGE_URL"],
                  "Answered, processed as the source would be, when a source is missing or cannot be decoded: a file or an http(s) URL."),
            .init("delivery.fallbackStatus", variables: ["EASEL_FALLBACK_STATUS", "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE"], "The status of a fallback answer."),
            .init("delivery.fallbackMaxAge", variables: ["IMGPROXY_FALLBACK_IMAGE_TTL"], default: "`maxAge`", "Seconds caches may keep a fallback answer."),
            .init("delivery.cacheTagHeader", variables: ["EASEL_CACHE_TAG_HEADER"], "The header answers name their cache tags in (`Surrogate-Key`, `Cache-Tag`, `Edge-Cache-Tag`…); empty: none."),
            .init("delivery.purgeByTag", "CDN purge-by-tag endpoints a purge calls: objects of `url`, `method`, `headers`, `body`, where `{tag}` is the tag."),
        ]),
        ConfigurationSection(title: "imgproxy URLs (`/imgproxy/…`)", settings: [
            .init("imgproxyKeys", variables: ["IMGPROXY_KEYS", "IMGPROXY_KEY"], "Hex signing keys, paired in order with the salts; the first signs."),
            .init("imgproxySalts", variables: ["IMGPROXY_SALTS", "IMGPROXY_SALT"], "Hex salts, as many as keys."),
            .init("imgproxyPresets", variables: ["IMGPROXY_PRESETS"], "Presets: name → options (`thumb: rs:fill:200:200/q:75`); `default` applies to every URL."),
            .init("imgproxyArgumentsSeparator", variables: ["IMGPROXY_ARGUMENTS_SEPARATOR"], "The character between an option's name and its arguments: one character, not `/`."),
            .init("watermark", variables: ["IMGPROXY_WATERMARK_PATH"], "The watermark image of the `watermark` option: a file path."),
            .init("imgproxy.baseURL", variables: ["IMGPROXY_BASE_URL"], "Put before every source URL that does not start with it."),
            .init("imgproxy.urlReplacements", variables: ["IMGPROXY_URL_REPLACEMENTS"], "Rewrites of source URLs: `pattern=replacement` pairs separated by `;`."),
            .init("imgproxy.base64URLIncludesFilename", variables: ["IMGPROXY_BASE64_URL_INCLUDES_FILENAME"], "A base64 source may be followed by `/{file name}`, ignored."),
            .init("imgproxy.onlyPresets", variables: ["IMGPROXY_ONLY_PRESETS"], "URLs name presets only."),
            .init("imgproxy.allowedProcessingOptions", variables: ["IMGPROXY_ALLOWED_PROCESSING_OPTIONS"], "When not empty, the only option names a URL may use (others: 403)."),
            .init("imgproxy.skipProcessingFormats", variables: ["IMGPROXY_SKIP_PROCESSING_FORMATS"], "Source types answered unprocessed when the answer would be in their type."),
            .init("imgproxy.enforceWebP", variables: ["IMGPROXY_ENFORCE_WEBP"], "WebP over the URL's format for clients that take it."),
            .init("imgproxy.enforceAVIF", variables: ["IMGPROXY_ENFORCE_AVIF"], "AVIF over the URL's format for clients that take it."),
            .init("imgproxy.enforceJXL", variables: ["IMGPROXY_ENFORCE_JXL"], "JPEG XL over the URL's format for clients that take it (the variable also turns `jpegXL` on)."),
            .init("imgproxy.enableClientHints", variables: ["IMGPROXY_ENABLE_CLIENT_HINTS"], "`Sec-CH-DPR`/`DPR` and `Sec-CH-Width`/`Width` set a URL's DPR and width where it names none."),
            .init("imgproxy.keepCopyright", variables: ["IMGPROXY_KEEP_COPYRIGHT"], "Answers keep the source's EXIF Artist and Copyright (imgproxy keeps them by default)."),
            .init("imgproxy.autoQualityByDefault", variables: ["IMGPROXY_AUTOQUALITY_METHOD"], "Every imgproxy URL is autoquality unless it says `aq:none` (the variable: `dssim` or `none`)."),
            .init("imgproxy.maxResultDimension", variables: ["IMGPROXY_MAX_RESULT_DIMENSION"], "Every answer scaled down to at most this many pixels a side; 0: no limit."),
        ]),
        ConfigurationSection(title: "thumbor URLs (`/thumbor/…`)", settings: [
            .init("thumborSecurityKey", variables: ["THUMBOR_SECURITY_KEY"], default: "none: thumbor URLs refused (`/unsafe/` ones only with `allowUnsignedAdHoc`)",
                  "thumbor's `SECURITY_KEY` (text, not hex) for signed thumbor URLs."),
        ]),
        ConfigurationSection(title: "Autoquality (`autoQuality`)", settings: [
            .init("autoQuality.target", variables: ["EASEL_AUTOQUALITY_TARGET", "IMGPROXY_AUTOQUALITY_TARGET"], "The most perceptual distance an answer may have: above 0, at most 1."),
            .init("autoQuality.minQuality", variables: ["IMGPROXY_AUTOQUALITY_MIN"], "The lowest quality searched, 1–100."),
            .init("autoQuality.maxQuality", variables: ["IMGPROXY_AUTOQUALITY_MAX"], "The highest quality searched (and the answer's when none meets the target)."),
        ]),
        ConfigurationSection(title: "SVG and PDF render workers (`renderWorkers`)", settings: [
            .init("renderWorkers.enabled", variables: ["EASEL_RENDER_WORKERS"], "Render in worker processes (a hostile document costs one request); off: in the server's own process, for trusted documents only."),
            .init("renderWorkers.memoryLimitMB", variables: ["EASEL_RENDER_MEMORY_MB"], "The address space of each worker in MiB, 64–65,536."),
            .init("renderWorkers.cpuSeconds", variables: ["EASEL_RENDER_CPU_SECONDS"], "CPU seconds one render may use, 1–3,600."),
            .init("renderWorkers.jobsPerWorker", "Renders a worker makes before it is replaced, 1–100,000."),
        ]),
        ConfigurationSection(title: "Logs and traces", settings: [
            .init("accessLog", variables: ["EASEL_ACCESS_LOG"], flag: "--access-log",
                  "One `info` line per answer: method, path, route, status, bytes, duration, tier, request ID, trace ID. `--no-access-log` or `0` turns it off."),
            .init(nil, variables: ["EASEL_LOG_FORMAT"], flag: "--log-format", default: "`text`", "`text`, or `json`: one JSON object a line on standard output and standard error."),
            .init(nil, variables: ["EASEL_TRACES", "OTEL_TRACES_EXPORTER"], flag: "--traces", default: "`none`", "`otlp` sends a trace of every answer over OTLP/HTTP."),
            .init(nil, variables: ["EASEL_OTLP_ENDPOINT"], flag: "--otlp-endpoint", default: "none",
                  "Where traces go (the full OTLP/HTTP traces URL); turns traces on unless `--traces none`."),
            .init(nil, variables: ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"], default: "`http://localhost:4318`",
                  "Where traces go when `--otlp-endpoint` and `EASEL_OTLP_ENDPOINT` are not set (read by swift-otel; they do not turn traces on)."),
            .init(nil, variables: ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"], default: "none; `parentbased_always_on`",
                  "Header fields sent with every export, and the sampler, as the OpenTelemetry specification says (read by swift-otel)."),
            .init(nil, variables: ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"], default: "`http/protobuf`", "`http/protobuf` or `http/json` (`grpc` is refused)."),
            .init(nil, variables: ["OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"], default: "`easel`", "The service name traces carry."),
            .init(nil, variables: ["OTEL_SDK_DISABLED"], default: "`false`", "`true` keeps traces off whatever asked for them."),
        ]),
        ConfigurationSection(title: "The file, and switches for measurements", settings: [
            .init(nil, flag: "--config", default: "none", "A JSON file of these keys; every key optional. The environment overrides it, flags override both (list flags add)."),
            .init(nil, variables: ["EASEL_JPEG_DC_ONLY"], default: "on", "`0`: no DC-only JPEG decode for 1/8 scale (side-by-side measurements)."),
            .init(nil, variables: ["EASEL_PNG_FAST"], default: "on", "`0`: PNG through libspng only, without the fast path (ISA-L's inflate and SSE unfiltering)."),
            .init(nil, variables: ["EASEL_RESAMPLE"], default: "automatic", "`float`: resample in floating point only."),
            .init(nil, variables: ["EASEL_FACE_STEP"], default: "1.2", "The scale step between face sizes the detector tries."),
            .init(nil, variables: ["EASEL_HAAR_DIR"], default: "OpenCV's data directory", "Where the face detector's Haar cascades are read from."),
        ]),
    ]

    /// The reference as Markdown: one table per section, defaults from a default configuration.
    public static func referenceMarkdown() -> String {
        let defaults = ServerConfiguration()
        var text = """
        # Configuration reference

        Every setting of `easel serve`. Settings come from a JSON file (`--config FILE`; every key is
        optional), then the environment, then flags: each overrides the one before (a flag that
        may repeat adds to the list). A bad value stops the server at start, naming it.

        Generated from the code (`ServerConfiguration.reference`, defaults read from a default
        configuration) by `make configuration-reference`; a test fails when it is stale, or when a
        setting, a variable the sources read or a flag of `easel serve` is missing from it.

        """
        for section in reference {
            text += "\n## \(section.title)\n\n| Key | Variables | Flag | Default | Meaning |\n|---|---|---|---|---|\n"
            for setting in section.settings {
                let key = setting.key.map { "`\($0)`" } ?? ""
                let variables = setting.variables.map { "`\($0)`" }.joined(separator: ", ")
                let flag = setting.flag.map { "`\($0)`" } ?? ""
                let value = setting.defaultInWords ?? setting.key.flatMap { defaults.defaultDescription(at: $0) } ?? ""
                text += "| \(key) | \(variables) | \(flag) | \(value) | \(setting.meaning) |\n"
            }
        }
        return text
    }

    /// The value at a JSON key path (`delivery.corsMaxAge`) of this configuration, in words.
    func defaultDescription(at path: String) -> String? {
        var subject: Any = self
        for label in path.split(separator: ".") {
            guard let child = Mirror(reflecting: subject).children.first(where: { $0.label == String(label) }) else { return nil }
            subject = child.value
        }
        return Self.words(subject, bytes: path.hasSuffix("Limit"))
    }

    /// `86400` as `86,400`.
    static func grouped(_ number: Int) -> String {
        var digits = String(number.magnitude), groups: [Substring] = []
        while digits.count > 3 {
            groups.insert(digits.suffix(3), at: 0)
            digits.removeLast(3)
        }
        return (number < 0 ? "-" : "") + ([Substring(digits)] + groups).joined(separator: ",")
    }

    /// `value` in words; a number of `bytes` in MiB or GiB when it is a whole number of them.
    static func words(_ value: Any, bytes: Bool = false) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional { return mirror.children.first.map { words($0.value, bytes: bytes) } ?? "none" }
        switch value {
        case let flag as Bool: return flag ? "on" : "off"
        case let text as String: return text.isEmpty ? "empty" : "`\(text)`"
        case let number as Int:
            if bytes, number >= 1 << 20, number % (1 << 20) == 0 {
                return number % (1 << 30) == 0 ? "\(number >> 30) GiB" : "\(number >> 20) MiB"
            }
            return number >= 10_000 ? grouped(number) : String(number)
        case let number as Double: return number == number.rounded() ? String(Int(number)) : String(number)
        case let list as [String]: return list.isEmpty ? "none" : list.map { "`\($0)`" }.joined(separator: ", ")
        case let dictionary as [String: String]: return dictionary.isEmpty ? "none" : "\(dictionary.count) entries"
        default:
            if mirror.displayStyle == .collection { return mirror.children.isEmpty ? "none" : "\(mirror.children.count) entries" }
            return "\(value)"
        }
    }
}
