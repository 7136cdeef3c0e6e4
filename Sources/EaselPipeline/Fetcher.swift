import EaselSupport
import EaselStorage
import Foundation

/// Gets an original's bytes (Haneke's `Fetcher`): async, streaming into a `FetchSink`, cancelled
/// by cancelling the calling task, and naming the cache key of what it fetches.
public protocol ImageFetcher: Sendable {
    /// True for the URLs this fetcher handles (checked in order; the first match fetches).
    func canFetch(_ url: URL) -> Bool
    /// The cache key of the original at `url` (by default the URL itself).
    func cacheKey(for url: URL) -> String
    /// Whether originals it fetches are worth a copy in the disk cache (default true; false for
    /// local files, which are already on disk).
    var cachesOriginals: Bool { get }
    /// The tier its answers are reported as (default `.network`; `.file` for local files).
    var tier: ImageTier { get }
    /// Fetches `request.url`, appending the body to `sink` as it arrives. Bytes already in the
    /// sink stay there when the task is cancelled (suspended downloads resume from them).
    func fetch(_ request: FetchRequest, into sink: FetchSink) async throws(PipelineError) -> FetchResponse
}

extension ImageFetcher {
    public func cacheKey(for url: URL) -> String { url.absoluteString }
    public var cachesOriginals: Bool { true }
    public var tier: ImageTier { .network }
}

/// What to fetch.
public struct FetchRequest: Sendable {
    /// The original's URL (a fetcher that follows redirects starts here).
    public var url: URL
    /// Validators of a stored copy: the fetcher asks with If-None-Match / If-Modified-Since and
    /// may answer `notModified`.
    public var revalidating: HTTPMetadata?
    /// Continue a suspended download: ask for the bytes from `offset` on, if the resource still
    /// matches `validator` (an ETag or Last-Modified value, sent as If-Range).
    public var resume: (offset: Int, validator: String)?

    /// A request for `url`; by default a plain fetch, neither revalidating nor resuming.
    public init(url: URL, revalidating: HTTPMetadata? = nil, resume: (offset: Int, validator: String)? = nil) {
        self.url = url
        self.revalidating = revalidating
        self.resume = resume
    }
}

/// How a fetch ended.
public struct FetchResponse: Sendable {
    /// What the fetch left in the sink.
    public enum Outcome: Sendable, Equatable {
        /// The whole body is in the sink.
        case complete
        /// The body from the resume offset on was appended to the bytes already in the sink.
        case resumed
        /// The stored copy is still valid (HTTP 304); the sink is untouched.
        case notModified
    }
    /// What the fetch left in the sink: a whole body, a resumed one, or nothing (not modified).
    public var outcome: Outcome
    /// The origin's caching facts from this answer (for `notModified`, its new headers).
    public var metadata: HTTPMetadata

    /// Creates a response with its outcome and the origin's caching facts.
    public init(outcome: Outcome, metadata: HTTPMetadata) {
        self.outcome = outcome
        self.metadata = metadata
    }
}

/// Collects a body as it streams in, and reports progress. Shared between a fetcher and the
/// pipeline, so that bytes received before a suspension are kept.
public final class FetchSink: Sendable {
    private struct State {
        var data = Data()
        var expected: Int?
        var rangeValidator: String?
    }
    private let state = Locked(State())
    private let onProgress: @Sendable (Int, Int?) -> Void

    /// An empty sink calling `onProgress` with the bytes received so far and the expected total
    /// (nil when unknown) after every `append(_:)` and `expect(_:)`.
    public init(onProgress: @escaping @Sendable (_ received: Int, _ expected: Int?) -> Void = { _, _ in }) {
        self.onProgress = onProgress
    }

    /// Bytes received so far.
    public var count: Int { state.withLock { $0.data.count } }
    /// A copy of the bytes received so far.
    public var data: Data { state.withLock { $0.data } }

    /// Total size when known (Content-Length plus any resume offset).
    public func expect(_ total: Int?) {
        let received = state.withLock { state in
            state.expected = total
            return state.data.count
        }
        onProgress(received, total)
    }

    /// Appends a chunk of the body and reports progress.
    public func append(_ bytes: some Sequence<UInt8>) {
        let (received, expected) = state.withLock { state in
            state.data.append(contentsOf: bytes)
            return (state.data.count, state.expected)
        }
        onProgress(received, expected)
    }

    /// The validator (strong ETag or Last-Modified) of the body being received, for If-Range.
    public var rangeValidator: String? {
        get { state.withLock { $0.rangeValidator } }
        set { state.withLock { $0.rangeValidator = newValue } }
    }

    /// Holds `body`, the whole body received at once, in place of anything received before,
    /// without copying it (a mapped file stays a mapping).
    public func adopt(_ body: Data) {
        let (received, expected) = state.withLock { state in
            state.data = body
            return (state.data.count, state.expected)
        }
        onProgress(received, expected)
    }

    /// Drops everything received (the origin restarted the body).
    public func reset() { state.withLock { $0.data.removeAll(keepingCapacity: true) } }
}

/// HTTP caching facts about an original, stored with it.
public struct HTTPMetadata: Sendable, Codable, Equatable {
    /// The ETag header, sent back as If-None-Match when the copy is revalidated.
    public var etag: String?
    /// The Last-Modified header, sent back as If-Modified-Since when the copy is revalidated.
    public var lastModified: String?
    /// The Cache-Control header as received (see `directives`).
    public var cacheControl: String?
    /// The Content-Type header.
    public var contentType: String?
    /// The Expires header (used when Cache-Control has no max-age).
    public var expires: String?
    /// When this copy was received or last revalidated (seconds since 1970).
    public var storedAt: Double
    /// Whether the origin sent `Accept-Ranges: bytes`, so a suspended download can resume.
    public var acceptsRanges: Bool

    /// Creates metadata; every header defaults to absent and `storedAt` to now.
    public init(etag: String? = nil, lastModified: String? = nil, cacheControl: String? = nil, contentType: String? = nil,
                expires: String? = nil, storedAt: Double = Date().timeIntervalSince1970, acceptsRanges: Bool = false) {
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.contentType = contentType
        self.expires = expires
        self.storedAt = storedAt
        self.acceptsRanges = acceptsRanges
    }

    /// The parsed Cache-Control directives (lowercased names; values without quotes).
    public var directives: [String: String] {
        guard let cacheControl else { return [:] }
        var result: [String: String] = [:]
        for part in cacheControl.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            guard !name.isEmpty else { continue }
            let value = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : ""
            result[name] = value
        }
        return result
    }

    /// `no-store`: never write the response to a cache.
    public var forbidsStoring: Bool { directives["no-store"] != nil }

    /// Seconds the copy is fresh for: `max-age` (0 with `no-cache`), else until `Expires`
    /// (an unparseable date is already past, as RFC 9111 says), nil when the origin said
    /// nothing about freshness.
    public var maxAge: Double? {
        let directives = self.directives
        if directives["no-cache"] != nil { return 0 }
        if let maxAge = directives["max-age"].flatMap(Double.init) { return max(0, maxAge) }
        guard let expires else { return nil }
        guard let date = Self.httpDate(expires) else { return 0 }
        return max(0, date.timeIntervalSince1970 - storedAt)
    }

    /// An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT").
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }

    /// A validator for If-Range (a strong ETag, else Last-Modified).
    public var rangeValidator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
}
