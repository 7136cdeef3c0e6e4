import EaselRemote
import EaselStorage
import Foundation

/// Fetches `s3://BUCKET/KEY` originals through `S3Client` (Signature V4), streamed into the sink
/// with the same byte limit as downloads; the object's ETag, Last-Modified, Content-Type and
/// Cache-Control are kept for revalidation (`If-None-Match`, `If-Modified-Since`).
///
/// Errors: a missing key is HTTP 404 (`PipelineError.httpStatus(404)`); refused credentials, a
/// missing bucket or an unreachable endpoint are `.network` with S3's code and message (for
/// the log: a server answers 502 with a generic text); a slow store is `.timedOut`.
public struct S3Fetcher: ImageFetcher {
    /// The S3 client objects are read with (its endpoint, credentials and timeouts).
    public let client: S3Client
    /// Largest object accepted in bytes (default 20 MB, like downloads); a larger one is
    /// `PipelineError.tooLarge`.
    public let maximumBytes: Int

    /// Creates a fetcher reading through `client`, refusing objects over `maximumBytes`.
    public init(client: S3Client, maximumBytes: Int = 20_000_000) {
        self.client = client
        self.maximumBytes = maximumBytes
    }

    public func canFetch(_ url: URL) -> Bool { url.scheme?.lowercased() == "s3" }

    /// `s3://BUCKET/KEY` with the key as the object is named (percent-escapes decoded).
    public static func object(of url: URL) -> (bucket: String, key: String)? {
        guard let bucket = url.host, !bucket.isEmpty else { return nil }
        let key = String(url.path.drop { $0 == "/" })
        return key.isEmpty ? nil : (bucket, key)
    }

    public func fetch(_ request: FetchRequest, into sink: FetchSink) async throws(PipelineError) -> FetchResponse {
        guard let (bucket, key) = Self.object(of: request.url) else { throw .httpStatus(404, url: request.url.absoluteString) }
        let stored = request.revalidating
        let outcome: S3Client.GetOutcome
        do {
            sink.reset()
            outcome = try await client.get(
                bucket: bucket, key: key, ifNoneMatch: stored?.etag, ifModifiedSince: stored?.etag == nil ? stored?.lastModified : nil,
                maximumBytes: maximumBytes, onHead: { head in sink.expect(head.contentLength) },
                onChunk: { buffer in sink.append(buffer.readableBytesView) })
        } catch {
            if Task.isCancelled { throw .cancelled }
            switch error {
            case .notFound: throw .httpStatus(404, url: request.url.absoluteString)
            case .tooLarge(let limit, let received): throw .tooLarge(limit: limit, received: received, declared: nil)
            case .timedOut(let seconds): throw .timedOut(seconds: seconds)
            default: throw .network("\(request.url.absoluteString): \(error)")
            }
        }
        switch outcome {
        case .object(let head):
            return FetchResponse(outcome: .complete, metadata: HTTPMetadata(
                etag: head.etag, lastModified: head.lastModified, cacheControl: head.cacheControl, contentType: head.contentType))
        case .notModified(let head):
            return FetchResponse(outcome: .notModified, metadata: HTTPMetadata(
                etag: head.etag ?? stored?.etag, lastModified: head.lastModified ?? stored?.lastModified,
                cacheControl: head.cacheControl ?? stored?.cacheControl, contentType: stored?.contentType))
        }
    }
}
