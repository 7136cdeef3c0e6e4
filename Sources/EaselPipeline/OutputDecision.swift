import EaselCodecs
import EaselSupport
import Foundation

/// An `Accept` header's media ranges with their q-values (RFC 9110 §12.5.1), read as numbers:
/// `q=0`, `q=0.0` and `q=0.000` all mean "not acceptable".
public struct AcceptHeader: Sendable {
    /// One media range and its q-value.
    public struct Range: Sendable, Equatable {
        /// The media range, lowercased: `image/webp`, `image/*` or `*/*`.
        public var type: String
        /// The q-value, 0–1 (1 when absent; 0 when malformed).
        public var quality: Double
    }
    /// The header's ranges in the order they were sent (empty items left out).
    public let ranges: [Range]

    /// Parses an `Accept` header's value; ranges without a type are skipped, and a malformed
    /// q-value makes its range unacceptable (0).
    public init(_ header: String) {
        ranges = header.split(separator: ",").compactMap { item in
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let type = parts.first?.lowercased(), !type.isEmpty else { return nil }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0].lowercased() == "q" else { continue }
                // A malformed q-value makes the range unusable rather than fully acceptable.
                guard let value = Double(pair[1]), value.isFinite else { return Range(type: type, quality: 0) }
                quality = min(1, max(0, value))
            }
            return Range(type: type, quality: quality)
        }
    }

    /// The q-value of the most specific range matching `type` (exact, `image/*`, `*/*`); 0 when
    /// none matches.
    public func quality(of type: String) -> Double {
        let type = type.lowercased()
        let major = type.split(separator: "/").first.map { $0 + "/*" } ?? ""
        if let exact = ranges.last(where: { $0.type == type }) { return exact.quality }
        if let group = ranges.last(where: { $0.type == major }) { return group.quality }
        return ranges.last(where: { $0.type == "*/*" })?.quality ?? 0
    }

    /// The q-value of `type` named itself (no wildcard); 0 when it is not named.
    public func explicitQuality(of type: String) -> Double {
        let type = type.lowercased()
        return ranges.last(where: { $0.type == type })?.quality ?? 0
    }

    /// True when `type` is named explicitly with a q-value above 0 (wildcards do not count:
    /// a client that says `image/*` may not decode every new format).
    public func explicitlyAccepts(_ type: String) -> Bool {
        let type = type.lowercased()
        return ranges.contains { $0.type == type } && quality(of: type) > 0
    }
}

extension AcceptHeader {
    /// What of this header decides an answer (`ImagePipeline.decide` reads nothing else): each
    /// output format's q-value, through wildcards and named. Two headers with the same class
    /// get the same answer for the same URL, however they are spelt (the server's ready answers
    /// are keyed by it).
    public var decisionClass: String {
        ImageEncoding.Format.allCases.map { format in
            let type = format.contentType
            return "\(quality(of: type)),\(explicitQuality(of: type))"
        }.joined(separator: ";")
    }
}

/// What the client said, carried by the request for the pipeline to decide its answer and the
/// answer's `Vary`: its `Accept` header, its Save-Data, and the Client Hints its plan was made
/// from.
public struct ClientPreferences: Sendable {
    /// The `Accept` header's value as the client sent it; nil when it sent none.
    public var acceptValue: String?
    /// The parsed `Accept` header; nil when the client sent none (JPEG for everyone).
    public var accept: AcceptHeader? { acceptValue.map(AcceptHeader.init) }

    /// The client asked to save data (`Save-Data: on`, when the server honours it): a fixed
    /// quality is lowered by a quarter, an autoquality target doubled.
    public var saveData: Bool
    /// The caller honours `Save-Data` (whether or not this client sent it): the answer varies
    /// on it.
    public var honoursSaveData: Bool
    /// The request header fields other than `Accept` the plan was made from (Client Hints:
    /// `Sec-CH-DPR`, `Width`…): the answer varies on them.
    public var hints: [String]

    /// Preferences from the raw `Accept` header value, or nil when the request had none. The
    /// value is parsed only when a decision needs it (`ImagePipeline.decide` remembers its
    /// decisions by value and policy).
    public init(accept: String?, saveData: Bool = false, honoursSaveData: Bool = false, hints: [String] = []) {
        acceptValue = accept
        self.saveData = saveData
        self.honoursSaveData = honoursSaveData || saveData
        self.hints = hints
    }

    /// The answer's `Vary`: `Accept` when the decision depends on it, then the hints, then
    /// Save-Data when honoured; nil for none.
    func vary(accept: Bool) -> String? {
        let fields = (accept ? ["Accept"] : []) + hints + (honoursSaveData ? ["Save-Data"] : [])
        return fields.isEmpty ? nil : fields.joined(separator: ", ")
    }
}

/// Decisions already made, by policy and `Accept` value: a warm request parses no header and
/// builds no encoding. Bounded (browsers send a handful of values; URLs a handful of policies).
final class Decisions: Sendable {
    let offersJPEGXL: Bool
    init(offersJPEGXL: Bool) { self.offersJPEGXL = offersJPEGXL }

    private struct Key: Hashable {
        var policy: OutputPolicy
        var accept: String?
        var saveData: Bool
    }
    private let known = Locked([Key: OutputDecision]())
    private static let limit = 1024

    func decision(_ policy: OutputPolicy, for client: ClientPreferences?) -> OutputDecision {
        let key = Key(policy: policy, accept: client?.acceptValue, saveData: client?.saveData ?? false)
        if let known = known.withLock({ $0[key] }) { return known }
        let decision = ImagePipeline.decide(policy, for: client, offersJPEGXL: offersJPEGXL)
        known.withLock { known in
            if known.count >= Self.limit { known.removeAll(keepingCapacity: true) }
            known[key] = decision
        }
        return decision
    }
}

/// What the URL or the named format asked of the output.
public struct OutputPolicy: Sendable, Hashable {
    /// The format asked for (a named format's `output`, a URL's `f=`); nil: negotiated.
    public var format: ImageEncoding.Format?
    /// The quality on JPEG's scale (each codec's own scale is derived from it); nil: the
    /// pipeline's default, 82.
    public var quality: Int?
    /// The asked format whatever `Accept` says (imgproxy's and thumbor's rule); otherwise WebP
    /// and AVIF go only to clients that take them.
    public var strict: Bool
    /// A quality for a format, on that codec's own scale, over `quality` when the answer is in it
    /// (imgproxy's `format_quality`).
    public var formatQuality: [ImageEncoding.Format: Int]
    /// At most this many bytes (`ImageEncoding.maxBytes`).
    public var maxBytes: Int?
    /// Formats that win over `format` for a client whose `Accept` names them, the first named
    /// first (imgproxy's `IMGPROXY_ENFORCE_JXL`, `_AVIF`, `_WEBP`).
    public var enforced: [ImageEncoding.Format] = []
    /// The source's EXIF Artist and Copyright kept in the answer (`ImageEncoding.keepsRights`).
    public var keepsRights = false
    /// Autoquality instead of `quality` (`ImageEncoding.autoQuality`).
    public var autoQuality: AutoQuality?
    /// Best format: the smallest answer among the formats the client takes (those it names of
    /// JPEG XL when offered, AVIF and WebP; and JPEG), each at the autoquality target when one is
    /// set (imgproxy's `f:best`, native `f=auto`); `format` is then not read.
    public var bestFormat = false
    /// Without `format`: the answer in the source's own format (`ImageEncoding.keepsSourceFormat`),
    /// whatever `Accept` says, as thumbor answers a URL that names no format.
    public var keepsSourceFormat = false
    /// With `keepsSourceFormat`: an animated source answered as animated WebP (thumbor's `gifv`).
    public var animationsAsWebP = false

    /// A policy; the defaults ask nothing (negotiated format, default quality, not strict, no
    /// per-format quality, no byte bound).
    public init(format: ImageEncoding.Format? = nil, quality: Int? = nil, strict: Bool = false,
                formatQuality: [ImageEncoding.Format: Int] = [:], maxBytes: Int? = nil) {
        self.format = format
        self.quality = quality
        self.strict = strict
        self.formatQuality = formatQuality
        self.maxBytes = maxBytes
    }
}

/// What a request gets: its encoding, and the request header its answer depends on.
public struct OutputDecision: Sendable, Equatable {
    /// The format and per-codec quality of the answer, with animated WebP for animated sources
    /// when the client takes it.
    public var encoding: ImageEncoding
    /// `Accept` when another `Accept` could get another answer (`Vary`), else nil.
    public var vary: String?
}

extension ImagePipeline {
    /// The quality of an answer whose URL or format names none (JPEG's scale).
    public static let defaultQuality = 82

    /// The one place an answer's form is decided, for every URL style: AVIF, then WebP, for
    /// clients that name them in `Accept` (wildcards do not promise new formats); a format the
    /// policy pins as it is (WebP and AVIF: when the client takes them, unless `strict`); JPEG
    /// otherwise. Quality per codec (AVIF's scale is its own). An animated source stays
    /// animated as WebP for a client that names WebP, whatever else it takes — unless the
    /// policy pins JPEG or PNG, or pins any format strictly.
    ///
    /// JPEG XL is negotiated only when `offersJPEGXL` (the pipeline's `offersJPEGXL`: few
    /// browsers take it, and its encoder is slow), ahead of AVIF for a client that names both.
    public static func decide(_ policy: OutputPolicy, for client: ClientPreferences?, offersJPEGXL: Bool = false) -> OutputDecision {
        let accept = client?.accept
        var policy = policy
        if client?.saveData == true {
            // Save-Data: a quarter off a fixed quality, twice the distance for autoquality.
            policy.quality = max(1, (policy.quality ?? Self.defaultQuality) * 3 / 4)
            policy.formatQuality = policy.formatQuality.mapValues { max(1, $0 * 3 / 4) }
            policy.autoQuality = policy.autoQuality.map { AutoQuality(target: $0.target * 2, minQuality: $0.minQuality, maxQuality: $0.maxQuality) }
        }
        if policy.bestFormat { return bestFormat(policy, accept: accept, offersJPEGXL: offersJPEGXL) }
        if policy.keepsSourceFormat, policy.format == nil, policy.enforced.isEmpty {
            let quality = policy.quality ?? Self.defaultQuality
            let encoding = ImageEncoding.sourceFormat(quality: quality, animations: .init(asWebP: policy.animationsAsWebP ? quality : nil),
                                                      maxBytes: policy.maxBytes, keepsRights: policy.keepsRights, autoQuality: policy.autoQuality)
            return OutputDecision(encoding: encoding, vary: nil)
        }
        let pinned = policy.strict && policy.format != nil
        // (An SVG asked for stays SVG: it is the source document, not pixels.)
        let enforced = policy.format == .svg ? nil : policy.enforced.first { accept?.explicitlyAccepts($0.contentType) ?? false }
        let output = enforced ?? (pinned ? policy.format! : ImageEncoding.negotiate(pinned: policy.format, offersJPEGXL: offersJPEGXL) { type, explicitly in
            // No Accept at all: JPEG (the fallback) for everyone.
            guard let accept else { return 0 }
            return explicitly ? accept.explicitQuality(of: type) : accept.quality(of: type)
        })
        // The answer depends on Accept (it is negotiated: no format, or WebP, AVIF or JPEG XL
        // "when the client takes it"), and only then has animation alternatives: a format pinned
        // as it is (JPEG, PNG, GIF, ICO, BMP) is what every client gets, with no `Vary`.
        let varies = policy.format == nil || !policy.enforced.isEmpty || (!policy.strict && ImageEncoding.variesWithAccept(pinned: policy.format))
        // (A GIF answer keeps its animation as GIF.)
        let webpForAnimations = varies && output != .webp && output != .gif && (accept?.explicitlyAccepts("image/webp") ?? false)
        // A client that names GIF but not WebP (older browsers, mail clients) gets animations as GIF.
        let gifForAnimations = varies && !webpForAnimations && output != .webp && (accept?.explicitlyAccepts("image/gif") ?? false)
        let quality = policy.quality ?? Self.defaultQuality
        let own = policy.formatQuality[output] ?? (output == .avif ? ImageEncoding.avifQuality(forJPEGQuality: quality) : quality)
        let animations = ImageEncoding.Animations(asWebP: webpForAnimations ? policy.formatQuality[.webp] ?? quality : nil,
                                                  asGIF: gifForAnimations)
        let encoding = ImageEncoding(output, quality: own, animations: animations, maxBytes: policy.maxBytes, keepsRights: policy.keepsRights,
                                     autoQuality: policy.autoQuality)
        return OutputDecision(encoding: encoding, vary: varies ? "Accept" : nil)
    }

    /// Best format's decision: the candidates the client takes, JPEG last (always taken); an
    /// animation as animated WebP for a client that names WebP, else as GIF for one that names
    /// GIF. Varies with `Accept`.
    static func bestFormat(_ policy: OutputPolicy, accept: AcceptHeader?, offersJPEGXL: Bool) -> OutputDecision {
        func named(_ format: ImageEncoding.Format) -> Bool { accept?.explicitlyAccepts(format.contentType) ?? false }
        let candidates = ([ImageEncoding.Format.jxl, .avif, .webp].filter { ($0 != .jxl || offersJPEGXL) && named($0) }) + [.jpeg]
        let quality = policy.quality ?? Self.defaultQuality
        let animations = ImageEncoding.Animations(asWebP: named(.webp) ? policy.formatQuality[.webp] ?? quality : nil,
                                                  asGIF: !named(.webp) && named(.gif))
        let encoding = ImageEncoding(.jpeg, quality: quality, animations: animations, maxBytes: policy.maxBytes, keepsRights: policy.keepsRights,
                                     autoQuality: policy.autoQuality, bestOf: candidates)
        return OutputDecision(encoding: encoding, vary: "Accept")
    }

    /// Whether `client` asking with `policy` gets an answer in the source's own type, so that
    /// the source may be answered as it is (imgproxy's `skip_processing`): the URL names no
    /// format, or the format decided for it (enforced formats aside) is that type.
    public func answersInSourceType(_ type: ImageFileType, policy: OutputPolicy, client: ClientPreferences?) -> Bool {
        // As imgproxy: by the URL's format alone (enforced formats do not count), so that the
        // choice never depends on `Accept`.
        if policy.bestFormat { return false }
        guard policy.format != nil else { return true }
        var asked = policy
        asked.enforced = []
        return decisions.decision(asked, for: client).encoding.format.contentType == type.mimeType
    }
}
