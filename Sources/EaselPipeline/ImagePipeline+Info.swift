import EaselCodecs
import EaselSupport
import Foundation

/// What `ImagePipeline.sourceDetails(for:)` tells about a source.
public struct SourceDetails: Sendable {
    /// Size, type, orientation, profile and EXIF basics, read from the original's header.
    public var info: ImageInfo
    /// The original's size in bytes.
    public var byteCount: Int
    /// The source upright and colour-converted, at most `previewSide` pixels a side (decoded
    /// with shrink-on-load): what placeholders (BlurHash, ThumbHash) and the dominant colour
    /// are computed from.
    public var preview: Bitmap
}

extension ImagePipeline {
    /// The largest side of `SourceDetails.preview` (ThumbHash takes at most 100×100).
    public static let previewSide = 100

    /// The facts of `request`'s source and a tiny decode of it, through the same tiers as any
    /// request: the preview is an ad-hoc variant (memory, disk), the original comes from the
    /// disk cache or one shared fetch.
    public func sourceDetails(for request: ImageRequest) async throws(PipelineError) -> SourceDetails {
        guard let sourceKey = request.sourceKey, let url = request.url else { throw .noSource }
        var previewRequest = request
        previewRequest.processing = .processors([Resize(width: Self.previewSide, height: Self.previewSide, mode: .fit)])
        previewRequest.encoding = nil
        // First the preview: a fetched original is stored once it has decoded, so the header
        // read below finds it on disk.
        let preview = try await image(for: previewRequest).image
        let original = try await tasks.run(FetchTask(pipeline: self, url: url, sourceKey: sourceKey, policy: request.cachePolicy,
                                                     mark: purges.mark(sourceKey)), waiter: nextID(), priority: request.priority)
        let limits = decodingLimits(for: request)
        let info = try await BlockingIOPool.decoding.perform { () throws(PipelineError) -> ImageInfo in
            do { return try ImageDecoder.info(of: original.data, limits: limits, page: request.page) } catch {
                throw .decoding(error as? CodecError ?? .unknownFormat)
            }
        }
        return SourceDetails(info: info, byteCount: original.data.count, preview: preview)
    }
}
