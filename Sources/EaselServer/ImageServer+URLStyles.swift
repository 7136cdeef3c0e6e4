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

    /// thumbor's `meta/` answer, as thumbor writes it: `{"thumbor": {"source": {url, width,
    /// height, frameCount}, "operations": […], "target": {width, height}, "focal_points": […]}}`
    /// — the source's width and height being the answer's, as thumbor reports them — from the
    /// source's header (read through the pipeline's tiers) and the URL's chain
    /// (`ThumborURL.metaOperations`); a trim's box and the smart detectors' points need the
    /// pixels, and only then is the source decoded. No image is made.
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
        let seen = try await PipelineError.typingLibraryFailures { try await metaPixels(options, request: pipelineRequest) }
        var (width, height) = (info.uprightWidth, info.uprightHeight)
        var operations: [[String: Any]] = []
        for cut in seen.cuts {
            operations.append(["type": "crop", "left": cut[0], "top": cut[1], "right": cut[2], "bottom": cut[3]])
            (width, height) = (cut[2] - cut[0], cut[3] - cut[1])
        }
        let (more, target, focusIn) = ThumborURL.metaOperations(chain, width: width, height: height,
                                                                focus: FaceDetector.centreOfMass(seen.points))
        let document: [String: Any] = [
            "source": ["url": url.sourceText, "width": target.0, "height": target.1, "frameCount": info.frameCount],
            "operations": operations + more,
            "target": ["width": target.0, "height": target.1],
            "focal_points": Self.metaFocalPoints(url, options: options, points: seen.points, size: focusIn),
        ]
        let body = try JSONSerialization.data(withJSONObject: ["thumbor": document], options: [.sortedKeys])
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: cacheControl],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// thumbor's focal points: the detectors' (a face's centre with its box and area; a corner),
    /// else `focal()`'s region, else the alignment's point of the image before its resize.
    static func metaFocalPoints(_ url: ThumborURL, options: ImagePlan, points: [FaceDetector.FocalPoint], size: (Int, Int)) -> [[String: Any]] {
        if !points.isEmpty {
            return points.map { point in
                ["x": Int(point.x), "y": Int(point.y), "z": point.weight, "height": point.height, "width": point.width,
                 "origin": point.isFace ? "Face Detection" : "alignment"]
            }
        }
        if let region = url.focalRegion, case .focalPixel(let x, let y) = options.gravity {
            return [["x": x, "y": y, "z": region[2] * region[3], "height": region[3], "width": region[2], "origin": "Explicit"]]
        }
        let (across, down): (Double, Double) = switch options.gravity {
        case .northWest: (0, 0)
        case .north: (0.5, 0)
        case .northEast: (1, 0)
        case .west: (0, 0.5)
        case .east: (1, 0.5)
        case .southWest: (0, 1)
        case .south: (0.5, 1)
        case .southEast: (1, 1)
        default: (0.5, 0.5)
        }
        return [["x": Int(Double(size.0) * across), "y": Int(Double(size.1) * down), "z": 1.0, "height": 1, "width": 1, "origin": "alignment"]]
    }

    /// What `meta/` reads from the pixels: the trim's box and the manual crop beside it (as crops
    /// of the source, thumbor's order), and the smart detectors' points in what they leave. The
    /// source is decoded only when the URL has a trim or `smart`.
    func metaPixels(_ options: ImagePlan, request: ImageRequest) async throws -> (cuts: [[Int]], points: [FaceDetector.FocalPoint]) {
        guard options.trim != nil || options.gravity.isSmart else { return ([], []) }
        let image = try await pipeline.image(for: request).image
        let trim = options.trim, smart = options.gravity.isSmart
        return try await BlockingIOPool.decoding.perform { () throws -> (cuts: [[Int]], points: [FaceDetector.FocalPoint]) in
            var cuts: [[Int]] = []
            var region = image
            if let trim, let box = trim.contentBounds(of: image) {
                cuts.append([box.x, box.y, box.x + box.width, box.y + box.height])
                if let manual = trim.thenCrop, manual.count == 4 {
                    // thumbor's crop moved by the trim and held inside what the trim left.
                    let l = min(max(manual[0] - box.x, 0), box.width), t = min(max(manual[1] - box.y, 0), box.height)
                    let r = min(max(manual[2] - box.x, 0), box.width), b = min(max(manual[3] - box.y, 0), box.height)
                    if l < r, t < b { cuts.append([l, t, r, b]) }
                }
                region = try trim.process(image)
            } else if let trim, let manual = trim.thenCrop, manual.count == 4 {
                // All border: thumbor keeps the image and cuts the manual crop from it.
                let l = min(max(manual[0], 0), image.width), t = min(max(manual[1], 0), image.height)
                let r = min(max(manual[2], 0), image.width), b = min(max(manual[3], 0), image.height)
                if l < r, t < b { cuts.append([l, t, r, b]) }
                region = try trim.process(image)
            }
            return (cuts, smart ? try FaceDetector.thumborPoints(of: region) : [])
        }
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
