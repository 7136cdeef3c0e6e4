import EaselSupport
import EaselCodecs
import EaselStorage
import Foundation
import NIOCore

/// The bytes a request asks for: an image format and its quality.
///
/// ```swift
/// var request = ImageRequest(url: url, format: "thumb")
/// request.encoding = ImageEncoding(.webp, quality: 80)
/// let answer = try await pipeline.encodedImage(for: request)
/// send(answer.encoded.bytes, type: answer.encoded.contentType, etag: answer.encoded.etag)
/// ```
public struct ImageEncoding: Sendable, Hashable, CustomStringConvertible {
    /// An output file format; the raw value is its lowercase name (`jpeg`, not `jpg`).
    public enum Format: String, Sendable, CaseIterable {
        /// JPEG (lossy, no alpha), WebP, AVIF and JPEG XL (lossy, with alpha), PNG (lossless),
        /// GIF (a palette of 256 colours a frame; animations kept), ICO (a PNG in an icon, at
        /// most 256 pixels a side: favicons), BMP (uncompressed), or SVG: an SVG source itself,
        /// cleaned (`SVGSanitizer`; no processing applies, as imgproxy serves SVG as SVG), or HEIC
        /// (HEVC; only when asked for: browsers do not name it in `Accept`).
        case jpeg, png, webp, avif, jxl, gif, ico, bmp, svg, heic

        /// The type of bytes it writes.
        public var fileType: ImageFileType {
            switch self {
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            case .jxl: .jxl
            case .gif: .gif
            case .ico: .ico
            case .bmp: .bmp
            case .svg: .svg
            case .heic: .heic
            }
        }

        /// The output format of bytes of `type`, or nil when Easel does not write it.
        public init?(_ type: ImageFileType) {
            guard let format = Self.allCases.first(where: { $0.fileType == type }) else { return nil }
            self = format
        }

        /// The output format a URL, a configuration or the CLI names (`jpg`, `heif`…; every
        /// name `FormatRegistry` gives it), or nil.
        public init?(name: some StringProtocol) {
            guard let type = ImageFileType(name: name) else { return nil }
            self.init(type)
        }

        /// The names of every output format, for messages ("jpeg, png, webp…").
        public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

        /// The format's MIME type (`image/jpeg`, `image/png`, `image/webp`, `image/avif`,
        /// `image/jxl`, `image/gif`, `image/x-icon`, `image/bmp`, `image/svg+xml`, `image/heic`).
        public var contentType: String { fileType.mimeType }

        /// The extension of files in it (`jpg`, `png`…).
        public var fileExtension: String { fileType.entry.fileExtension }

        /// Whether the format has a quality setting (JPEG, WebP, AVIF, JPEG XL, HEIC); the others'
        /// cache keys carry none.
        public var hasQuality: Bool { fileType.entry.capabilities.contains(.quality) }
    }

    /// The output for a client: a pinned format as it is (`.png`, `.jpeg`), else the format the
    /// client rates highest — AVIF and WebP only when named explicitly (wildcards do not count:
    /// a client that says `image/*` may not decode every new format), JPEG by any range that
    /// covers it, and always possible as the fallback — with ties going to AVIF, then WebP, then
    /// JPEG. `pinned` `.webp`, `.avif` or `.jxl` means "that format when the client takes it";
    /// another pinned format is what every client gets.
    /// - Parameters:
    ///   - pinned: the format the request asked for, if any.
    ///   - offersJPEGXL: negotiate JPEG XL like AVIF (named explicitly), ahead of it on ties;
    ///     otherwise it goes only to a request that pins it.
    ///   - quality: the q-value the client gives a MIME type; `explicitly` false counts
    ///     wildcards (`image/*`, `*/*`), true only the type named itself (0 when absent).
    public static func negotiate(pinned: Format?, offersJPEGXL: Bool = false, quality: (_ type: String, _ explicitly: Bool) -> Double) -> Format {
        switch pinned {
        case .png: return .png
        case .jpeg: return .jpeg
        case .ico: return .ico
        case .bmp: return .bmp
        case .svg: return .svg
        case .heic: return .heic
        case .gif: return .gif
        case .avif: return quality(Format.avif.contentType, true) > 0 ? .avif : .jpeg
        case .webp: return quality(Format.webp.contentType, true) > 0 ? .webp : .jpeg
        case .jxl: return quality(Format.jxl.contentType, true) > 0 ? .jxl : .jpeg
        case nil:
            let avif = quality(Format.avif.contentType, true), webp = quality(Format.webp.contentType, true)
            let jpeg = quality(Format.jpeg.contentType, false)
            let jxl = offersJPEGXL ? quality(Format.jxl.contentType, true) : 0
            if jxl > 0, jxl >= avif, jxl >= webp, jxl >= jpeg { return .jxl }
            if avif > 0, avif >= webp, avif >= jpeg { return .avif }
            if webp > 0, webp >= jpeg { return .webp }
            return .jpeg
        }
    }

    /// Whether the answer for `pinned` depends on `Accept` (then `Vary: Accept`).
    public static func variesWithAccept(pinned: Format?) -> Bool {
        pinned == nil || pinned == .webp || pinned == .avif || pinned == .jxl
    }

    /// AVIF's quality scale is its own: it is given the JPEG-scale quality minus 20 (82 → 62),
    /// which imgproxy's defaults also follow (JPEG 80, AVIF 65 there).
    public static func avifQuality(forJPEGQuality quality: Int) -> Int { max(1, quality - 20) }

    /// The file format the bytes are written in.
    public let format: Format
    /// 1–100 for JPEG, WebP and AVIF; PNG is lossless and ignores it.
    public let quality: Int
    /// WebP of an animated GIF or WebP source: every frame, each processed (true, the default),
    /// or the first frame only.
    public let keepsAnimation: Bool
    /// For other formats: an animated source is answered as animated WebP at this quality
    /// instead (a client that takes AVIF and WebP gets its GIF animations as WebP, not as a
    /// still AVIF); nil keeps the first frame in `format`.
    public let animationAsWebP: Int?
    /// For formats other than WebP and GIF, without `animationAsWebP`: an animated source is
    /// answered as an animated GIF (a client that takes GIF but not WebP).
    public let animationAsGIF: Bool
    /// At most this many bytes (formats with a quality: the quality is lowered until the bytes
    /// fit, the least quality's bytes when none does; thumbor's and imgproxy's `max_bytes`); nil:
    /// no bound. Stills only: an animation keeps its quality.
    public let maxBytes: Int?
    /// The source's EXIF Artist and Copyright are written into the answer (JPEG, PNG and WebP
    /// stills; `RightsMetadata`): imgproxy's `keep_copyright`. Other formats carry none.
    public let keepsRights: Bool
    /// Identifies the encoding in cache keys (made once: every cache lookup uses it).
    public let description: String

    /// The lowest quality whose answer stays within a perceptual distance of the bitmap, found
    /// per answer (`AutoQuality`); nil: `quality` as it is.
    public let autoQuality: AutoQuality?
    /// Best format: each of these formats is made (each at `autoQuality` when set, else at
    /// `quality` on its own scale) and the smallest answer wins; empty: `format` only. JPEG is
    /// left out for an image with transparent pixels (PNG then takes its place).
    public let bestOf: [Format]
    /// The answer is in the source's own format where Easel writes it and browsers show it
    /// (JPEG, PNG, GIF and WebP, animations whole; AVIF and HEIC), else in `format`: thumbor's
    /// rule for a URL that names no format. Resolved once the source is known
    /// (`resolved(forSource:)`); the cache key says "source", the record the format made.
    public let keepsSourceFormat: Bool

    /// What an animated source's answer is in an encoding (see `keepsAnimation`,
    /// `animationAsWebP`, `animationAsGIF`).
    public struct Animations: Sendable, Hashable {
        /// WebP answers keep every frame (the default); other formats ignore it.
        public var keep: Bool
        /// Animations are answered as animated WebP at this quality instead of the first frame.
        public var asWebP: Int?
        /// Animations are answered as GIF instead of the first frame.
        public var asGIF: Bool

        /// Animations as the encoding's format makes them (frames kept in WebP, else the first
        /// frame), or as WebP or GIF.
        public init(keep: Bool = true, asWebP: Int? = nil, asGIF: Bool = false) {
            self.keep = keep
            self.asWebP = asWebP
            self.asGIF = asGIF
        }
    }

    /// Creates an encoding of `format`; `quality` and `animations.asWebP` are clamped to 1–100,
    /// `animations.keep` only applies to WebP, `asWebP` to other formats but SVG, and `asGIF` to
    /// formats other than WebP, GIF and SVG without `asWebP`. `autoQuality` applies to formats
    /// with a quality; `bestOf` (formats with a quality, and PNG) makes the answer the smallest
    /// of them, `format` then being the fallback for animations' alternatives.
    public init(_ format: Format, quality: Int = 82, animations: Animations = .init(), maxBytes: Int? = nil, keepsRights: Bool = false,
                autoQuality: AutoQuality? = nil, bestOf: [Format] = []) {
        self.init(format, quality: quality, animations: animations, maxBytes: maxBytes, keepsRights: keepsRights, autoQuality: autoQuality,
                  bestOf: bestOf, keepsSourceFormat: false)
    }

    /// An encoding in the source's own format (`keepsSourceFormat`), `fallback` for a source in
    /// another; `quality` on JPEG's scale (AVIF's own derived from it).
    /// With `animations.asWebP`, an animated source is answered as animated WebP at that
    /// quality (thumbor's `gifv`), stills in their own format.
    public static func sourceFormat(fallback: Format = .jpeg, quality: Int = 82, animations: Animations = .init(), maxBytes: Int? = nil,
                                    keepsRights: Bool = false, autoQuality: AutoQuality? = nil) -> ImageEncoding {
        ImageEncoding(fallback, quality: quality, animations: animations, maxBytes: maxBytes, keepsRights: keepsRights, autoQuality: autoQuality,
                      bestOf: [], keepsSourceFormat: true)
    }

    /// The format a source of `type` keeps under `keepsSourceFormat`, or nil (the fallback).
    public static func keptFormat(ofSource type: ImageFileType) -> Format? {
        switch type {
        case .jpeg: .jpeg
        case .png: .png
        case .gif: .gif
        case .webp: .webp
        case .avif: .avif
        case .heic: .heic
        default: nil
        }
    }

    /// This encoding for a source of `type`: for one that keeps the source's format, that format
    /// (its animations whole) or the fallback; any other encoding as it is.
    public func resolved(forSource type: ImageFileType) -> ImageEncoding {
        guard keepsSourceFormat else { return self }
        let kept = Self.keptFormat(ofSource: type) ?? format
        return ImageEncoding(kept, quality: kept == .avif ? Self.avifQuality(forJPEGQuality: quality) : quality,
                             animations: .init(asWebP: animationAsWebP), maxBytes: maxBytes, keepsRights: keepsRights, autoQuality: autoQuality)
    }

    private init(_ format: Format, quality: Int, animations: Animations, maxBytes: Int?, keepsRights: Bool, autoQuality: AutoQuality?,
                 bestOf: [Format], keepsSourceFormat: Bool) {
        let (keepsAnimation, animationAsWebP, animationAsGIF) = (animations.keep, animations.asWebP, animations.asGIF)
        self.format = format
        self.keepsSourceFormat = keepsSourceFormat && bestOf.isEmpty
        let bestOf = bestOf.filter { $0.hasQuality || $0 == .png }
        self.bestOf = bestOf
        let qualified = format.hasQuality || !self.bestOf.isEmpty
        self.autoQuality = qualified ? autoQuality : nil
        self.keepsRights = keepsRights && (format == .jpeg || format == .png || format == .webp || !self.bestOf.isEmpty)
        self.maxBytes = qualified ? maxBytes.map { max(1, $0) } : nil
        self.quality = min(100, max(1, quality))
        self.keepsAnimation = keepsAnimation && format == .webp
        self.animationAsWebP = format == .webp || format == .svg ? nil : animationAsWebP.map { min(100, max(1, $0)) }
        self.animationAsGIF = animationAsGIF && format != .webp && format != .gif && format != .svg && self.animationAsWebP == nil
        let name = self.keepsSourceFormat ? "source[" + format.rawValue + "]"
            : self.bestOf.isEmpty ? format.rawValue : "best[" + self.bestOf.map(\.rawValue).joined(separator: ",") + "]"
        // (Kept formats with a quality take it: the fallback's own may have none.)
        let level = self.autoQuality.map { "-q" + $0.description } ?? (qualified || self.keepsSourceFormat ? "-q\(self.quality)" : "")
        description = name + level + (format == .webp && !keepsAnimation ? "-still" : "")
            + (self.animationAsWebP.map { "+anim-webp-q\($0)" } ?? "") + (self.animationAsGIF ? "+anim-gif" : "")
            + (self.maxBytes.map { "-max\($0)" } ?? "") + (self.keepsRights ? "+rights" : "")
    }

    /// This encoding for a still: the same but with no animation kept or offered.
    public var still: ImageEncoding {
        ImageEncoding(format, quality: quality, animations: .init(keep: false), maxBytes: maxBytes, keepsRights: keepsRights,
                      autoQuality: autoQuality, bestOf: bestOf, keepsSourceFormat: keepsSourceFormat)
    }

    /// What an answer made with this encoding is: `format` at `quality` (for a best-format or
    /// autoquality encoding, the one chosen), with the rights it keeps.
    func made(_ format: Format, quality: Int) -> ImageEncoding {
        ImageEncoding(format, quality: quality, animations: .init(keep: keepsAnimation), keepsRights: keepsRights)
    }

    /// The encoding of an animated source's answer: this one (WebP keeping animations, GIF),
    /// the WebP or GIF alternative, or nil (the first frame in `format`).
    public var animationEncoding: ImageEncoding? {
        // (In the source's format: the decode, which knows the source, resolves it.)
        if keepsSourceFormat { return self }
        if format == .webp { return keepsAnimation ? self : nil }
        // (A GIF with a WebP alternative: thumbor's `gifv`, animations as WebP, stills as GIF.)
        if let quality = animationAsWebP { return ImageEncoding(.webp, quality: quality) }
        if format == .gif { return self }
        return animationAsGIF ? ImageEncoding(.gif) : nil
    }

    /// The encoder's options; nil for SVG, whose bytes are the source's, cleaned, not an encode
    /// of pixels.
    public var options: ImageEncoder.Options? { options(quality: quality) }

    /// The encoder's options at another quality (`maxBytes`' search).
    func options(quality: Int) -> ImageEncoder.Options? {
        switch format {
        case .jpeg: .jpeg(quality: quality)
        case .png: .png(compressionLevel: 6)
        case .webp: .webp(quality: quality)
        case .avif: .avif(quality: quality)
        case .jxl: .jxl(quality: quality)
        case .gif: .gif
        case .ico: .ico
        case .bmp: .bmp
        case .svg: nil
        case .heic: .heic(quality: quality)
        }
    }
}

/// Encoded bytes with their content type and a strong ETag (a hash of the bytes): the same
/// variant has the same bytes, and so the same ETag, whichever tier answers.
public struct EncodedImage: Sendable {
    /// The bytes, ready to hand to NIO without a copy.
    public let bytes: ByteBuffer
    /// The format and quality the bytes were encoded with.
    public let encoding: ImageEncoding
    /// `"` + XXH64 of the bytes in hex + `"`.
    public let etag: String

    /// Wraps encoded bytes (copied once into a `ByteBuffer`) and computes their ETag.
    public init(data: Data, encoding: ImageEncoding) {
        bytes = ByteBuffer(bytes: data)
        self.encoding = encoding
        etag = "\"" + String(Checksum.compute(data), radix: 16) + "\""
    }

    /// The MIME type of the bytes (`Content-Type`).
    public var contentType: String { encoding.format.contentType }
    /// The number of bytes.
    public var count: Int { bytes.readableBytes }
    /// A copy of the bytes.
    public var data: Data { bytes.withUnsafeReadableBytes { Data($0) } }
}

/// A delivered encoded image and the tier that had it (`.encodedMemory`, `.encodedDisk`, or
/// the tier the bitmap came from when it was encoded for this request).
public struct EncodedResponse: Sendable {
    /// The encoded bytes with their content type and ETag.
    public var encoded: EncodedImage
    /// The tier the answer came from (see the type's summary).
    public var tier: ImageTier
    /// The variant's identity (what every tier keys it by).
    public var key: VariantKey?
    /// The request header the answer depends on (`Vary`), when the pipeline decided the
    /// encoding (`ImagePipeline.answer(for:)`).
    public var vary: String?
    /// Whether the encoded memory tier took these bytes (a hit, or what this answer stored): a
    /// caller that indexes answers by the tier's entries (the server's ready answers) needs no
    /// read of its own.
    public var isInMemoryTier: Bool
    /// Set when the request's fallback image answers in the source's place: the source's error.
    public var fallbackFor: PipelineError?
    /// The fallback image's source key, when it answered.
    public var fallbackSource: String?
    /// Whether the request's fallback image answered in the source's place.
    public var isFallback: Bool { fallbackFor != nil }

    /// Creates a response; the key, `Vary` field and memory-tier flag default to none.
    public init(encoded: EncodedImage, tier: ImageTier, key: VariantKey? = nil, vary: String? = nil, isInMemoryTier: Bool = false) {
        self.encoded = encoded
        self.tier = tier
        self.key = key
        self.vary = vary
        self.isInMemoryTier = isInMemoryTier
    }
}

/// Which keys of the memory tiers belong to which source, so that a purge removes exactly that
/// source's entries (and no scan or emptying of the tiers is needed). Kept in step with the
/// caches: entries they evict leave the index.
final class SourceIndex: Sendable {
    private struct State {
        var keysBySource: [String: Set<String>] = [:]
        /// The sources each key was made from: its own first, then any it was made with (a
        /// watermark image).
        var sourcesByKey: [String: [String]] = [:]

        mutating func unlink(_ key: String, from sources: [String]) {
            for source in sources {
                keysBySource[source]?.remove(key)
                if keysBySource[source]?.isEmpty == true { keysBySource.removeValue(forKey: source) }
            }
        }
    }
    private let state = Locked(State())

    /// Files `key` under each of `sources`: a purge of any of them removes it.
    func add(_ key: String, sources: [String]) {
        state.withLock { state in
            if let old = state.sourcesByKey.updateValue(sources, forKey: key) { state.unlink(key, from: old) }
            for source in sources { state.keysBySource[source, default: []].insert(key) }
        }
    }

    func add(_ key: String, source: String) { add(key, sources: [source]) }

    func remove(_ key: String) {
        state.withLock { state in
            guard let sources = state.sourcesByKey.removeValue(forKey: key) else { return }
            state.unlink(key, from: sources)
        }
    }

    /// Forgets `source` and returns its keys (those made from it, and those made with it).
    func removeSource(_ source: String) -> Set<String> {
        state.withLock { state in
            let keys = state.keysBySource.removeValue(forKey: source) ?? []
            for key in keys {
                if let sources = state.sourcesByKey.removeValue(forKey: key) { state.unlink(key, from: sources.filter { $0 != source }) }
            }
            return keys
        }
    }

    var count: Int { state.withLock { $0.sourcesByKey.count } }
}
