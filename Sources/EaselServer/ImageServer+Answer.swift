import EaselSupport
import Crypto
import EaselCodecs
import EaselPipeline
import EaselRemote
import EaselStorage
import EaselTables
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus
import Synchronization

/// Where every URL style ends: an ad-hoc answer's processor chain, the pipeline's answer written
/// as HTTP (headers, cache tags, `If-None-Match`, ready answers), and the client's leaving.
extension ImageServer {
    /// What a URL style decides about an ad-hoc answer beside its plan.
    struct StyleRules: Sendable {
        /// The style's own default quality (imgproxy's, thumbor's); nil: the pipeline's.
        var defaultQuality: Int?
        /// An asked format is answered whatever `Accept` says (imgproxy's and thumbor's rule);
        /// native URLs send WebP and AVIF only to clients that take them.
        var strictFormat = false
        /// Formats answered as asked even when a better one is negotiated (imgproxy's
        /// `IMGPROXY_ENFORCE_*`).
        var enforced: [ImageEncoding.Format] = []
        /// The `Vary` the route's own reading of the request adds (Client Hints).
        var vary: String?
        /// How long caches may keep the answer (a signed URL's); nil: the configuration's.
        var lifetime: Int64?
    }

    /// An ad-hoc answer: the options' processor chain (with the watermark image they name),
    /// under the URL style's `rules`.
    func answer(_ request: Request, _ context: EaselRequestContext, head: Bool, source: Source, options: ImagePlan,
                rules: StyleRules) async throws -> Response {
        var rules = rules
        if let expires = options.expires {
            // imgproxy's `expires`: a URL past its time is gone (404, as imgproxy answers); until
            // then caches keep the answer no longer than the URL lives.
            let now = Int64(checked: Date().timeIntervalSince1970)
            guard expires > now else { throw RequestError.notFound("the URL has expired") }
            rules.lifetime = min(rules.lifetime ?? .max, expires - now)
        }
        var output = OutputPolicy(format: options.format, quality: options.quality ?? rules.defaultQuality, strict: rules.strictFormat,
                                  formatQuality: options.formatQuality, maxBytes: options.maxBytes)
        output.enforced = rules.enforced
        output.keepsRights = options.keepCopyright
        output.autoQuality = options.autoQuality
        output.bestFormat = options.bestFormat
        output.keepsSourceFormat = options.keepsSourceFormat
        output.animationsAsWebP = options.animationsAsWebP
        // The URL's own fallback is held to the sources' rules before the source is read (a
        // refused one is a 403 whether or not the source would have needed it, `raw` and
        // `skip_processing` included, which never fall back).
        let fallback = try options.fallback.map { source in
            let url = try resolve(source)
            if !url.isFileURL, url.scheme != "s3" { try sourcePolicy.checkListed(url) } // (s3: `resolve` checked it)
            return Fallback(url: url, cacheKey: sourceKey(source))
        }
        if mayAnswerUnprocessed(source, options),
           let response = try await unprocessedAnswer(request, context, head: head, source: source, options: options,
                                                      output: output, rules: rules) {
            return response
        }
        try RequestError.planning { try options.checkMarkCount() }
        var madeWith: [PreparedWatermark] = []
        var marks: [MarkImage] = []
        for watermark in options.watermarks {
            if case .text(let text) = watermark.image {
                marks.append(try await textMark(text.scaled(by: options.dpr)))
            } else {
                let prepared = try await watermarkImage(watermark.image)
                madeWith.append(prepared)
                marks.append(MarkImage(image: prepared.image, identifier: prepared.identifier))
            }
        }
        var frame: PreparedWatermark?
        if let source = options.frame {
            frame = try await watermarkImage(.source(source))
            madeWith.append(contentsOf: frame.map { [$0] } ?? [])
        }
        var spec = AnswerSpec(source: source, processing: .processors(try options.processors(for: configuration, marks: marks, frame: frame)),
                              output: output)
        spec.page = options.page
        spec.embeddedThumbnail = options.embeddedThumbnail
        spec.autoRotate = options.autoRotate
        spec.video = options.video
        spec.madeWith = madeWith
        spec.sourceLimits = options.sourceLimits
        spec.lifetime = rules.lifetime
        spec.maxAge = options.maxAge
        spec.disposition = options.contentDisposition ? (options.filename ?? Self.sourceName(source), options.attachment) : nil
        spec.vary = rules.vary
        spec.fallback = fallback
        spec.cacheTags = options.cacheTags
        return try await answer(request, context, head: head, spec)
    }

    /// Whether an `If-None-Match` value names `etag`: weak comparison, as RFC 9110 asks (a CDN
    /// may send W/"…"), or `*`.
    static func matches(_ ifNoneMatch: String?, etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch.split(separator: ",").contains {
            let tag = $0.trimmingCharacters(in: .whitespaces)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
        }
    }

    /// The identity a purge of `source` removes (the pipeline's source key), as a purge computes it.
    func purgeIdentity(url: URL, key: String?) -> String { ImageRequest(url: url, cacheKey: key).sourceKey ?? url.absoluteString }

    /// One image answer to make: what the pipeline makes of which source, and how HTTP delivers it.
    struct AnswerSpec {
        var source: Source
        var processing: ImageRequest.Processing
        /// What the URL asked of the output (the pipeline decides the encoding from it and `Accept`).
        var output: OutputPolicy
        var page = 0
        var embeddedThumbnail = false
        var autoRotate = true
        var video = VideoPosition.default
        /// Prepared images the answer is made with (watermarks, a frame): their sources tag it.
        var madeWith: [PreparedWatermark] = []
        var sourceLimits: DecodingLimits?
        /// An expiring URL's remaining life in seconds (its `Cache-Control`, never a ready answer).
        var lifetime: Int64?
        /// The URL's own `max-age`, at most the server's.
        var maxAge: Int?
        /// `Content-Disposition`'s file name and kind.
        var disposition: (name: String, attachment: Bool)?
        /// The route's own `Vary` (Client Hints).
        var vary: String?
        /// The URL's own fallback image (else the server's).
        var fallback: Fallback?
        /// Tags added to the sources' in the cache tag header.
        var cacheTags: [String] = []
    }

    /// The answer `spec` asks for: every URL style ends here. The request carries what the
    /// client said (`Accept`, Save-Data, the hints the plan read), what the URL asked (`output`)
    /// and the fallback image; the pipeline decides the encoding and its full `Vary`, answers
    /// from memory or makes it (admitted, or 429), answers the fallback image for a missing or
    /// broken source, and is left when the client closes its connection. This only writes HTTP.
    func answer(_ request: Request, _ context: EaselRequestContext, head: Bool, _ spec: AnswerSpec) async throws -> Response {
        var pipelineRequest = ImageRequest(url: try resolve(spec.source), processing: spec.processing, cacheKey: sourceKey(spec.source))
        pipelineRequest.page = spec.page
        pipelineRequest.embeddedThumbnail = spec.embeddedThumbnail
        pipelineRequest.autoRotate = spec.autoRotate
        pipelineRequest.video = spec.video
        pipelineRequest.sourceLimits = spec.sourceLimits
        pipelineRequest.client = client(request, hints: spec.vary)
        pipelineRequest.output = spec.output
        pipelineRequest.madeWith = spec.madeWith
        pipelineRequest.fallback = fallbackSource(spec.fallback ?? configuredFallback)
        pipelineRequest.deadline = .milliseconds(Int64(checked: configuration.requestTimeout * 1000))
        let channel = context.channel
        // Set when the client left before the answer was ready (not when the wait was ended
        // because the answer was).
        let gone = Locked(false)
        let result: Result<EncodedResponse, PipelineError>
        do throws(PipelineError) {
            result = .success(try await pipeline.answer(for: pipelineRequest, admission: admission) {
                if await Self.waitForClose(channel) { gone.withLock { $0 = true } }
            })
        } catch {
            result = .failure(error)
        }
        let answer: EncodedResponse
        switch result {
        case .success(let made): answer = made
        case .failure(.overloaded): throw RequestError.tooManyRequests
        case .failure(.cancelled) where gone.withLock({ $0 }): throw ClientGone()
        case .failure(let error): throw error
        }
        AccessLog.Note.current?.tier = answer.tier.rawValue
        return write(served(answer, spec, sourceKey: pipelineRequest.sourceKey ?? ""), to: request, context, head: head)
    }

    /// What the client said, for the pipeline: its `Accept`, its Save-Data (when the server
    /// honours it: then every answer varies on it) and the hints the route read (`hints`, a
    /// `Vary` list: Client Hints).
    func client(_ request: Request, hints: String? = nil) -> ClientPreferences {
        ClientPreferences(accept: request.headers[.accept], saveData: saves(request), honoursSaveData: configuration.delivery.saveData,
                          hints: hints.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? [])
    }

    /// The pipeline's answer as HTTP, with what `spec` adds: `Cache-Control` (an expiring URL's
    /// remaining life or the URL's own max-age, never past the server's; a fallback's own),
    /// `Content-Disposition`, an SVG's policy, the cache tags of its source and of what it was
    /// made with, and an offer to the ready answers (only for bytes the memory tier keeps, whose
    /// headers do not depend on the time, and never for a fallback).
    func served(_ answer: EncodedResponse, _ spec: AnswerSpec, sourceKey: String) -> Served {
        let encoded = answer.encoded
        var served = Served(bytes: encoded.bytes, contentType: encoded.contentType, etag: encoded.etag,
                            cacheControl: cacheControl(lifetime: spec.lifetime, maxAge: spec.maxAge), vary: answer.vary)
        if let disposition = spec.disposition {
            served.fields[.contentDisposition] = Self.contentDisposition(disposition.name, format: encoded.encoding.format,
                                                                         attachment: disposition.attachment)
        }
        // An SVG is a document a browser may open on its own: besides its cleaning, it may run
        // nothing and load nothing but its own styles and embedded images.
        if encoded.encoding.format == .svg { served.fields[.contentSecurityPolicy] = Self.svgPolicy }
        // The source's identity, as a purge computes it (`purgeIdentity`), and those of what the
        // answer was made with (a watermark): a purge of any of them bans it in the CDN.
        served.tagged = [sourceKey] + spec.madeWith.map(\.sourceKey)
        served.cacheTags = spec.cacheTags
        if answer.isFallback {
            // Tagged with the source too, so that a purge of the source (once it exists) clears
            // it from CDNs; never past an expiring URL's remaining life.
            served.tagged.insert(contentsOf: answer.fallbackSource.map { [$0] } ?? [], at: 1)
            let maxAge = min(Int64(configuration.maxAge), Int64(configuration.delivery.fallbackMaxAge ?? configuration.maxAge), spec.lifetime ?? .max)
            served.cacheControl = "public, max-age=\(maxAge)"
            served.status = HTTPResponse.Status(code: configuration.delivery.fallbackStatus)
            served.fields[Self.fallbackField] = "1"
        } else if spec.lifetime == nil, answer.isInMemoryTier, let variant = answer.key {
            served.ready = .init(memoryKey: variant.memory, etag: encoded.etag)
        }
        return served
    }

    /// One answer to write as HTTP, however it was made: processed, a fallback, or a source as
    /// it is (`raw`, `skip_processing`).
    struct Served {
        var bytes: ByteBuffer
        var contentType: String
        var etag: String
        var status: HTTPResponse.Status = .ok
        var cacheControl: String
        var vary: String?
        /// Its own fields: `Content-Disposition`, a policy, `X-Easel-Fallback`.
        var fields: HTTPFields = [:]
        /// The sources whose cache tags name it, and the URL's own tags after them.
        var tagged: [String] = []
        var cacheTags: [String] = []
        /// Offered to the ready answers; nil withdraws an earlier offer for the request.
        var ready: ReadyAnswers.Offer?
    }

    /// The one writer of image answers: the headers every answer has (type, `ETag`,
    /// `Cache-Control`, `Vary`, cache tags, its own fields), the ready answers' offer or
    /// withdrawal, a 304 for a matching `If-None-Match` (200 answers only), and the body (none
    /// for HEAD).
    func write(_ served: Served, to request: Request, _ context: EaselRequestContext, head: Bool) -> Response {
        var headers: HTTPFields = [.contentType: served.contentType, .eTag: served.etag, .cacheControl: served.cacheControl]
        if let vary = served.vary { headers[.vary] = vary }
        headers.append(contentsOf: served.fields)
        tag(&headers, sources: served.tagged, extra: served.cacheTags)
        // (Conditional requests have no ready-answer key.)
        if readyAnswers.isEnabled, let readyKey = ReadyAnswers.Key(request.head) {
            if let entry = served.ready {
                readyAnswers.offer(readyKey, entry, on: context.channel.eventLoop)
            } else {
                readyAnswers.withdraw(readyKey, on: context.channel.eventLoop)
            }
        }
        if served.status == .ok, Self.matches(request.headers[.ifNoneMatch], etag: served.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentLength] = String(served.bytes.readableBytes)
        return Response(status: served.status, headers: headers, body: head ? .init() : .init(byteBuffer: served.bytes))
    }

    /// Returns when the client has gone (see `DisconnectWatcher`): true; or when the task is
    /// cancelled: false.
    @discardableResult
    static func waitForClose(_ channel: any Channel) async -> Bool {
        let once = OnceContinuation()
        let cancelled = Locked(false)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                once.set(continuation)
                DisconnectWatcher.watch(channel, once)
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            once.resume()
        }
        DisconnectWatcher.unwatch(channel, once)
        return !cancelled.withLock { $0 }
    }

    /// `Cache-Control` of an answer: an expiring URL's remaining life (`lifetime`), or the URL's
    /// own `maxAge`, never past the server's; else the server's.
    func cacheControl(lifetime: Int64?, maxAge: Int?) -> String {
        lifetime.map { "public, max-age=\(min(Int64(configuration.maxAge), $0))" }
            ?? maxAge.map { "public, max-age=\(min(configuration.maxAge, $0))" } ?? cacheControl
    }

    /// Names `sources`' cache tags (`PurgeRelay.surrogateKey`) in the configured header
    /// (`DeliverySettings.cacheTagHeader`), space- or comma-separated as that CDN reads them.
    /// `extra` (a URL's own tags: imgproxy's `cache_tags`) follow, as they are.
    func tag(_ headers: inout HTTPFields, sources: [String], extra: [String] = []) {
        guard let field = cacheTagField else { return }
        headers[field] = (sources.map(PurgeRelay.surrogateKey(forSource:)) + extra)
            .joined(separator: configuration.delivery.commaSeparatedTags ? "," : " ")
    }
}
