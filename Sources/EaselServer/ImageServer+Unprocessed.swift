import EaselCodecs
import EaselPipeline
import EaselSupport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Sources answered as they are: imgproxy's `raw` and `skip_processing`.
extension ImageServer {
    /// What a browser may do with a document answered as it is (a PDF): nothing but show it.
    static let rawPolicy = "sandbox; default-src 'none'"

    /// The source's own bytes, when the URL asks for them: `raw` always (unchecked but for the
    /// download limits; only images, as `ImagePipeline.sourceBytes` says: Easel is no general
    /// proxy); `skip_processing` when the source is of a listed type, passes the limits
    /// (`sourceLimits` and the server's), and the pipeline would answer in that type
    /// (`ImagePipeline.answersInSourceType`). Nil: process as usual.
    ///
    /// The answer carries what a processed one does (`ETag` of the bytes, `Cache-Control`,
    /// cache tags, `Content-Disposition`, a 304 for a matching `If-None-Match`), its type as
    /// sniffed, `X-Content-Type-Options: nosniff`, and for an SVG (cleaned unless raw) or a PDF a
    /// `Content-Security-Policy` that lets it run and load nothing.
    /// Whether to look at the source before processing: always for `raw`; for
    /// `skip_processing`, unless the source is known to be of a type not listed (then the usual
    /// path answers at once, from the cache when it can).
    func mayAnswerUnprocessed(_ source: Source, _ options: ImagePlan) -> Bool {
        if options.raw { return true }
        guard !options.skipProcessing.isEmpty, options.page == 0 else { return false }
        // (A source that does not resolve is refused on the way there.)
        guard let url = try? resolve(source), let key = ImageRequest(url: url, cacheKey: sourceKey(source)).sourceKey,
              let type = knownTypes.type(of: key) else { return true }
        return options.skipProcessing.contains(type)
    }

    func unprocessedAnswer(_ request: Request, _ context: EaselRequestContext, head: Bool, source: Source, options: ImagePlan,
                           output: OutputPolicy, rules: StyleRules) async throws -> Response? {
        var pipelineRequest = ImageRequest(url: try resolve(source), cacheKey: sourceKey(source))
        pipelineRequest.sourceLimits = options.sourceLimits
        pipelineRequest.deadline = .milliseconds(Int64(checked: configuration.requestTimeout * 1000))
        let client = ClientPreferences(accept: request.headers[.accept])
        guard admission.enter() else { throw RequestError.tooManyRequests }
        let bytes: SourceBytes
        do {
            defer { admission.leave() }
            bytes = try await pipeline.sourceBytes(for: pipelineRequest, checked: !options.raw)
        }
        knownTypes.record(bytes.fileType, for: pipelineRequest.sourceKey)
        AccessLog.Note.current?.tier = "original"
        if !options.raw {
            guard options.skipProcessing.contains(bytes.fileType),
                  pipeline.answersInSourceType(bytes.fileType, policy: output, client: client) else { return nil }
        }
        // Never a ready answer (`write` withdraws an earlier offer for this request).
        var served = Served(bytes: ByteBuffer(bytes: bytes.data), contentType: bytes.fileType.mimeType, etag: bytes.etag,
                            cacheControl: cacheControl(lifetime: rules.lifetime, maxAge: options.maxAge),
                            // A skipped source is the same for every client; a route's own `Vary` still holds.
                            vary: rules.vary)
        served.fields[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        if bytes.fileType == .svg {
            served.fields[.contentSecurityPolicy] = Self.svgPolicy
        } else if bytes.fileType == .pdf {
            served.fields[.contentSecurityPolicy] = Self.rawPolicy
        }
        if options.contentDisposition {
            served.fields[.contentDisposition] = Self.contentDisposition(options.filename ?? Self.sourceName(source),
                                                                         fileExtension: bytes.fileType.entry.fileExtension,
                                                                         attachment: options.attachment)
        }
        served.tagged = [pipelineRequest.sourceKey ?? ""]
        served.cacheTags = options.cacheTags
        return write(served, to: request, context, head: head)
    }
}

/// The types of sources seen, by source key (bounded: cleared past 10,000): a `skip_processing`
/// URL whose source is known to be of a type it does not list goes the usual way without reading
/// the source first. A source replaced by one of another type is still taken for its old type
/// until the map is cleared: a listed type seen as unlisted is processed rather than skipped, an
/// unlisted one seen as listed is looked at once more — correct answers either way.
final class KnownSourceTypes: Sendable {
    private let types = Locked([String: ImageFileType]())
    private static let limit = 10_000

    func type(of key: String) -> ImageFileType? { types.withLock { $0[key] } }

    func record(_ type: ImageFileType, for key: String?) {
        guard let key else { return }
        types.withLock { types in
            if types.count >= Self.limit { types.removeAll(keepingCapacity: true) }
            types[key] = type
        }
    }
}
