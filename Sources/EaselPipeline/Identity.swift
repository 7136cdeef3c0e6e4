import EaselSupport
import EaselCodecs
import Foundation

// Every key Easel files an image under is derived here, from one value per request: the
// identity of its source, its processing (the plan, with every parameter that decides its
// pixels) and its encoding. The tiers' keys (decoded and encoded memory, disk variants, the data
// stores), the shared-work keys, the purge index's entries (the memory keys) and the server's
// ready answers (which hold `VariantKey.memory`) are never spelt out anywhere else.

/// What a request makes, as one value: its source, its processing and its encoding. Two requests
/// with equal identities get the same bytes, whichever URL style, the CLI or Swift code made
/// them; `ImagePipeline.identity(for:)` builds it once per request.
public struct ImageIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The source's key (`ImageRequest.sourceKey`: the URL, or the caller's own key).
    public let source: String
    /// What decides the pixels besides the source: a named format with every parameter that
    /// decides them (`format:thumb=…`), the processors' identifier (`processors:…`) or
    /// `original`, then a page, an embedded thumbnail, the request's own limits and a video
    /// position where they are not the defaults.
    public let processing: String
    /// The encoding of the answer (JPEG at 82 for a request without one).
    public let encoding: ImageEncoding

    /// The decoded bitmap's keys.
    var bitmap: BitmapKey { BitmapKey(source: source, processing: processing) }
    /// The encoded answer's keys.
    public var variant: VariantKey { VariantKey(source: source, identity: encoding.description + "|" + processing) }

    /// The encoding, the processing and the source, joined by `|`.
    public var description: String { encoding.description + "|" + processing + "|" + source }
}

extension ImagePipeline {
    /// The identity of what `answer(for:)` makes for `request` (`ImageIdentity`: its encoding as
    /// its output policy decides for its client); nil without a source or for an unknown format
    /// name.
    public func identity(for request: ImageRequest) -> ImageIdentity? {
        guard let source = request.sourceKey else { return nil }
        return identity(for: decided(request).request, sourceKey: source)
    }

    /// The identity with a source key the caller already has (an entity may name another source
    /// per format).
    func identity(for request: ImageRequest, sourceKey: String) -> ImageIdentity? {
        processingIdentity(request.processing, suffix: request.variantSuffix)
            .map { ImageIdentity(source: sourceKey, processing: $0, encoding: request.encoding ?? ImageEncoding(.jpeg)) }
    }

    /// What decides a variant's pixels besides its source: a named format with every parameter
    /// that decides them (nil for an unknown format), the processors' identifier, or "original".
    func processingIdentity(_ processing: ImageRequest.Processing, suffix: String) -> String? {
        let identity = switch processing {
        case .format(let name): formatIdentifiers[name]
        case .original: "original"
        case .processors(let processors): "processors:" + processors.identifier
        }
        return identity.map { $0 + suffix }
    }

    /// The bitmap variant's keys for `request` (nil for an unknown format): the identity's
    /// bitmap part, which no encoding decides.
    func bitmapKey(for request: ImageRequest, sourceKey: String) -> BitmapKey? {
        processingIdentity(request.processing, suffix: request.variantSuffix).map { BitmapKey(source: sourceKey, processing: $0) }
    }

    /// The bitmap keys of a named format of the source (a family member), with `suffix` (none:
    /// tables and families hold only variants without one).
    func familyBitmapKey(_ formatName: String, sourceKey: String, suffix: String = "") -> BitmapKey? {
        processingIdentity(.format(formatName), suffix: suffix).map { BitmapKey(source: sourceKey, processing: $0) }
    }

    /// The encoded answer's keys for `request` (its encoding, else JPEG at 82): built once per
    /// request. Nil for an unknown format.
    func variantKey(for request: ImageRequest, sourceKey: String) -> VariantKey? {
        identity(for: request, sourceKey: sourceKey)?.variant
    }
}

extension ImageRequest {
    /// Names the request's image among those a decode made (a processing without its format's
    /// parameters, and the suffix).
    var processingIdentifier: String {
        let processing = switch processing {
        case .original: "original"
        case .format(let name): "format:" + name
        case .processors(let processors): "processors:" + processors.identifier
        }
        return processing + variantSuffix
    }

    /// What a page other than the first, an embedded thumbnail, an orientation left unapplied,
    /// limits of the request's own and a video position add to a processing's identity ("" for
    /// none, so the keys of every other request are as they were): a request whose limits refuse its source never gets what
    /// another request made of it. Image tables and a format's family hold only variants
    /// without one.
    var variantSuffix: String {
        (page == 0 ? "" : "|page:\(page)") + (embeddedThumbnail ? "|thumbnail" : "") + (autoRotate ? "" : "|stored-orientation")
            + (sourceLimits.map { "|limits:\($0)" } ?? "") + (video == .default ? "" : "|video:\(video)")
    }
}

/// A bitmap variant's keys: its source and its processing. The decoded memory tier's keys and
/// the disk variant's key derive from it.
struct BitmapKey: Sendable, Hashable {
    /// The source's key (`ImageRequest.sourceKey`).
    let source: String
    /// `ImageIdentity.processing`.
    let processing: String

    /// The decoded memory tier's key (and the purge index's entry).
    var memory: String { processing + "|" + source }
    /// The decoded memory tier's key of a bitmap decoded from the disk variant (another
    /// encoding, possibly lossy): its own, so that an encoded answer never starts from one.
    var memoryFromVariant: String { processing + "|" + source + "|from-variant" }
    /// The disk cache's key of the variant (under the source's prefix).
    var disk: String { StoreKey.variant(processing, source: source) }
}

/// An encoded answer's keys: its source and what decides its bytes besides the source (the
/// encoding, and the processing).
public struct VariantKey: Sendable, Hashable {
    /// The source's key (`ImageRequest.sourceKey`).
    public let source: String
    /// Encoding and processing ("webp-q80|format:thumb=…").
    public let identity: String
    /// The encoded memory tier's key (the purge index's entry, and what the server's ready
    /// answers hold).
    public let memory: String
    /// The data stores' key (under the source's prefix, so a purge removes it with the source);
    /// made when asked (a memory hit never needs it).
    public var store: String { StoreKey.encoded(identity, source: source) }

    init(source: String, identity: String) {
        self.source = source
        self.identity = identity
        memory = "encoded|" + identity + "|" + source
    }
}

/// Keys in the data stores (the disk cache, shared tiers) begin with their source, so a
/// source's original, variants and encoded answers are one key range
/// (`DataStore.removeValues(withKeyPrefix:)`, a purge): "<UTF-8 length of the source>:<source>|"
/// then the kind. The length keeps one source's prefix from being the start of another's
/// ("3:a.j|…" is not a prefix of "4:a.jp|…").
enum StoreKey {
    static func prefix(_ source: String) -> String { String(source.utf8.count) + ":" + source + "|" }
    static func original(_ source: String) -> String { prefix(source) + "original" }
    static func variant(_ processing: String, source: String) -> String { prefix(source) + "variant|" + processing }
    static func encoded(_ identity: String, source: String) -> String { prefix(source) + "encoded|" + identity }
    /// Present when a decode found the source to be an animation (it outlives the memory tiers,
    /// so WebP answers made later from a memory or table bitmap still know).
    static func animated(_ source: String) -> String { prefix(source) + "animated" }
}

/// The identity of a piece of shared work: requests whose work has equal keys share one run.
struct WorkKey: Hashable, Sendable {
    /// What the work makes: a variant's memory key (an encode), a bitmap's memory key (a
    /// decode) or the source key (a fetch).
    var identity: String
    /// Requests under different cache policies never share work.
    var policy: ImageRequest.CachePolicy
    /// The purge mark of the source when the work began: requests after a purge never join work
    /// that began before it (see `PurgeMarks`).
    var mark: PurgeMarks.Mark
    /// Whatever else changes the result (a decode's limits, its frames, whether it may start
    /// from a disk variant); empty for most work.
    var variant: String = ""

    /// A fetch of the source's original.
    static func fetch(source: String, policy: ImageRequest.CachePolicy, mark: PurgeMarks.Mark) -> WorkKey {
        WorkKey(identity: source, policy: policy, mark: mark)
    }

    /// A decode and its processing: the bitmap, and whether it may start from a disk variant,
    /// the request's limits (every field) and the animation's encoding when it keeps frames.
    static func decode(_ bitmap: BitmapKey, request: ImageRequest, mark: PurgeMarks.Mark, frames: ImageEncoding?) -> WorkKey {
        WorkKey(identity: bitmap.memory, policy: request.cachePolicy, mark: mark,
                variant: (request.usesDiskVariants ? "" : "encoded")
                    + (request.sourceLimits.map { "|limits:\($0)" } ?? "")
                    + (frames.map { "|frames:" + $0.description } ?? ""))
    }

    /// An encode: the answer, and the purge marks of its source and of its watermarks' sources
    /// (requests after a purge of either never join work that began before it).
    static func encode(_ variant: VariantKey, policy: ImageRequest.CachePolicy, mark: PurgeMarks.Mark,
                       madeWith: [PurgeMarks.Mark]) -> WorkKey {
        WorkKey(identity: variant.memory, policy: policy, mark: mark, variant: madeWith.map(\.suffix).joined())
    }
}
