import EaselCodecs
import EaselStorage
import EaselTables
import Foundation

/// What to load, how to process it, how urgently, and how to use the caches.
///
/// ```swift
/// var request = ImageRequest(url: URL(string: "https://example.com/a.jpg")!, format: "thumb")
/// request.priority = .high
/// request.ignoredQueryItems = ["X-Amz-Signature", "X-Amz-Date"]   // signed URLs share one cache key
/// let response = try await pipeline.image(for: request)
/// ```
public struct ImageRequest: Sendable {
    /// Where the original comes from.
    public enum Source: Sendable {
        /// An http, https or file URL.
        case url(URL)
        /// An entity of the image tables: its `sourceImageURL(forFormat:)` is fetched, and table
        /// formats are stored under its entity and source IDs.
        case entity(any ImageEntity)
    }

    /// How the source becomes the delivered image.
    public enum Processing: Sendable {
        /// The source as decoded (upright, RGBA8).
        case original
        /// A named format of the pipeline (see `ImagePipeline.Configuration.formats`), decoded
        /// at the scale it needs; the other formats of its family that decode covers are made
        /// from it after the answer (`Configuration.familyInBackground`).
        case format(String)
        /// Ad-hoc processors run in order on the decoded source (e.g. `Resize`, `GaussianBlur`).
        case processors([any ImageProcessor])
    }

    /// Five levels; among equal priorities the most recently requested work starts first.
    public enum Priority: Int, Sendable, Comparable, CaseIterable {
        /// From lowest to highest; `normal` is the default and prefetches run at `low` at most.
        /// `veryLow` is background work (a family's formats after an answer): its decodes start
        /// only when nothing else runs or waits.
        case veryLow, low, normal, high, veryHigh
        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// How a request reads and fills the caches.
    public enum CachePolicy: Sendable, Hashable {
        /// Every tier, HTTP freshness respected (default).
        case useCache
        /// Skip every cache for reading, fetch from the origin, store the result.
        case reload
        /// Only the caches; a miss fails with `PipelineError.notCached`.
        case cacheOnly
        /// Read the caches, but store nothing this request produces.
        case noStore
    }

    /// Where the original comes from: a URL or an image-table entity.
    public var source: Source
    /// How the original becomes the delivered image.
    public var processing: Processing
    /// How urgently the request's work starts (`ImageTask.setPriority(_:)` changes it while the
    /// work waits). Default `.normal`.
    public var priority: Priority
    /// How the request reads and fills the caches. Default `.useCache`.
    public var cachePolicy: CachePolicy
    /// Replaces the key derived from the URL (for URLs that change while the image does not).
    public var cacheKey: String?
    /// Query items left out of the cache key (volatile parts of signed URLs). Names compare
    /// case-insensitively.
    public var ignoredQueryItems: Set<String>
    /// The bytes `ImagePipeline.encodedImage(for:)` delivers (JPEG quality 82 when nil); with
    /// `output` set, `ImagePipeline.answer(for:)` decides it instead.
    public var encoding: ImageEncoding?
    /// What the URL or the named format asked of the output, for the pipeline to decide the
    /// encoding with `client` (`ImagePipeline.answer(for:)`).
    public var output: OutputPolicy?
    /// What the client said it takes (its `Accept`).
    public var client: ClientPreferences?
    /// What the image is made with besides its source (watermarks, from
    /// `ImagePipeline.watermark(for:maxSide:admission:)`): a purge of any of their sources
    /// removes what was made with them from the memory tiers, and an encoded answer being made
    /// with them meanwhile is not kept. (A mark's identity is part of the processing's, so a
    /// replaced one makes new keys in every tier.)
    public var madeWith: [PreparedWatermark] = []
    /// The whole request — waiting, fetching, decoding, processing and encoding — fails with
    /// `.timedOut` once this has passed (nil: no limit beyond the fetcher's own).
    public var deadline: Duration?
    /// Limits of this request's own, tighter than the pipeline's (each limit the smaller of the
    /// two): checked from the source's header before anything is decoded, e.g. a side limit for
    /// watermark images. Nil: the pipeline's limits.
    public var sourceLimits: DecodingLimits?
    /// Which page of a document (PDF, TIFF) or frame of an animated GIF or WebP the image is made
    /// from, numbered from 0 (the default: the first page, and an animation kept as one where the
    /// answer keeps animations). Any other page is a still, with its own identity in every tier;
    /// a page the source does not have fails with `.decoding(.noSuchPage)`. (Named formats stored
    /// in image tables keep their first pages there; other pages live in the other tiers.)
    public var page = 0
    /// Made from a HEIC's or AVIF's embedded thumbnail instead of its primary image, when it has
    /// one (imgproxy's `enforce_thumbnail`); other sources ignore it. Its own identity in every
    /// tier, like a page.
    public var embeddedThumbnail = false
    /// False leaves the source's EXIF orientation unapplied (imgproxy's `auto_rotate:0`): the
    /// image is made from the pixels as stored. Its own identity in every tier, like a page.
    public var autoRotate = true
    /// The frame a video source's image is made from (the frame at 1 s by default; the first
    /// frame of a shorter video); other sources ignore it. Another position is its own identity
    /// in every tier, like a page.
    public var video = VideoPosition.default
    /// The image that answers in the source's place when the source is missing or cannot be
    /// decoded (`PipelineError.fallsBack`), made as the source would have been:
    /// `answer(for:)` then answers it, marked as a fallback (`EncodedResponse.fallbackFor`).
    public var fallback: FallbackSource?
    /// False for the bitmaps of `encodedImage(for:)`: their bytes are stored as served, so a
    /// bitmap variant on disk (another encoding) is neither read nor written for them.
    var usesDiskVariants = true
    /// A family format made in the background after another format's answer (its own family's
    /// remaining formats are then made from its decode, and no further decodes follow).
    var isFamilyFollowUp = false

    /// A request for `url`, processed as `processing` (default: the original as decoded).
    public init(url: URL, processing: Processing = .original, priority: Priority = .normal,
                cachePolicy: CachePolicy = .useCache, cacheKey: String? = nil, ignoredQueryItems: Set<String> = []) {
        self.init(source: .url(url), processing: processing, priority: priority, cachePolicy: cachePolicy,
                  cacheKey: cacheKey, ignoredQueryItems: ignoredQueryItems)
    }

    /// A request for the pipeline's named format `format` of the image at `url`.
    public init(url: URL, format: String, priority: Priority = .normal, cachePolicy: CachePolicy = .useCache) {
        self.init(source: .url(url), processing: .format(format), priority: priority, cachePolicy: cachePolicy)
    }

    /// A request for the named format `format` of an image-table entity (fetched from its
    /// `sourceImageURL(forFormat:)`).
    public init(entity: any ImageEntity, format: String, priority: Priority = .normal, cachePolicy: CachePolicy = .useCache) {
        self.init(source: .entity(entity), processing: .format(format), priority: priority, cachePolicy: cachePolicy)
    }

    /// A request with every part given: source, processing, priority, cache policy, a cache key
    /// replacing the URL's (nil: derived from the URL) and query items left out of that key.
    public init(source: Source, processing: Processing, priority: Priority = .normal, cachePolicy: CachePolicy = .useCache,
                cacheKey: String? = nil, ignoredQueryItems: Set<String> = []) {
        self.source = source
        self.processing = processing
        self.priority = priority
        self.cachePolicy = cachePolicy
        self.cacheKey = cacheKey
        self.ignoredQueryItems = ignoredQueryItems
    }

    /// The URL to fetch for this request's processing.
    public var url: URL? {
        switch source {
        case .url(let url): return url
        case .entity(let entity):
            if case .format(let name) = processing { return entity.sourceImageURL(forFormat: name) }
            return entity.sourceImageURL(forFormat: "")
        }
    }

    /// The key of the original: the override, or the URL without ignored query items and
    /// fragment (query items keep their order).
    public var sourceKey: String? {
        if let cacheKey { return cacheKey }
        guard let url else { return nil }
        guard !ignoredQueryItems.isEmpty || url.fragment != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.fragment = nil
        if !ignoredQueryItems.isEmpty, let items = components.queryItems {
            let ignored = Set(ignoredQueryItems.map { $0.lowercased() })
            let kept = items.filter { !ignored.contains($0.name.lowercased()) }
            components.queryItems = kept.isEmpty ? nil : kept
        }
        return components.url?.absoluteString ?? url.absoluteString
    }

}

/// An image that stands in for a request's source (`ImageRequest.fallback`): a URL, and the key
/// it is cached under (nil: made from the URL, as a source's is).
public struct FallbackSource: Sendable, Hashable {
    /// Where the image is read from (any URL the pipeline's fetchers take).
    public var url: URL
    /// The key it is cached under; nil: made from `url`, as a source's is.
    public var cacheKey: String?
    /// A fallback image at `url`, cached under `cacheKey` (nil: its URL's key).
    public init(url: URL, cacheKey: String? = nil) {
        self.url = url
        self.cacheKey = cacheKey
    }
}

/// Which tier answered a request.
public enum ImageTier: String, Sendable, Hashable, CaseIterable {
    /// The pipeline's memory cache of decoded images.
    case memory
    /// An image table (pre-decoded, zero-copy).
    case table
    /// The processed variant's encoded bytes in the disk cache.
    case diskVariant
    /// The original's bytes in the disk cache (then decoded and processed).
    case diskOriginal
    /// A remote fetcher (the origin), then decoded and processed.
    case network
    /// A local file (`FileFetcher`), then decoded and processed.
    case file
    /// Encoded bytes in the memory tier (`encodedImage(for:)` only).
    case encodedMemory
    /// Encoded bytes in the disk cache (`encodedImage(for:)` only).
    case encodedDisk
    /// Encoded bytes in a store after the disk cache (`Configuration.sharedStores`, e.g. one
    /// several machines share; `encodedImage(for:)` only).
    case encodedShared
}

/// A delivered image.
public struct ImageResponse: Sendable {
    /// The processed image, decoded.
    public var image: Bitmap
    /// The tier that answered.
    public var tier: ImageTier
    /// Size, type, orientation and EXIF basics of the original, when the original was read for
    /// this response (nil for memory, table and variant hits).
    public var sourceInfo: ImageInfo?
    /// When what was made from the original stops being fresh, when known.
    var freshUntil: Date?
    /// False when the original forbade storing (`no-store`): nothing made from it is kept.
    var storable = true

    init(image: Bitmap, tier: ImageTier, sourceInfo: ImageInfo?, freshUntil: Date? = nil, storable: Bool = true) {
        self.image = image
        self.tier = tier
        self.sourceInfo = sourceInfo
        self.freshUntil = freshUntil
        self.storable = storable
    }
}
