import EaselCodecs
import EaselPipeline
import EaselSupport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// imgproxy- and thumbor-compatible URLs, and the info endpoint: each parses its URL into
/// `ProcessingOptions` and ends in the same `answer`, so every style shares one cache entry
/// per image, one purge and one set of limits.
extension ImageServer {
    func imgproxy(_ request: Request, _ context: EaselRequestContext, head: Bool) async throws -> Response {
        let path = request.uri.path
        if path.hasPrefix("/imgproxy/info/") { return try await imgproxyInfo(request, context) }
        // The signature first: nothing of an unsigned URL is parsed.
        try checkImgproxySignature(path.dropFirst("/imgproxy".count))
        let settings = imgproxySettings
        let hints = settings.clientHints ? ClientHints.read { name in HTTPField.Name(name).flatMap { request.headers[$0] } } : nil
        let url = try ImgproxyURL.parse(path.dropFirst("/imgproxy".count), settings: settings, hints: hints)
        return try await answer(request, context, head: head, source: url.source, options: url.options,
                                defaultQuality: ImgproxyURL.defaultQuality, strictFormat: true, enforced: settings.enforcedFormats,
                                vary: settings.clientHints ? ClientHints.vary : nil)
    }

    func thumbor(_ request: Request, _ context: EaselRequestContext, head: Bool) async throws -> Response {
        let path = request.uri.path.dropFirst("/thumbor".count)
        // The signature first: nothing of an unsigned URL is parsed.
        guard let (signature, signedPath) = ThumborURL.signatureAndPath(path) else { throw RequestError.noSuchImage }
        let valid = configuration.thumborSecurityKey.map { ThumborURL.verify(signature: signature, path: signedPath, key: $0) } ?? false
        if !valid, !(signature == "unsafe" && configuration.allowUnsignedAdHoc) {
            throw RequestError.badSignature
        }
        let url = try ThumborURL.parse(path)
        if url.meta { return try await thumborMeta(url) }
        return try await answer(request, context, head: head, source: url.source, options: url.options,
                                defaultQuality: ThumborURL.defaultQuality, strictFormat: true)
    }

    /// thumbor's `meta/` answer: `{"thumbor": {"source": {url, width, height, frameCount},
    /// "operations": […], "target": {width, height}}}` (and `focal_points` for a focal gravity),
    /// from the source's header (read through the pipeline's tiers) and the URL's chain
    /// (`ThumborURL.metaOperations`); no image is made.
    func thumborMeta(_ url: ThumborURL) async throws -> Response {
        var pipelineRequest = ImageRequest(url: try resolve(url.source), cacheKey: sourceKey(url.source))
        pipelineRequest.deadline = .milliseconds(Int64(checked: configuration.requestTimeout * 1000))
        guard admission.enter() else { throw RequestError.tooManyRequests }
        defer { admission.leave() }
        let info = try await pipeline.sourceDetails(for: pipelineRequest).info
        // The geometry only: a watermark changes no size.
        var options = url.options
        options.watermark = nil
        let chain = try options.processors(limit: configuration.maxAdHocSize, maxPixels: configuration.maxOutputPixels, mark: nil)
        let (operations, target) = ThumborURL.metaOperations(chain, width: info.uprightWidth, height: info.uprightHeight)
        var document: [String: Any] = [
            "source": ["url": url.sourceText, "width": info.uprightWidth, "height": info.uprightHeight, "frameCount": info.frameCount],
            "operations": operations,
            "target": ["width": target.0, "height": target.1],
        ]
        if case .focalPixel(let x, let y) = options.gravity {
            document["focal_points"] = [["x": x, "y": y, "height": 1, "width": 1, "z": 1.0, "origin": "Explicit"]]
        }
        let body = try JSONSerialization.data(withJSONObject: ["thumbor": document], options: [.sortedKeys])
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: cacheControl],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// A valid signature with any configured key/salt pair; when unsigned URLs are served,
    /// also `insecure` — or, with no key configured, anything (as imgproxy without a key).
    func checkImgproxySignature(_ path: Substring) throws {
        guard let (signature, signedPath) = ImgproxyURL.signatureAndPath(path) else { throw RequestError.noSuchImage }
        let text = String(signedPath)
        var valid = false
        for signer in imgproxySigners { valid = signer.verify(path: text, signature: String(signature)) || valid }
        if valid || (configuration.allowUnsignedAdHoc && (signature == "insecure" || imgproxySigners.isEmpty)) { return }
        throw RequestError.badSignature
    }

    // MARK: Info

    /// `GET /info/{source}`: facts of a source as JSON (signed like named formats).
    func info(_ request: Request, _ context: EaselRequestContext) async throws -> Response {
        let (_, source) = try Self.split(request.uri.path, prefix: "/info/", withSpec: false)
        let signed = try checkNativeSignature(request)
        if configuration.signNamedFormats, !signed { throw RequestError.badSignature }
        return try await infoAnswer(source, context, lifetime: Self.remainingLifetime(request))
    }

    /// `GET /imgproxy/info/{signature}/{options}/plain/{source}` (or a base64 source): imgproxy's
    /// info form; the options are checked and otherwise not used.
    func imgproxyInfo(_ request: Request, _ context: EaselRequestContext) async throws -> Response {
        try checkImgproxySignature(request.uri.path.dropFirst("/imgproxy/info".count))
        let url = try ImgproxyURL.parse(request.uri.path.dropFirst("/imgproxy/info".count), settings: imgproxySettings)
        if let expires = url.options.expires, expires <= Int64(checked: Date().timeIntervalSince1970) {
            throw RequestError.notFound("the URL has expired")
        }
        return try await infoAnswer(url.source, context)
    }

    func infoAnswer(_ source: Source, _ context: EaselRequestContext, lifetime: Int64? = nil) async throws -> Response {
        var pipelineRequest = ImageRequest(url: try resolve(source), cacheKey: sourceKey(source))
        pipelineRequest.deadline = .milliseconds(Int64(checked: configuration.requestTimeout * 1000))
        guard admission.enter() else { throw RequestError.tooManyRequests }
        defer { admission.leave() }
        let details = try await pipeline.sourceDetails(for: pipelineRequest)
        let body = try await BlockingIOPool.decoding.perform { () throws -> Data in try Self.infoJSON(details) }
        let caching = lifetime.map { "public, max-age=\(min(Int64(configuration.maxAge), $0))" } ?? cacheControl
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: caching],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The info document: the header's facts, the dominant colour and the placeholders.
    static func infoJSON(_ details: SourceDetails) throws -> Data {
        let info = details.info
        var object: [String: Any] = [
            "format": info.fileType.rawValue.lowercased(), "width": info.width, "height": info.height, "size": details.byteCount,
            "orientation": info.orientation, "uprightWidth": info.uprightWidth, "uprightHeight": info.uprightHeight,
            "alpha": info.hasAlpha, "progressive": info.isProgressive, "bitDepth": info.bitDepth, "frames": info.frameCount,
        ]
        object.merge(placeholders(details.preview)) { $1 }
        if !info.entrySizes.isEmpty { object["iconSizes"] = info.entrySizes.map { [$0.width, $0.height] } }
        switch info.colorProfile {
        case .none: break
        case .profile(let profile): object["icc"] = ["description": profile.description, "colorSpace": profile.colorSpace.rawValue]
        case .damaged(let reason): object["icc"] = ["damaged": reason]
        case .tooLarge(let size): object["icc"] = ["tooLarge": size]
        }
        if let exif = info.exif {
            object["exif"] = ["make": exif.make ?? NSNull(), "model": exif.model ?? NSNull(),
                              "dateTaken": exif.dateTaken ?? NSNull(), "gps": exif.hasGPS] as [String: Any]
        }
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// `dominantColor` (`#rrggbb`), `blurhash` (4×3 components) and `thumbhash` (base64).
    package static func placeholders(_ preview: Bitmap) -> [String: Any] {
        let colour = Placeholder.dominantColor(preview)
        var result: [String: Any] = ["dominantColor": String(format: "#%02x%02x%02x", colour.red, colour.green, colour.blue)]
        if let blurHash = try? Placeholder.blurHash(preview) { result["blurhash"] = blurHash }
        if let thumbHash = try? Placeholder.thumbHashBase64(preview) { result["thumbhash"] = thumbHash }
        return result
    }

    // MARK: Watermarks

    /// The watermark image, prepared by the pipeline (once per source, until it is purged).
    func watermarkImage(_ image: ProcessingOptions.WatermarkOptions.Image) async throws -> PreparedWatermark {
        var request: ImageRequest
        switch image {
        case .configured:
            guard let configuredMark else { throw RequestError.invalid("no watermark image is configured") }
            // Keyed as a file-origin source is, so a purge of its path reaches it.
            request = ImageRequest(url: configuredMark, cacheKey: "file://" + Self.escapingNonASCII(configuredMark.path))
        case .source(let source):
            request = ImageRequest(url: try resolve(source), cacheKey: sourceKey(source))
        }
        request.deadline = .milliseconds(Int64(checked: configuration.requestTimeout * 1000))
        do throws(PipelineError) {
            return try await pipeline.watermark(for: request, maxSide: Self.largestMark, admission: admission)
        } catch .overloaded {
            throw RequestError.tooManyRequests
        } catch .decoding(.sideTooLong) {
            throw RequestError.invalid("a watermark image is at most \(Self.largestMark) pixels a side")
        } catch .noSource {
            throw RequestError.noSuchImage
        }
    }

    /// Watermark images are at most this many pixels a side.
    static let largestMark = 2048
}
