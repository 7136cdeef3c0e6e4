import EaselCodecs
import EaselStorage
import EaselSupport
import Foundation

/// What `ImagePipeline.sourceDetails(for:analysis:)` tells about a source.
public struct SourceDetails: Sendable {
    /// Size, type, orientation, profile and EXIF basics, read from the original's header.
    public var info: ImageInfo
    /// The original's size in bytes.
    public var byteCount: Int
    /// The source upright and colour-converted, at most `previewSide` pixels a side (decoded
    /// with shrink-on-load): what placeholders (BlurHash, ThumbHash) and the dominant colour
    /// are computed from.
    public var preview: Bitmap
    /// The source upright and colour-converted at the size faces are found on
    /// (`FaceDetector.decodeNeed`: a shorter side of `FaceDetector.analysisShortSide` pixels, the
    /// source's own when smaller), when `sourceDetails(for:analysis:)` was asked for one: what
    /// faces and smart crops are found on.
    public var analysis: Bitmap?
}

extension ImagePipeline {
    /// The largest side of `SourceDetails.preview` (ThumbHash takes at most 100×100).
    public static let previewSide = 100

    /// The facts of `request`'s source and a tiny decode of it, through the same tiers as any
    /// request: the preview is an ad-hoc variant (memory, disk), the original comes from the
    /// disk cache or one shared fetch. With `analysis`, also the decode faces are found on
    /// (another ad-hoc variant, made from the same original).
    public func sourceDetails(for request: ImageRequest, analysis wantsAnalysis: Bool = false) async throws(PipelineError) -> SourceDetails {
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
        let info = try await BlockingIOPool.decoding.performCancellable { () throws(PipelineError) -> ImageInfo in
            do { return try ImageDecoder.info(of: original.data, limits: limits, page: request.page,
                                                    embeddedThumbnail: request.embeddedThumbnail, video: request.video,
                                                    autoRotate: request.autoRotate) } catch {
                throw .codec(error)
            }
        }
        var analysis: Bitmap?
        if wantsAnalysis {
            var analysisRequest = previewRequest
            // The very decode a face crop gets (shrink-on-load's size for that need: the resize
            // below changes nothing), so faces and placements are the ones processing finds.
            let need = FaceDetector.decodeNeed(sourceWidth: info.planningWidth, sourceHeight: info.planningHeight)
            let size = ImageDecoder.decodedSize(of: info, covering: need)
            analysisRequest.processing = .processors([Resize(width: size.width, height: size.height, mode: .fit)])
            analysis = try await image(for: analysisRequest).image
        }
        return SourceDetails(info: info, byteCount: original.data.count, preview: preview, analysis: analysis)
    }
}

/// A source's own bytes, as `ImagePipeline.sourceBytes(for:checked:)` answers them.
public struct SourceBytes: Sendable {
    /// The original, byte for byte.
    public var data: Data
    /// The image format its bytes are.
    public var fileType: ImageFileType
    /// The `Content-Type` the origin sent, when it sent one.
    public var originContentType: String?
    /// A strong entity tag of the bytes.
    public var etag: String
}

extension ImagePipeline {
    /// `request`'s original as fetched, through the same fetch as any request (the disk tier's
    /// copy, or one shared download held to the fetcher's byte limit): imgproxy's `raw` and
    /// `skip_processing`. Only images: bytes of no image format Easel knows are
    /// `.decoding(.unknownFormat)`.
    ///
    /// `checked`: the header is read against the request's limits first (its type, size, page,
    /// and for an animation its frames and their pixels, as a decode would; `.decoding`
    /// otherwise), an SVG is cleaned as every SVG answer is (`SVGSanitizer`), and a fetched
    /// original that passes is stored like one that decoded. Unchecked bytes are as fetched and
    /// are never stored.
    public func sourceBytes(for request: ImageRequest, checked: Bool) async throws(PipelineError) -> SourceBytes {
        guard let sourceKey = request.sourceKey, let url = request.url else { throw .noSource }
        let original = try await tasks.run(FetchTask(pipeline: self, url: url, sourceKey: sourceKey, policy: request.cachePolicy,
                                                     mark: purges.mark(sourceKey)), waiter: nextID(), priority: request.priority)
        // (A video is answered as one of its frames, never as it is: it is no image. Checked, its
        // type is told, so that a caller answering only listed image types goes on to its frame.)
        guard var fileType = try? ImageFileType.sniff(original.data), checked || !fileType.isVideo else { throw .decoding(.unknownFormat) }
        var data = original.data
        if checked {
            let limits = decodingLimits(for: request)
            (fileType, data) = try await BlockingIOPool.decoding.perform { () throws(PipelineError) -> (ImageFileType, Data) in
                do {
                    let info = try ImageDecoder.info(of: original.data, limits: limits, page: request.page, video: request.video)
                    if info.isAnimated {
                        guard info.frameCount <= limits.maxFrames else { throw CodecError.tooManyFrames(limit: limits.maxFrames) }
                        guard (Int.checkedProduct(info.frameCount, info.pixelCount) ?? .max) <= limits.maxAnimationPixels else {
                            throw CodecError.tooManyAnimationPixels(limit: limits.maxAnimationPixels)
                        }
                        guard info.pixelCount <= limits.maxAnimationFramePixels else {
                            throw CodecError.tooManyPixels(width: info.width, height: info.height, limit: limits.maxAnimationFramePixels)
                        }
                    }
                    return (info.fileType, info.fileType == .svg ? try SVGSanitizer.sanitize(original.data, limits: limits) : original.data)
                } catch {
                    throw .codec(error)
                }
            }
            if let flag = original.pendingStore, flag.claim(), let disk {
                try? await disk.set(OriginalRecord.encode(original.data, original.metadata), forKey: StoreKey.original(sourceKey))
            }
        }
        // A mapped local file is answered from a copy, checked whole once copied: the bytes
        // answered (and their ETag) are the file's, never what a write under way left.
        if InputFile.isMapped(original.data) {
            // (A sanitized SVG is already a copy.)
            if InputFile.isMapped(data) { data = data.withUnsafeBytes { Data($0) } }
            try Self.checkWhole(original.data, fileType: fileType)
        }
        return SourceBytes(data: data, fileType: fileType, originContentType: original.metadata.contentType,
                           etag: "\"" + String(Checksum.compute(data), radix: 16) + "\"")
    }
}

extension ImagePipeline {
    /// The EXIF Artist and Copyright of `request`'s source (page, thumbnail), read from its
    /// header through the fetch stage (the disk tier's original, or one shared download).
    func sourceRights(_ request: ImageRequest, sourceKey: String) async throws(PipelineError) -> RightsMetadata? {
        guard let url = request.url else { throw .noSource }
        let original = try await tasks.run(FetchTask(pipeline: self, url: url, sourceKey: sourceKey, policy: request.cachePolicy,
                                                     mark: purges.mark(sourceKey)), waiter: nextID(), priority: request.priority)
        let limits = decodingLimits(for: request)
        return try await BlockingIOPool.decoding.perform { () throws(PipelineError) -> RightsMetadata? in
            do {
                return RightsMetadata(try ImageDecoder.info(of: original.data, limits: limits, page: request.page,
                                                            embeddedThumbnail: request.embeddedThumbnail, video: request.video).exif)
            } catch {
                throw .codec(error)
            }
        }
    }

    /// The type of `request`'s source, for an answer in the source's format whose bitmap came
    /// from a tier no decode of this process filled (a table or the disk after a restart): from
    /// the original's first bytes (the disk tier's, else fetched; nothing is stored here, the
    /// decode stores what it has checked). JPEG for bytes of no type it knows.
    func sourceType(_ request: ImageRequest, sourceKey: String) async throws(PipelineError) -> ImageFileType {
        guard let url = request.url else { throw .noSource }
        let original = try await tasks.run(FetchTask(pipeline: self, url: url, sourceKey: sourceKey, policy: request.cachePolicy,
                                                     mark: purges.mark(sourceKey)), waiter: nextID(), priority: request.priority)
        guard let type = try? ImageFileType.sniff(original.data) else { return .jpeg }
        sourceTypes.note(sourceKey, type: type)
        return type
    }
}
