import EaselCodecs
import EaselPipeline
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Sources answered as they are: imgproxy's `raw` and `skip_processing`.
extension ImageServer {
    /// What a browser may do with a raw answer that is no image Easel knows: nothing but show it.
    static let rawPolicy = "sandbox; default-src 'none'"

    /// The source's own bytes, when the URL asks for them: `raw` always (any bytes, unchecked but
    /// for the download limits); `skip_processing` when the source is of a listed type, passes
    /// the limits (`sourceLimits` and the server's), and the pipeline would answer this client in
    /// that type (`ImagePipeline.answersInSourceType`). Nil: process as usual.
    ///
    /// The answer carries what a processed one does (`ETag` of the bytes, `Cache-Control`,
    /// `Surrogate-Key`, `Content-Disposition`, a 304 for a matching `If-None-Match`), its type as
    /// sniffed (a raw answer that is no known image: the origin's type, else
    /// `application/octet-stream`, sandboxed), `X-Content-Type-Options: nosniff`, and an SVG's
    /// `Content-Security-Policy`.
    func unprocessedAnswer(_ request: Request, _ context: EaselRequestContext, head: Bool, source: Source, options: ProcessingOptions,
                           output: OutputPolicy, lifetime: Int64?, vary: String?) async throws -> Response? {
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
        if !options.raw {
            guard let type = bytes.fileType, options.skipProcessing.contains(type),
                  pipeline.answersInSourceType(type, policy: output, client: client) else { return nil }
        }
        var headers: HTTPFields = [
            .contentType: bytes.fileType?.mimeType ?? bytes.originContentType ?? "application/octet-stream",
            .eTag: bytes.etag,
            .cacheControl: lifetime.map { "public, max-age=\(min(Int64(configuration.maxAge), $0))" }
                ?? options.maxAge.map { "public, max-age=\(min(configuration.maxAge, $0))" } ?? cacheControl,
        ]
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        if bytes.fileType == .svg {
            headers[.contentSecurityPolicy] = Self.svgPolicy
        } else if bytes.fileType == nil {
            headers[.contentSecurityPolicy] = Self.rawPolicy
        }
        // A skipped source is the same for every client; a route's own `Vary` still holds.
        if let vary { headers[.vary] = vary }
        if options.contentDisposition {
            let fileExtension = bytes.fileType.map { $0 == .jpeg ? "jpg" : $0 == .jxl ? "jxl" : $0.rawValue.lowercased() } ?? "bin"
            headers[.contentDisposition] = Self.contentDisposition(options.filename ?? Self.sourceName(source), fileExtension: fileExtension,
                                                                   attachment: options.attachment)
        }
        if let purgeRelay, !purgeRelay.banURLs.isEmpty {
            headers[Self.surrogateField] = PurgeRelay.surrogateKey(forSource: pipelineRequest.sourceKey ?? "")
        }
        if Self.matches(request.headers[.ifNoneMatch], etag: bytes.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentLength] = String(bytes.data.count)
        return Response(status: .ok, headers: headers, body: head ? .init() : .init(byteBuffer: ByteBuffer(bytes: bytes.data)))
    }
}
