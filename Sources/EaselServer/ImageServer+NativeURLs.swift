import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation
import HTTPTypes
import Hummingbird

/// Native image URLs: `/images/{format or ad-hoc options}/{source}`, signed with `?s=` (and an
/// optional signed `exp`).
extension ImageServer {
    /// Seconds until a URL's `exp` (nil without one): caches must not keep the answer longer.
    static func remainingLifetime(_ request: Request) -> Int64? {
        guard let text = request.uri.queryParameters["exp"], let expiry = Int64(text) else { return nil }
        let now = Int64(checked: Date().timeIntervalSince1970)
        return expiry <= now ? 0 : expiry - now  // no overflow: now ≥ 0
    }

    /// Whether a native URL carries a valid `s` (over the path, and `?exp=` when present). An
    /// `exp` in the past is 410, signed or not: the URL says it has expired.
    /// (`path`: the request's path as `router()` mounts it: `canonicalPath`.)
    func checkNativeSignature(_ request: Request, path: String) throws -> Bool {
        let expiry = request.uri.queryParameters["exp"].map(String.init)
        if let expiry {
            guard let seconds = Int64(expiry) else { throw RequestError.invalid("exp is a UNIX time in seconds") }
            guard seconds > Int64(checked: Date().timeIntervalSince1970) else { throw RequestError.expired }
        }
        guard signer.isEnabled else { return false }
        let signedPath = path + (expiry.map { "?exp=" + $0 } ?? "")
        return signer.verify(path: signedPath, signature: request.uri.queryParameters["s"].map(String.init))
    }

    /// A native spec: a format's name, or ad-hoc options `w=…,h=…` with `fit` (fit, fill,
    /// fill-down, auto, exact), `q` (1–100, `auto` or `auto:TARGET`), `f` (a format, or `auto`:
    /// the smallest the client takes), `dpr` (or `auto`: Client Hints), `w=auto[:fallback]` (the
    /// client's width hint), `g` (gravity: c, n, s, e, w, ne, nw, se, sw,
    /// sm, entropy, fp:X:Y), `blur`, `sharpen`, `page` (of a PDF or TIFF, or a frame of an
    /// animation; from 0), `t` (a video's frame at that second; `keyframe=1`: the key frame at
    /// or before it), and marks, as many as wanted up to 8 (`nativeMark`: `wm`, `wmu`, `wmt`).
    func parse(spec: String, source: Source) throws -> ImagePath {
        if let format = formatsByName[spec] { return ImagePath(processing: .named(format), source: source, spec: spec) }
        guard spec.contains("=") else { throw RequestError.notFound("no format named \(spec)") }
        var options = ImagePlan()
        var width: Int?, height: Int?
        var seen = Set<Substring>()
        for part in spec.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { throw RequestError.invalid("bad option \(part)") }
            // Each option once: a repeated one would leave one of its values ignored.
            // (Marks excepted: each one draws one more.)
            guard ["wm", "wmu", "wmt"].contains(pair[0]) || seen.insert(pair[0]).inserted else {
                throw RequestError.invalid("option \(pair[0]) is given twice")
            }
            try applyNativeOption(pair[0], pair[1], to: &options, width: &width, height: &height)
        }
        let limit = configuration.maxAdHocSize
        guard let width, let height, (1...limit).contains(width), (1...limit).contains(height) else {
            throw RequestError.invalid("w and h are 1–\(limit)")
        }
        guard width * height <= configuration.maxOutputPixels else {
            throw RequestError.invalid("w × h is at most \(configuration.maxOutputPixels) pixels")
        }
        options.width = width
        options.height = height
        return ImagePath(processing: .adHoc(options), source: source, spec: spec)
    }

    /// One native option `name=value` into `options` (the size into `width` and `height`,
    /// checked once all are read).
    func applyNativeOption(_ name: Substring, _ value: Substring, to options: inout ImagePlan, width: inout Int?,
                           height: inout Int?) throws {
        func number(_ name: String, _ range: ClosedRange<Double>) throws -> Double {
            guard let number = RequestNumber.decimal(value, in: range) else {
                throw RequestError.invalid("\(name) is \(range.lowerBound.formatted())–\(range.upperBound.formatted())")
            }
            return number
        }
        switch name {
        case "w" where value == "auto" || value.hasPrefix("auto:"):
            // The client's width (Client Hints), else the fallback given (else no limit but
            // the ad-hoc one).
            width = value == "auto" ? configuration.maxAdHocSize : RequestNumber.whole(value.dropFirst("auto:".count))
            options.widthFromHints = true
        case "w": width = RequestNumber.whole(value)
        case "h": height = RequestNumber.whole(value)
        case "fit":
            guard let mode = ResizeMode(rawValue: String(value)) else {
                throw RequestError.invalid("fit is fit, fill, fill-down, auto or exact")
            }
            options.mode = mode
        case "q":
            if value == "auto" || value.hasPrefix("auto:") {
                // Autoquality, with the server's target or the URL's own (`q=auto:0.003`).
                let target = value == "auto" ? nil : RequestNumber.decimal(value.dropFirst("auto:".count))
                guard value == "auto" || (target.map { $0 > 0 && $0 <= 1 } ?? false) else {
                    throw RequestError.invalid("q=auto:TARGET takes a distance above 0, at most 1")
                }
                options.autoQuality = configuration.autoQuality.settings(target: target)
                break
            }
            guard let quality = RequestNumber.whole(value), (1...100).contains(quality) else { throw RequestError.invalid("q is 1–100, auto or auto:TARGET") }
            options.quality = quality
        case "f" where value == "auto":
            options.bestFormat = true
        case "f":
            guard let type = ImageEncoding.Format(name: value) else {
                throw RequestError.invalid("f is \(ImageEncoding.Format.names) or auto")
            }
            options.format = type
        case "dpr" where value == "auto": options.dprFromHints = true
        case "dpr": options.dpr = try number("dpr", 0.1...8)
        case "g":
            if value.hasPrefix("fp:") {
                let parts = value.split(separator: ":")
                guard parts.count == 3, let x = RequestNumber.decimal(parts[1]), let y = RequestNumber.decimal(parts[2]), (0...1).contains(x), (0...1).contains(y) else {
                    throw RequestError.invalid("g=fp:X:Y takes fractions 0–1")
                }
                options.gravity = .focalPoint(x: x, y: y)
            } else {
                guard let gravity = ImagePlan.gravity(named: value) else {
                    throw RequestError.invalid("g is c, n, s, e, w, ne, nw, se, sw, sm, entropy or fp:X:Y")
                }
                options.gravity = gravity
            }
        case "blur": options.blur = try number("blur", 0.1...250)
        case "sharpen": options.sharpen = try number("sharpen", 0.1...10)
        case "page": options.page = try RequestError.planning { try ImagePlan.page(value) }
        case "t": options.video.second = try number("t", 0...VideoPosition.maxSecond)
        case "keyframe":
            guard let flag = ["1": true, "0": false, "true": true, "false": false][value] else { throw RequestError.invalid("keyframe is 1 or 0") }
            options.video.keyframeOnly = flag
        case "wm", "wmu", "wmt":
            options.watermarks.append(try Self.nativeMark(kind: name, value))
            try RequestError.planning { try options.checkMarkCount() }
        default: throw RequestError.invalid("unknown option \(name)")
        }
    }

    /// A native mark: `wm=[opacity[:position[:x[:y[:scale[:shadow[:rotate]]]]]]]` (the
    /// configured image), `wmu=SOURCE[:…]` (an image source, base64url: a path of the origin or an
    /// allowed URL) or `wmt=TEXT[:opacity[:position[:x[:y[:shadow[:rotate]]]]]]` (Pango markup,
    /// base64url; black sans 16 px unless the markup says otherwise). Positions: c, n, s, e, w,
    /// ne, nw, se (the default), sw, or tile; offsets in pixels of the requested size; `rotate` in
    /// degrees clockwise.
    static func nativeMark(kind: Substring, _ value: Substring) throws -> ImagePlan.Mark {
        var parts = value.split(separator: ":", omittingEmptySubsequences: false)[...]
        var mark = ImagePlan.Mark()
        mark.position = .southEast
        func decoded(_ text: Substring?) throws -> String {
            guard let text, let data = URLSigner.decodeBase64URL(String(text)), let decoded = String(data: data, encoding: .utf8),
                  !decoded.isEmpty else {
                throw RequestError.invalid("\(kind) starts with base64url-encoded text")
            }
            return decoded
        }
        switch kind {
        case "wmu":
            mark.image = .source(try ImageServer.split("/" + (try decoded(parts.popFirst())), prefix: "/", withSpec: false).1)
        case "wmt":
            let text = try decoded(parts.popFirst())
            guard text.utf8.count <= TextMark.maxTextBytes else { throw RequestError.invalid("wmt has at most \(TextMark.maxTextBytes) bytes of text") }
            mark.image = .text(TextMark(text: text, markup: true))
        default:
            mark.image = .configured
        }
        let args = Array(parts)
        guard args.count <= (kind == "wmt" ? 6 : 7) else { throw RequestError.invalid("\(kind) has too many parts") }
        func number(_ index: Int, _ name: String, _ range: ClosedRange<Double>) throws -> Double? {
            guard index < args.count, !args[index].isEmpty else { return nil }
            guard let number = RequestNumber.decimal(args[index], in: range) else {
                throw RequestError.invalid("\(kind): \(name) is \(range.lowerBound.formatted())–\(range.upperBound.formatted())")
            }
            return number
        }
        mark.opacity = try number(0, "opacity", 0...1) ?? 1
        if args.count > 1, !args[1].isEmpty {
            if args[1] == "tile" {
                mark.position = .tiled
            } else {
                guard let gravity = ImagePlan.gravity(named: args[1]), let position = Watermark.Position(gravity) else {
                    throw RequestError.invalid("\(kind): the position is c, n, s, e, w, ne, nw, se, sw or tile")
                }
                mark.position = position
            }
        }
        let offsets = mark.position == .tiled ? 0.0...1_048_576 : -1_048_576.0...1_048_576
        mark.offsetX = Int(checked: (try number(2, "x", offsets) ?? 0).rounded())
        mark.offsetY = Int(checked: (try number(3, "y", offsets) ?? 0).rounded())
        if kind == "wmt" {
            mark.shadow = try number(4, "shadow", 0...Watermark.maxShadowSigma) ?? 0
        } else {
            mark.scale = try number(4, "scale", 0...1) ?? 0
            mark.heightScale = mark.scale
            mark.shadow = try number(5, "shadow", 0...Watermark.maxShadowSigma) ?? 0
        }
        // The last part: degrees clockwise the mark is turned.
        mark.rotation = try number(kind == "wmt" ? 5 : 6, "rotate", -36_000...36_000) ?? 0
        return mark
    }

    /// Client Hints into options that ask for them (`w=auto`, `dpr=auto`): `Sec-CH-DPR` (else
    /// `DPR`) as the DPR, `Sec-CH-Width` (else `Width`, in device pixels) over the DPR as the
    /// width, both lowered to stay within the ad-hoc limits; without a width hint,
    /// `Sec-CH-Viewport-Width` (else `Viewport-Width`, CSS pixels) caps the URL's fallback width
    /// (an image is never wider than the window it is shown in); a hint missing leaves the URL's
    /// fallback. The fields the answer then varies on.
    func applyHints(_ options: inout ImagePlan, _ request: Request) -> String? {
        guard options.widthFromHints || options.dprFromHints else { return nil }
        func field(_ name: String) -> String? { HTTPField.Name(name).flatMap { request.headers[$0] } }
        let hints = ClientHints.read(field)
        var vary: [String] = []
        let limit = Double(configuration.maxAdHocSize), pixels = Double(configuration.maxOutputPixels)
        if options.dprFromHints {
            vary.append("Sec-CH-DPR, DPR")
            options.dpr = hints?.dpr ?? 1
        }
        if options.dprFromHints {
            // A DPR that would take the box (at its fallback width, or the hinted one below)
            // past the limits is lowered to fit.
            let longest = Double(max(options.height, 1))
            options.dpr = max(0.1, min(options.dpr, limit / longest))
        }
        if options.widthFromHints {
            vary.append("Sec-CH-Width, Width, Sec-CH-Viewport-Width, Viewport-Width")
            if let width = hints?.width {
                options.width = max(1, Int(checked: (Double(width) / options.dpr).rounded()))
            } else if let viewport = ClientHints.viewportWidth(field) {
                options.width = min(options.width, viewport)
            }
            // Within the limits at this DPR: the side, and the pixels with the height.
            let most = min(limit / options.dpr, pixels / (Double(max(1, options.height)) * options.dpr * options.dpr))
            options.width = max(1, min(options.width, Int(checked: most.rounded(.down))))
        }
        if options.dprFromHints {
            let longest = Double(max(options.width, options.height, 1))
            options.dpr = max(0.1, min(options.dpr, limit / longest, (pixels / (Double(options.width) * Double(max(1, options.height)))).squareRoot()))
        }
        return vary.joined(separator: ", ")
    }
}
