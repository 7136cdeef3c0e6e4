import EaselCodecs
import EaselStorage
import EaselTables
import Foundation

/// Every way a pipeline request can fail.
public enum PipelineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request has no URL (an entity without a source URL for the format).
    case noSource
    /// No fetcher handles this URL's scheme.
    case unsupportedURL(String)
    /// The named format does not exist.
    case unknownFormat(String)
    /// `cachePolicy: .cacheOnly` and no tier has the image.
    case notCached
    /// The origin answered with a non-2xx status.
    case httpStatus(Int, url: String)
    /// The download is larger than the limit (`declared` when Content-Length said so up front:
    /// nothing of the body was read).
    case tooLarge(limit: Int, received: Int, declared: Int?)
    /// The whole download did not finish within the deadline.
    case timedOut(seconds: Double)
    /// More redirects than allowed.
    case tooManyRedirects(limit: Int)
    /// A redirect or address the fetcher's policy refuses.
    case forbiddenURL(String, reason: String)
    /// Could not connect, or the connection broke.
    case network(String)
    /// A file source outside the file fetcher's root, or missing.
    case fileNotFound(String)
    /// The bytes are not a decodable image (or exceed the decoding limits).
    case decoding(CodecError)
    /// A processor failed.
    case processing(String)
    /// A cache tier failed: match the underlying error, e.g.
    /// `.storage(.imageTable(.inUseByAnotherProcess))`.
    case storage(StorageFailure)
    /// Every requester of the work cancelled.
    case cancelled
    /// Refused before any work: too much is being made already (`WorkAdmission`).
    case overloaded
    /// Refused before decoding: the request's estimated peak bytes alone are over the pipeline's
    /// memory budget (`Configuration.memoryBudget`).
    case overMemoryBudget(needed: Int, budget: Int)

    /// Whether a fallback image answers for it (`ImageRequest.fallback`): a source that is
    /// missing (no such file, an origin's 4xx or 5xx, a download that failed) or cannot be
    /// decoded (damaged, unknown, over the limits). Not: a library the server cannot load, the
    /// caller's own mistakes (a bad URL, a
    /// refused source), an overloaded pipeline, a cancelled request, or time running out (the
    /// deadline and a slow download are one error: a working source is never replaced because
    /// it was slow).
    public var fallsBack: Bool {
        switch self {
        case .decoding(.libraryUnavailable): false  // the server's trouble: never hidden behind an image
        case .fileNotFound, .httpStatus, .network, .tooManyRedirects, .tooLarge, .decoding: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .noSource: "the request has no source URL"
        case .unsupportedURL(let url): "no fetcher for \(url)"
        case .unknownFormat(let name): "no format named \(name)"
        case .notCached: "not in any cache (cache only)"
        case .httpStatus(let code, let url): "HTTP \(code) from \(url)"
        case .tooLarge(let limit, let received, let declared):
            declared.map { "the origin declared \($0) bytes, over the limit of \(limit)" }
                ?? "the download passed the limit of \(limit) bytes (\(received) received)"
        case .timedOut(let seconds): "the download did not finish within \(seconds) s"
        case .tooManyRedirects(let limit): "more than \(limit) redirects"
        case .forbiddenURL(let url, let reason): "refused \(url): \(reason)"
        case .network(let message): "network error: \(message)"
        case .fileNotFound(let path): "no such file: \(path)"
        case .decoding(let error): "cannot decode: \(error)"
        case .processing(let message): "processing failed: \(message)"
        case .storage(let message): "cache error: \(message)"
        case .cancelled: "cancelled"
        case .overloaded: "too many requests being made"
        case .overMemoryBudget(let needed, let budget):
            "the image needs about \(needed / 1_048_576) MiB to make, over the memory budget of \(budget / 1_048_576) MiB"
        }
    }

    /// A codec's failure: `cancelled` stays a cancellation (a render stopped because nobody
    /// waits is not a bad image); anything else is `decoding`.
    static func codec(_ error: any Error) -> PipelineError {
        switch error as? CodecError {
        case .cancelled: .cancelled
        case let codec?: .decoding(codec)
        case nil: .decoding(.unknownFormat)
        }
    }

    /// A processor's or encoder's failure: the request's (`processing`, a 422), but for a library
    /// that could not be loaded, which is the server's (`decoding(.libraryUnavailable)`, a 500,
    /// its reason kept from the client) and a cancellation.
    static func processing(failure error: any Error) -> PipelineError {
        switch error as? CodecError {
        case .cancelled: .cancelled
        case let .libraryUnavailable(library, reason)?: .decoding(.libraryUnavailable(library: library, reason: reason))
        default: .processing("\(error)")
        }
    }

    init(_ error: ImageTableError) {
        switch error {
        case .cancelled: self = .cancelled
        case .decodingFailed(_, let codec): self = .decoding(codec)
        case .unknownFormat(let name): self = .unknownFormat(name)
        case .diskCacheFailed(let error): self = .storage(.diskCache(error))
        default: self = .storage(.imageTable(error))
        }
    }

    /// A failure of the disk cache (its calls are untyped `throws`; they throw `DiskCacheError`).
    static func diskCache(_ error: any Error) -> PipelineError {
        .storage(.diskCache(error as? DiskCacheError ?? .index(message: "\(error)")))
    }

    /// A failure of a data store: the disk cache's typed error, or another store's by name.
    static func store(_ store: any DataStore, _ error: any Error) -> PipelineError {
        if let error = error as? DiskCacheError { return .storage(.diskCache(error)) }
        return .storage(.store(name: store.storeName, message: "\(error)"))
    }
}

/// Why a cache tier failed, typed by the store it came from.
public enum StorageFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The local disk cache failed.
    case diskCache(DiskCacheError)
    /// An image table failed (opening, reading or writing it).
    case imageTable(ImageTableError)
    /// Another `DataStore` (a shared tier), by its `storeName`.
    case store(name: String, message: String)

    public var description: String {
        switch self {
        case .diskCache(let error): "\(error)"
        case .imageTable(let error): "\(error)"
        case .store(let name, let message): "\(name): \(message)"
        }
    }
}
