import EaselCodecs
import EaselPipeline
import EaselRemote
import EaselStorage
import Foundation

/// What `ImageServer.init` reads from its configuration, one concern each: presets, the files
/// it names, the origin, S3, the fetchers, the pipeline and imgproxy's settings.
extension ImageServer {
    /// imgproxy's presets, each parsed once: a preset the parser refuses would turn every URL
    /// that names it (every URL, for `default`) into a 400, so it is refused before anything
    /// starts, naming it.
    static func checkedPresets(_ configuration: ServerConfiguration) throws -> [String: [Substring]] {
        let presets = configuration.imgproxyPresets.mapValues { $0.split(separator: "/") }
        for (name, preset) in presets {
            var options = ImagePlan()
            do {
                try ImgproxyURL.apply(preset, to: &options, context: .init(presets: presets, separator: configuration.imgproxyArgumentsSeparator.first ?? ":",
                                                                            presetPath: [Substring(name)]))
            } catch {
                throw ServerConfigurationError.invalidValue(name: "imgproxyPresets[\(name)]", value: "\(error)")
            }
        }
        return presets
    }

    /// The configured watermark file, and the fallback image: a file (read like the configured
    /// watermark: that file only, besides the origin) or an http(s) URL (the allow-list applies
    /// when it is fetched). Files that cannot be read are refused, naming the setting.
    static func configuredFiles(_ configuration: ServerConfiguration) throws -> (mark: URL?, fallback: URL?, fallbackFile: URL?) {
        let markURL = configuration.watermark.map { URL(fileURLWithPath: $0).standardizedFileURL }
        if let markURL, !FileManager.default.isReadableFile(atPath: markURL.path) {
            throw ServerConfigurationError.invalidValue(name: "watermark", value: "\(markURL.path) (not a readable file)")
        }
        guard let text = configuration.delivery.fallbackImage else { return (markURL, nil, nil) }
        if let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil {
            return (markURL, url, nil)
        }
        let file = URL(fileURLWithPath: text).standardizedFileURL
        guard FileManager.default.isReadableFile(atPath: file.path) else {
            throw ServerConfigurationError.invalidValue(name: "delivery.fallbackImage", value: "\(file.path) (not a readable file)")
        }
        return (markURL, file, file)
    }

    /// The origin the configuration names: an `s3://` location, an http(s) URL, or a directory
    /// that exists (the bundled samples when none is named).
    static func origin(_ configuration: ServerConfiguration) throws -> Origin {
        let originText = configuration.origin ?? ImageServer.bundledSamples.path
        if originText.lowercased().hasPrefix("s3://") {
            do { return .s3(try S3Location(originText)) } catch { throw ServerConfigurationError.invalidValue(name: "origin", value: "\(error)") }
        }
        if let url = URL(string: originText), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil {
            return .http(url)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: originText, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ServerConfigurationError.originNotFound(originText)
        }
        return .directory(URL(fileURLWithPath: originText).standardizedFileURL)
    }

    /// The S3 client's settings (from `environment`) when the origin, the shared cache or the
    /// allow-list needs S3, and the shared cache's location.
    static func s3Settings(_ configuration: ServerConfiguration, origin: Origin,
                           environment: [String: String]) throws -> (S3Client.Configuration?, S3Location?) {
        let sharedLocation = try configuration.sharedCache.map { text throws(ServerConfigurationError) -> S3Location in
            do { return try S3Location(text) } catch { throw .invalidValue(name: "sharedCache", value: "\(error)") }
        }
        var needsS3 = sharedLocation != nil || configuration.allowHosts.contains { $0.lowercased().hasPrefix("s3://") }
        if case .s3 = origin { needsS3 = true }
        guard needsS3 else { return (nil, sharedLocation) }
        var settings: S3Client.Configuration
        do { settings = try .fromEnvironment(environment) } catch {
            throw ServerConfigurationError.invalidValue(name: "S3 settings", value: "\(error)")
        }
        settings.requestTimeout = .milliseconds(Int64(checked: configuration.downloadTimeout * 1000))
        return (settings, sharedLocation)
    }

    /// The file fetcher: the origin directory's, which also reads the configured files (the
    /// watermark, the fallback image); with another origin, one confined to those files; nil
    /// when there is neither.
    static func fileFetcher(_ configuration: ServerConfiguration, origin: Origin, files: [URL]) -> FileFetcher? {
        if case .directory(let root) = origin {
            return FileFetcher(root: root, maximumBytes: configuration.maxSourceBytes, alsoAllowing: files)
        }
        guard let first = files.first else { return nil }
        return FileFetcher(root: first.appendingPathComponent("only-this-file"), maximumBytes: configuration.maxSourceBytes, alsoAllowing: files)
    }

    /// The pipeline the server makes for itself: the HTTP fetcher (every URL checked by
    /// `policy`), the file origin's fetcher (and the configured mark's and fallback's files),
    /// S3's fetcher and the shared tier when configured, the cache directory's tiers.
    static func ownPipeline(_ configuration: ServerConfiguration, origin: Origin, files: (mark: URL?, fallback: URL?, fallbackFile: URL?),
                            policy: SourcePolicy, s3Settings: (S3Client.Configuration?, S3Location?), metrics: ServerMetrics,
                            relay: PurgeRelay?) throws -> (ImagePipeline, S3Client?, S3Store?) {
        let cacheDirectory = configuration.cacheDirectory.map { URL(fileURLWithPath: $0) }
            ?? DiskCache.defaultRootDirectory.appendingPathComponent("serve")
        let fetcher = HTTPFetcher(configuration: .init(
            deadline: .milliseconds(Int64(checked: configuration.downloadTimeout * 1000)), maximumBytes: configuration.maxSourceBytes,
            urlPolicy: { url throws(PipelineError) in try await policy.check(url) }))
        var fetchers: [any ImageFetcher] = [fetcher]
        if let files = Self.fileFetcher(configuration, origin: origin, files: [files.mark, files.fallbackFile].compactMap { $0 }) {
            fetchers.append(files)
        }
        var s3: S3Client?
        var sharedStore: S3Store?
        if let s3Configuration = s3Settings.0 {
            let client = S3Client(configuration: s3Configuration)
            s3 = client
            fetchers.append(S3Fetcher(client: client, maximumBytes: configuration.maxSourceBytes))
            sharedStore = s3Settings.1.map {
                S3Store(location: $0, client: client, readTimeout: .milliseconds(Int64(checked: configuration.sharedCacheTimeout * 1000)))
            }
        }
        let pipeline = try Self.pipeline(configuration, cacheDirectory: cacheDirectory, fetchers: fetchers, sharedStore: sharedStore, metrics: metrics,
                                         clients: (fetcher, s3, relay))
        return (pipeline, s3, sharedStore)
    }

    /// The pipeline the server answers from. The clients made before it are shut down if it
    /// cannot open (a table locked by another instance, say): an HTTP client dropped without it
    /// stops a debug build.
    static func pipeline(_ configuration: ServerConfiguration, cacheDirectory: URL, fetchers: [any ImageFetcher], sharedStore: S3Store?,
                         metrics: ServerMetrics, clients: (fetcher: HTTPFetcher, s3: S3Client?, relay: PurgeRelay?)) throws -> ImagePipeline {
        do {
            // No download rate limit (a client-side politeness default): a server's limits are
            // its concurrency, its queue and the origin allow-list.
            var settings = ImagePipeline.Configuration(
                formats: configuration.imageFormats, cacheDirectory: cacheDirectory.appendingPathComponent("pipeline"),
                fetchers: fetchers, downloadRate: nil)
            settings.memoryCostLimit = configuration.memoryLimit / 2
            settings.encodedMemoryCostLimit = configuration.memoryLimit / 2
            settings.diskByteLimit = configuration.diskLimit
            settings.maximumConcurrentDecodes = configuration.processingConcurrency
            settings.decodingLimits = DecodingLimits(maxPixels: configuration.maxSourcePixels, maxInputBytes: configuration.maxSourceBytes)
            settings.newestFirst = false  // a server serves in arrival order: nobody starves behind newer requests
            settings.sharedStores = sharedStore.map { [$0] } ?? []
            settings.familyInBackground = configuration.familyInBackground
            settings.metricsFactory = metrics.factory
            settings.offersJPEGXL = configuration.jpegXL
            settings.memoryBudget = configuration.effectiveMemoryBudget
            return try ImagePipeline(configuration: settings)
        } catch {
            Task.detached {
                try? await clients.fetcher.shutdown()
                try? await clients.s3?.shutdown()
                await clients.relay?.shutdown()
            }
            throw error
        }
    }

    /// How imgproxy URLs are read, from the configuration's `imgproxy` settings (presets
    /// already checked).
    static func imgproxySettings(_ configuration: ServerConfiguration, presets: [String: [Substring]]) -> ImgproxyURL.Settings {
        let imgproxy = configuration.imgproxy
        return ImgproxyURL.Settings(
            presets: presets, separator: configuration.imgproxyArgumentsSeparator.first ?? ":", baseURL: imgproxy.baseURL,
            replacements: (try? ImgproxyURL.URLReplacement.list(imgproxy.urlReplacements)) ?? [],  // validated by `validate()`
            base64IncludesFilename: imgproxy.base64URLIncludesFilename, onlyPresets: imgproxy.onlyPresets,
            allowedOptions: Set(imgproxy.allowedProcessingOptions), skipProcessing: Set(imgproxy.skipProcessingFormats.compactMap(ImgproxyURL.sourceType)),
            enforcedFormats: imgproxy.enforcedFormats, clientHints: imgproxy.enableClientHints, keepCopyright: imgproxy.keepCopyright,
            autoQuality: configuration.autoQuality.settings(), autoQualityByDefault: imgproxy.autoQualityByDefault,
            maxResultDimension: imgproxy.maxResultDimension, maxSide: configuration.maxAdHocSize, maxPixels: configuration.maxOutputPixels)
    }
}
