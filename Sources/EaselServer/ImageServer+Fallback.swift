import EaselCodecs
import EaselPipeline
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The fallback image and Save-Data (`DeliverySettings`).
extension ImageServer {
    /// A fallback image: the configured one (`DeliverySettings.fallbackImage`) or a URL's own
    /// (imgproxy's `fallback_image_url`), resolved like a source, with its source key (nil:
    /// the configured image's, made from its file path or checked when it is read).
    struct Fallback: Sendable {
        var url: URL
        var cacheKey: String?
    }

    /// The configured fallback image, if any.
    var configuredFallback: Fallback? { fallbackURL.map { Fallback(url: $0, cacheKey: nil) } }

    static let fallbackField = HTTPField.Name("X-Easel-Fallback")!
    static let saveDataField = HTTPField.Name("Save-Data")!
    static let acceptCHField = HTTPField.Name("Accept-CH")!

    /// Whether the request asks to save data and the server honours it.
    func saves(_ request: Request) -> Bool {
        configuration.delivery.saveData && request.headers[Self.saveDataField]?.trimmingCharacters(in: .whitespaces).lowercased() == "on"
    }

    /// Errors the fallback image answers for: a source that is missing (no such file, an
    /// origin's 4xx or 5xx, a download that failed) or cannot be decoded (damaged, unknown, over
    /// the limits). Not: the client's own mistakes (a bad URL, a refused source), an overloaded
    /// server, a cancelled request, or time running out (the request's deadline and a slow
    /// download are one error: a working source is never replaced because it was slow).
    static func fallsBack(_ error: PipelineError) -> Bool {
        switch error {
        case .fileNotFound, .httpStatus, .network, .tooManyRedirects, .tooLarge, .decoding: true
        default: false
        }
    }

    /// The fallback image, made as the source would have been (the same processing and
    /// output), answered with `fallbackStatus`, `fallbackMaxAge` (or the usual max-age) and
    /// `X-Easel-Fallback: 1`. It is cached under its own identity, never as the source; its cache
    /// tags name the source too, so that a purge of the source (once it exists) clears it from
    /// CDNs. Never a ready answer. Its own failure is the source's error.
    /// (`spec.fallback` is the image; `spec.vary` the answer's own `Vary`, Save-Data included.)
    func fallbackAnswer(_ request: Request, _ context: EaselRequestContext, head: Bool, _ spec: AnswerSpec, sourceKey: String?,
                        error: PipelineError) async throws -> Response {
        guard let image = spec.fallback else { throw error }
        let (processing, output, madeWith, sourceLimits) = (spec.processing, spec.output, spec.madeWith, spec.sourceLimits)
        let (lifetime, vary, cacheTags) = (spec.lifetime, spec.vary, spec.cacheTags)
        let answer: EncodedResponse
        let fallbackKey: String?
        do {
            let url = image.url.isFileURL || image.cacheKey != nil ? image.url : try resolve(.remote(image.url))
            var fallback = ImageRequest(url: url, processing: processing,
                                        cacheKey: image.cacheKey ?? (url.isFileURL ? "file://" + Self.escapingNonASCII(url.path) : nil))
            fallback.client = ClientPreferences(accept: request.headers[.accept], saveData: saves(request))
            fallback.output = output
            // The URL's own limits on its source hold for the image that stands in for it.
            fallback.sourceLimits = sourceLimits
            fallback.deadline = .milliseconds(Int64(checked: configuration.requestTimeout * 1000))
            fallback.madeWith = madeWith
            fallbackKey = fallback.sourceKey
            answer = try await pipeline.answer(for: fallback, admission: admission)
            AccessLog.Note.current?.tier = answer.tier.rawValue
        } catch PipelineError.overloaded {
            throw RequestError.tooManyRequests
        } catch let fallbackError {
            logger.warning("the fallback image failed too", metadata: ["error": "\(error)", "fallback error": "\(fallbackError)"])
            throw error
        }
        logger.info("answered with the fallback image", metadata: ["error": "\(error)"])
        let encoded = answer.encoded
        // (Never past an expiring URL's remaining life.)
        let maxAge = min(Int64(configuration.maxAge), Int64(configuration.delivery.fallbackMaxAge ?? configuration.maxAge), lifetime ?? .max)
        var headers: HTTPFields = [
            .contentType: encoded.contentType,
            .eTag: encoded.etag,
            .cacheControl: "public, max-age=\(maxAge)",
            Self.fallbackField: "1",
        ]
        if let joined = Self.vary(answer.vary, vary) { headers[.vary] = joined }
        tag(&headers, sources: [sourceKey, fallbackKey].compactMap { $0 } + madeWith.map(\.sourceKey), extra: cacheTags)
        if readyAnswers.isEnabled, let readyKey = ReadyAnswers.Key(request.head) { readyAnswers.withdraw(readyKey, on: context.channel.eventLoop) }
        let status = HTTPResponse.Status(code: configuration.delivery.fallbackStatus)
        if status == .ok, Self.matches(request.headers[.ifNoneMatch], etag: encoded.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentLength] = String(encoded.count)
        return Response(status: status, headers: headers, body: head ? .init() : .init(byteBuffer: encoded.bytes))
    }
}
