import EaselCodecs
import EaselPipeline
import EaselSupport
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What an info request asks for beyond the header's facts and the placeholders: a palette,
/// perceptual hashes, the crop a size and gravity would choose, the faces, the mean colour.
struct InfoOptions: Sendable, Equatable {
    /// Colours in the palette (0: none; else 2…256).
    var palette = 0
    /// dHash and pHash.
    var hashes = false
    /// The window a crop of this size (pixels, or fractions of the source below 1) would take
    /// with this gravity.
    var crop: Crop?
    /// The faces' boxes.
    var faces = false
    /// The mean colour (imgproxy's `average`; transparent pixels left out unless asked).
    var average = false
    var averageIncludesTransparent = false
    /// The frame of a video the facts and extras are of (native `t`, imgproxy's `vts`).
    var video = VideoPosition()
    /// imgproxy's names and shapes for what it has (`palette` as `R`, `G`, `B`, `A`, relative
    /// `crop`, `objects`, `average`).
    var imgproxyStyle = false

    struct Crop: Sendable, Equatable {
        var width: Double
        var height: Double
        var gravity: Gravity
    }

    /// Whether the answer needs the analysis decode (`FaceDetector.decodeNeed`): faces, and a
    /// crop placed by what is in the image.
    var needsAnalysis: Bool {
        if faces { return true }
        guard let crop else { return false }
        return crop.gravity.offset(freeX: 0, freeY: 0) == nil
    }

    /// The native form: `?palette=5&hashes=1&crop=300x200&gravity=face&faces=1&average=1`, and
    /// `t=SECONDS` for a video's frame.
    static func native(_ query: (String) -> Substring?) throws -> InfoOptions {
        var options = InfoOptions()
        func flag(_ name: String) throws -> Bool {
            guard let value = query(name) else { return false }
            switch value {
            case "1", "true", "t", "yes": return true
            case "0", "false", "f", "no": return false
            default: throw RequestError.invalid("\(name) is 1 or 0")
            }
        }
        if let palette = query("palette") { options.palette = try colours(palette) }
        options.hashes = try flag("hashes")
        options.faces = try flag("faces")
        options.average = try flag("average")
        if let second = query("t") {
            guard let value = RequestNumber.decimal(second, in: 0...VideoPosition.maxSecond) else {
                throw RequestError.invalid("t is 0–\(Int(VideoPosition.maxSecond)) seconds")
            }
            options.video.second = value
        }
        if let crop = query("crop") {
            let sides = crop.split(separator: "x", omittingEmptySubsequences: false)
            guard sides.count == 2 else { throw RequestError.invalid("crop is WIDTHxHEIGHT") }
            var gravity = Gravity.center
            if let name = query("gravity") {
                guard let named = ImagePlan.gravity(named: name) else { throw RequestError.invalid("unknown gravity \(name)") }
                gravity = named
            }
            options.crop = Crop(width: try side(sides[0]), height: try side(sides[1]), gravity: gravity)
        }
        return options
    }

    /// Takes imgproxy's info options out of the segments before the source: `palette:N` (`p`),
    /// `crop:W:H[:gravity]` (`c`), `detect_objects:1` (`do`), `average:1[:ignore_transparent]`
    /// (`avg`), and Easel's `hashes:1`; the other segments are left for the processing parser
    /// (`expires`, `page`, presets…).
    static func imgproxy(_ segments: inout [Substring], separator: Character) throws -> InfoOptions {
        var options = InfoOptions()
        options.imgproxyStyle = true
        var index = 0
        func flag(_ text: Substring?) -> Bool { ["1", "t", "true"].contains(text ?? "") }
        while index < segments.count, segments[index] != "plain", segments[index].contains(separator) {
            let parts = segments[index].split(separator: separator, omittingEmptySubsequences: false)
            let args = parts.dropFirst()
            var taken = true
            switch parts[0] {
            case "palette", "p":
                let count = args.first ?? "0"
                options.palette = count == "0" ? 0 : try colours(count)
            case "crop", "c":
                guard args.count >= 2 else { throw RequestError.invalid("crop takes width:height[:gravity]") }
                let width = try side(args[args.startIndex]), height = try side(args[args.startIndex + 1])
                var gravity = Gravity.center
                if args.count > 2 {
                    let name = args[args.startIndex + 2]
                    if name == "obj" {
                        gravity = .smart(.face)
                    } else if let named = ImagePlan.gravity(named: name) {
                        gravity = named
                    } else {
                        throw RequestError.invalid("unknown gravity \(name)")
                    }
                }
                options.crop = width > 0 && height > 0 ? Crop(width: width, height: height, gravity: gravity) : nil
            case "detect_objects", "do":
                options.faces = flag(args.first)
            case "average", "avg":
                options.average = flag(args.first)
                if args.count > 1 { options.averageIncludesTransparent = !flag(args[args.startIndex + 1]) }
            case "hashes":
                options.hashes = flag(args.first)
            default:
                taken = false
            }
            if taken { segments.remove(at: index) } else { index += 1 }
        }
        return options
    }

    private static func colours(_ text: Substring) throws -> Int {
        guard let count = RequestNumber.whole(text, in: 2...ImageAnalysis.maxPaletteColors) else {
            throw RequestError.invalid("palette is 2–\(ImageAnalysis.maxPaletteColors) colours")
        }
        return count
    }

    /// A crop side: pixels (1 or more, whole), or a fraction of the source's side (0 < side < 1);
    /// 0 in imgproxy's form is "no crop".
    private static func side(_ text: Substring) throws -> Double {
        guard let value = RequestNumber.decimal(text), value >= 0, value <= 16_777_216, value < 1 || value.rounded() == value else {
            throw RequestError.invalid("a crop side is a fraction below 1 or whole pixels")
        }
        return value
    }
}

extension ImageServer {
    /// `GET /info/{source}`: facts of a source as JSON (signed like named formats).
    func info(_ request: Request, _ context: EaselRequestContext) async throws -> Response {
        let path = Self.canonicalPath(request, context, under: "/info")
        let (_, source) = try Self.split(path, prefix: "/info/", withSpec: false)
        let signed = try checkNativeSignature(request, path: path)
        if configuration.signNamedFormats, !signed { throw RequestError.badSignature }
        let options = try InfoOptions.native { request.uri.queryParameters[Substring($0)] }
        return try await infoAnswer(source, context, options: options, lifetime: Self.remainingLifetime(request))
    }

    /// `GET /imgproxy/info/{signature}/{options}/plain/{source}` (or a base64 source): imgproxy's
    /// info form. Its info options (`InfoOptions.imgproxy`) are answered; the processing options
    /// left are checked (an expired URL is a 404) and otherwise not used.
    func imgproxyInfo(_ canonicalPath: String, _ context: EaselRequestContext) async throws -> Response {
        let path = canonicalPath.dropFirst("/imgproxy/info".count)
        try checkImgproxySignature(path)
        var segments = path.drop { $0 == "/" }.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count > 1 else { throw RequestError.noSuchImage }
        let signature = segments.removeFirst()
        let options = try InfoOptions.imgproxy(&segments, separator: imgproxySettings.separator)
        let rest = "/" + ([signature] + segments).joined(separator: "/")
        let url = try ImgproxyURL.parse(Substring(rest), settings: imgproxySettings)
        if let expires = url.options.expires, expires <= Int64(checked: Date().timeIntervalSince1970) {
            throw RequestError.notFound("the URL has expired")
        }
        var extras = options
        extras.video = url.options.video
        return try await infoAnswer(url.source, context, options: extras)
    }

    func infoAnswer(_ source: Source, _ context: EaselRequestContext, options: InfoOptions = InfoOptions(),
                    lifetime: Int64? = nil) async throws -> Response {
        if options.faces || options.crop?.gravity == .smart(.face), !FaceDetector.isAvailable {
            throw RequestError.notImplemented("face detection needs OpenCV's cascades (opencv-data)")
        }
        var pipelineRequest = ImageRequest(url: try resolve(source), cacheKey: sourceKey(source))
        pipelineRequest.deadline = .milliseconds(Int64(checked: configuration.requestTimeout * 1000))
        pipelineRequest.video = options.video
        guard admission.enter() else { throw RequestError.tooManyRequests }
        defer { admission.leave() }
        let body = try await PipelineError.typingLibraryFailures {
            let details = try await pipeline.sourceDetails(for: pipelineRequest, analysis: options.needsAnalysis)
            return try await BlockingIOPool.decoding.perform { () throws -> Data in try Self.infoJSON(details, options: options) }
        }
        let caching = lifetime.map { "public, max-age=\(min(Int64(configuration.maxAge), $0))" } ?? cacheControl
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: caching],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The info document: the header's facts, the dominant colour and the placeholders, and what
    /// `options` asks for.
    static func infoJSON(_ details: SourceDetails, options: InfoOptions = InfoOptions()) throws -> Data {
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
        if let video = info.video {
            object["format"] = video.container
            object["video"] = ["duration": video.duration ?? NSNull(), "codec": video.codec, "streams": video.streams,
                               "pixelAspect": video.pixelAspect, "frameSecond": video.position.second] as [String: Any]
        }
        object.merge(try extras(details, options: options)) { $1 }
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// The parts of the info document `options` asks for.
    static func extras(_ details: SourceDetails, options: InfoOptions) throws -> [String: Any] {
        var object: [String: Any] = [:]
        let preview = details.preview
        let style = options.imgproxyStyle
        func hex(_ r: UInt8, _ g: UInt8, _ b: UInt8) -> String { String(format: "#%02x%02x%02x", r, g, b) }
        if options.palette > 0 {
            object["palette"] = try ImageAnalysis.palette(preview, colors: options.palette).map { colour -> [String: Any] in
                style ? ["R": colour.red, "G": colour.green, "B": colour.blue, "A": 255]
                    : ["color": hex(colour.red, colour.green, colour.blue), "share": (colour.share * 10_000).rounded() / 10_000]
            }
        }
        if options.hashes {
            object["hashes"] = ["dhash": ImageAnalysis.hex(try ImageAnalysis.differenceHash(preview)),
                                "phash": ImageAnalysis.hex(try ImageAnalysis.perceptualHash(preview))]
        }
        if options.average {
            let mean = averageColour(preview, includingTransparent: options.averageIncludesTransparent)
            object["average"] = style ? ["R": mean.0, "G": mean.1, "B": mean.2, "A": mean.3] as [String: Any]
                : ["color": hex(mean.0, mean.1, mean.2), "alpha": mean.3] as [String: Any]
        }
        // Boxes in the source's upright pixels, from the analysis decode's.
        let width = details.info.uprightWidth, height = details.info.uprightHeight
        let analysis = details.analysis
        let scale = analysis.map { Double(width) / Double($0.width) } ?? 1
        func relative(_ x: Int, _ y: Int, _ w: Int, _ h: Int, style: Bool) -> [String: Any] {
            let fractions: [String: Any] = ["left": Double(x) / Double(width), "top": Double(y) / Double(height),
                                            "width": Double(w) / Double(width), "height": Double(h) / Double(height)]
            return style ? fractions : ["x": x, "y": y, "width": w, "height": h, "relative": fractions]
        }
        func box(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> [String: Any] {
            let px = min(width - 1, Int((Double(x) * scale).rounded())), py = min(height - 1, Int((Double(y) * scale).rounded()))
            let pw = max(1, min(width - px, Int((Double(w) * scale).rounded()))), ph = max(1, min(height - py, Int((Double(h) * scale).rounded())))
            return relative(px, py, pw, ph, style: style)
        }
        if options.faces, let analysis {
            let faces = try FaceDetector.faces(in: analysis)
            if style {
                object["objects"] = faces.map { face in
                    ["class_id": 0, "class_name": "face", "confidence": 1.0].merging(box(face.x, face.y, face.width, face.height)) { $1 }
                }
            } else {
                object["faces"] = faces.map { box($0.x, $0.y, $0.width, $0.height) }
            }
        }
        if let crop = options.crop {
            func pixels(_ side: Double, of whole: Int) -> Int {
                min(whole, max(1, side < 1 ? Int((side * Double(whole)).rounded()) : Int(side)))
            }
            let cropWidth = pixels(crop.width, of: width), cropHeight = pixels(crop.height, of: height)
            if let corner = crop.gravity.offset(freeX: width - cropWidth, freeY: height - cropHeight) {
                object["crop"] = relative(corner.x, corner.y, cropWidth, cropHeight, style: style)
            } else if let analysis {
                // Placed on the analysis decode by what is in the image, then scaled back.
                let windowWidth = max(1, min(analysis.width, Int((Double(cropWidth) / scale).rounded())))
                let windowHeight = max(1, min(analysis.height, Int((Double(cropHeight) / scale).rounded())))
                let corner = try crop.gravity.place(width: windowWidth, height: windowHeight, in: analysis)
                let x = min(width - cropWidth, max(0, Int((Double(corner.x) * scale).rounded())))
                let y = min(height - cropHeight, max(0, Int((Double(corner.y) * scale).rounded())))
                object["crop"] = relative(x, y, cropWidth, cropHeight, style: style)
            }
        }
        return object
    }

    /// The mean colour of the visible pixels (alpha > 0; every pixel when none is, or when
    /// `includingTransparent`), with their mean alpha.
    static func averageColour(_ bitmap: Bitmap, includingTransparent: Bool) -> (UInt8, UInt8, UInt8, UInt8) {
        let rgba = bitmap.converted(to: .rgba8)
        func mean(onlyVisible: Bool) -> (UInt8, UInt8, UInt8, UInt8)? {
            var sums = (0, 0, 0, 0), count = 0
            rgba.withUnsafeBytes { bytes in
                for y in 0..<rgba.height {
                    for x in 0..<rgba.width {
                        let o = y * rgba.rowBytes + x * 4
                        guard !onlyVisible || bytes[o + 3] > 0 else { continue }
                        sums.0 += Int(bytes[o]); sums.1 += Int(bytes[o + 1]); sums.2 += Int(bytes[o + 2]); sums.3 += Int(bytes[o + 3])
                        count += 1
                    }
                }
            }
            guard count > 0 else { return nil }
            func byte(_ sum: Int) -> UInt8 { UInt8((sum + count / 2) / count) }
            return (byte(sums.0), byte(sums.1), byte(sums.2), byte(sums.3))
        }
        return (includingTransparent ? nil : mean(onlyVisible: true)) ?? mean(onlyVisible: false) ?? (0, 0, 0, 0)
    }

    /// `dominantColor` (`#rrggbb`), `blurhash` (4×3 components) and `thumbhash` (base64).
    package static func placeholders(_ preview: Bitmap) -> [String: Any] {
        let colour = Placeholder.dominantColor(preview)
        var result: [String: Any] = ["dominantColor": String(format: "#%02x%02x%02x", colour.red, colour.green, colour.blue)]
        if let blurHash = try? Placeholder.blurHash(preview) { result["blurhash"] = blurHash }
        if let thumbHash = try? Placeholder.thumbHashBase64(preview) { result["thumbhash"] = thumbHash }
        return result
    }
}
