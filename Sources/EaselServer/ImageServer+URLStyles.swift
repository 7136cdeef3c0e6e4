import Crypto
import EaselCodecs
import EaselPipeline
import EaselSupport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// imgproxy- and thumbor-compatible URLs, and watermarks: each style parses its URL into
/// `ImagePlan` and ends in the same `answer`, so every style shares one cache entry
/// per image, one purge and one set of limits.
extension ImageServer {
    func imgproxy(_ request: Request, _ context: EaselRequestContext, head: Bool) async throws -> Response {
        let path = Self.canonicalPath(request, context, under: "/imgproxy")
        if path.hasPrefix("/imgproxy/info/") { return try await imgproxyInfo(path, context) }
        // The signature first: nothing of an unsigned URL is parsed.
        try checkImgproxySignature(path.dropFirst("/imgproxy".count))
        let settings = imgproxySettings
        let hints = settings.clientHints ? ClientHints.read { name in HTTPField.Name(name).flatMap { request.headers[$0] } } : nil
        let url = try ImgproxyURL.parse(path.dropFirst("/imgproxy".count), settings: settings, hints: hints)
        let rules = StyleRules(defaultQuality: ImgproxyURL.defaultQuality, strictFormat: true, enforced: settings.enforcedFormats,
                               vary: settings.clientHints ? ClientHints.vary : nil)
        return try await answer(request, context, head: head, source: url.source, options: url.options, rules: rules)
    }

    /// The request's path as `router()` mounts its style (`/imgproxy/…` for imgproxy's routes),
    /// wherever an application mounted them: the part below the mount point (the route's
    /// `endpointPath` without its `**`), under `canonical`. Signatures and parsers read this
    /// form, so a URL signed for `easel serve` is valid at any mount point.
    static func canonicalPath(_ request: Request, _ context: EaselRequestContext, under canonical: String) -> String {
        let path = request.uri.path
        guard let endpoint = context.endpointPath, endpoint.hasSuffix("**") else { return path }
        var mount = endpoint.dropLast(2)
        if mount.hasSuffix("/") { mount = mount.dropLast() }
        guard mount != canonical, path.hasPrefix(mount), path.dropFirst(mount.count).first.map({ $0 == "/" }) ?? true else { return path }
        return canonical + path.dropFirst(mount.count)
    }

    func thumbor(_ request: Request, _ context: EaselRequestContext, head: Bool) async throws -> Response {
        let path = Self.canonicalPath(request, context, under: "/thumbor").dropFirst("/thumbor".count)
        // The signature first: nothing of an unsigned URL is parsed.
        guard let (signature, signedPath) = ThumborURL.signatureAndPath(path) else { throw RequestError.noSuchImage }
        let valid = configuration.thumborSecurityKey.map { ThumborURL.verify(signature: signature, path: signedPath, key: $0) } ?? false
        if !valid, !(signature == "unsafe" && configuration.allowUnsignedAdHoc) {
            throw RequestError.badSignature
        }
        let url = try ThumborURL.parse(path)
        if url.meta { return try await thumborMeta(url) }
        return try await answer(request, context, head: head, source: url.source, options: url.options,
                                rules: StyleRules(defaultQuality: ThumborURL.defaultQuality, strictFormat: true))
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
        options.watermarks = []
        let chain = try options.processors(for: configuration)
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

    // MARK: Watermarks

    /// The watermark image, prepared by the pipeline (once per source, until it is purged).
    func watermarkImage(_ image: ImagePlan.Mark.Image) async throws -> PreparedWatermark {
        var request: ImageRequest
        switch image {
        case .configured:
            guard let configuredMark else { throw RequestError.invalid("no watermark image is configured") }
            // Keyed as a file-origin source is, so a purge of its path reaches it.
            request = ImageRequest(url: configuredMark, cacheKey: "file://" + Self.escapingNonASCII(configuredMark.path))
        case .source(let source):
            request = ImageRequest(url: try resolve(source), cacheKey: sourceKey(source))
        case .text:
            throw RequestError.invalid("a text mark has no image source")
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

    /// A text mark drawn (on the decode pool), or the one drawn before: marks are kept by their
    /// identity, at most 16 MiB of them (`TextMarks`).
    func textMark(_ text: TextMark) async throws -> MarkImage {
        // The first 128 bits of the SHA-256 of what makes the pixels: equal marks share keys,
        // and no crafted text takes another's.
        let digest = SHA256.hash(data: Data(text.canonicalDescription.utf8))
        let identifier = "text:" + digest.prefix(16).map { String(format: "%02x", $0) }.joined()
        if let image = textMarks.value(forKey: identifier) { return MarkImage(image: image, identifier: identifier) }
        // Drawn under admission like any other work.
        guard admission.enter() else { throw RequestError.tooManyRequests }
        defer { admission.leave() }
        let image = try await BlockingIOPool.decoding.perform { () throws -> Bitmap in
            do { return try text.render(maxSide: Self.largestMark) } catch { throw RequestError.invalid("\(error)") }
        }
        textMarks.keep(image, forKey: identifier)
        return MarkImage(image: image, identifier: identifier)
    }
}

/// Drawn text marks by identity, bounded in bytes (emptied whole when full).
typealias TextMarks = ByteBoundedMemo<Bitmap>

extension ByteBoundedMemo where Value == Bitmap {
    /// A memo of 16 MiB of marks.
    convenience init() { self.init(byteLimit: 16 << 20) { $0.rowBytes * $0.height } }
}
