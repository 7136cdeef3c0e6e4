import EaselSupport
import Crypto
import EaselCodecs
import EaselPipeline
import Foundation
import Hummingbird

/// thumbor-compatible URLs (under `/thumbor/`):
/// `/{signature|unsafe}/[trim[:top-left|:bottom-right][:tolerance]/][AxB:CxD/][fit-in/][-]WxH/[halign/][valign/][smart/][filters:…/]{source}`.
///
/// The signature is thumbor's: urlsafe base64 (with padding) of HMAC-SHA1(`THUMBOR_SECURITY_KEY`,
/// everything after the signature segment, as written). Filters: `quality`, `format`, `blur`,
/// `grayscale`, `round_corner`, `watermark`, `focal`, `strip_exif`, `strip_icc`, `fill`,
/// `background_color`, `upscale`, `no_upscale`, `sharpen`; another is a 400 that names it.
struct ThumborURL {
    var options: ProcessingOptions
    var source: ImageServer.Source
    var signature: Substring
    /// What the signature covers: everything after `/{signature}/`.
    var signedPath: Substring

    /// The signature segment and what it covers (everything after `/{signature}/`).
    static func signatureAndPath(_ path: Substring) -> (Substring, Substring)? {
        let rest = path.drop { $0 == "/" }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return (rest[..<slash], rest[rest.index(after: slash)...])
    }

    /// thumbor's default quality (`QUALITY`).
    static let defaultQuality = 80

    /// - Parameter path: the request path after the `/thumbor` prefix (starting with `/`).
    static func parse(_ path: Substring) throws -> ThumborURL {
        let rest = path.drop { $0 == "/" }
        guard let slash = rest.firstIndex(of: "/") else { throw RequestError.noSuchImage }
        let signature = rest[..<slash]
        let signedPath = rest[rest.index(after: slash)...]
        var segments = signedPath.split(separator: "/", omittingEmptySubsequences: false)[...]
        var options = ProcessingOptions()
        options.mode = .fill
        var fitIn = false, upscale: Bool?, filled: (colour: (UInt8, UInt8, UInt8)?, transparent: Bool)?

        func next(_ matches: (Substring) -> Bool) -> Substring? {
            guard let first = segments.first, matches(first) else { return nil }
            segments.removeFirst()
            return first
        }
        // thumbor's grammar reads a leading `meta/` as its JSON metadata endpoint (not served).
        if next({ $0 == "meta" }) != nil {
            throw RequestError.invalid("meta (thumbor's metadata as JSON) is not supported")
        }
        if let trim = next({ $0 == "trim" || $0.hasPrefix("trim:") }) {
            let parts = trim.split(separator: ":")
            var tolerance = 0
            for part in parts.dropFirst() {
                if part == "top-left" { continue }
                if part == "bottom-right" { throw RequestError.invalid("trim from the bottom-right pixel is not supported") }
                guard let value = Int(part), (0...442).contains(value) else { throw RequestError.invalid("bad trim tolerance \(part)") }
                tolerance = value
            }
            options.trim = tolerance
        }
        if let crop = next(Self.isManualCrop) {
            let numbers = crop.split(whereSeparator: { $0 == "x" || $0 == ":" }).compactMap { Int($0) }
            guard numbers.count == 4 else { throw RequestError.invalid("bad crop \(crop)") }
            if numbers != [0, 0, 0, 0] {
                options.crop = .edges(left: numbers[0], top: numbers[1], right: numbers[2], bottom: numbers[3])
            }
        }
        if let fit = next({ $0.hasSuffix("fit-in") }) {
            guard fit == "fit-in" else { throw RequestError.invalid("\(fit) is not supported (fit-in is)") }
            fitIn = true
        }
        if let size = next(Self.isDimensions) {
            let parts = size.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
            func side(_ text: Substring) throws -> (Int, Bool) {
                let flip = text.hasPrefix("-")
                let digits = flip ? text.dropFirst() : text
                if digits.isEmpty || digits == "orig" { return (0, flip) }
                guard let value = Int(digits), value >= 0 else { throw RequestError.invalid("bad size \(size)") }
                return (value, flip)
            }
            let (width, flipH) = try side(parts[0]), (height, flipV) = try side(parts[1])
            options.width = width
            options.height = height
            options.flipHorizontal = flipH
            options.flipVertical = flipV
        }
        var horizontal = 1, vertical = 1
        if let align = next({ $0 == "left" || $0 == "center" || $0 == "right" }) {
            horizontal = align == "left" ? 0 : align == "right" ? 2 : 1
        }
        if let align = next({ $0 == "top" || $0 == "middle" || $0 == "bottom" }) {
            vertical = align == "top" ? 0 : align == "bottom" ? 2 : 1
        }
        let gravities: [[Gravity]] = [[.northWest, .north, .northEast], [.west, .center, .east], [.southWest, .south, .southEast]]
        options.gravity = gravities[vertical][horizontal]
        if next({ $0 == "smart" }) != nil { options.gravity = .smart(.attention) }
        if var filters = next({ $0.hasPrefix("filters:") }) {
            // A filter's argument may hold slashes (a watermark's URL): the segment goes on
            // until the parentheses close.
            var joined = String(filters)
            while joined.filter({ $0 == "(" }).count > joined.filter({ $0 == ")" }).count, let more = segments.first {
                joined += "/" + more
                segments.removeFirst()
            }
            filters = Substring(joined)
            for filter in try Self.filters(filters.dropFirst("filters:".count)) {
                let (name, args) = filter
                func number(_ index: Int) throws -> Double {
                    guard index < args.count, let value = Double(args[index].trimmingCharacters(in: .whitespaces)), value.isFinite else {
                        throw RequestError.invalid("filter \(name) needs a number as argument \(index + 1)")
                    }
                    return value
                }
                switch name {
                case "quality":
                    let quality = try number(0)
                    guard (1...100).contains(quality) else { throw RequestError.invalid("quality is 1–100") }
                    options.quality = Int(checked: quality)
                case "format":
                    guard let type = args.first else { throw RequestError.invalid("format needs a name") }
                    options.format = try ImgproxyURL.outputFormat(Substring(type))
                case "blur":
                    let radius = try number(0)
                    let sigma = args.count > 1 ? try number(1) : radius
                    guard radius >= 0, radius <= 150 else { throw RequestError.invalid("blur radius is 0–150") }
                    options.blur = radius > 0 && sigma > 0 ? sigma : nil
                case "sharpen":
                    // thumbor: sharpen(amount, radius, luminance_only); the radius is the sigma here.
                    let radius = args.count > 1 ? try number(1) : 1
                    options.sharpen = radius > 0 ? radius : nil
                case "grayscale": options.grayscale = true
                case "round_corner":
                    // round_corner(a|b, r, g, b[, transparent]): one radius (the first).
                    guard let first = args.first else { throw RequestError.invalid("round_corner needs a radius") }
                    guard let text = first.split(separator: "|").first, let radius = Double(text), radius >= 0, radius <= 8192 else {
                        throw RequestError.invalid("bad round_corner radius \(first)")
                    }
                    options.cornerRadius = radius
                    let transparent = args.count > 4 && args[4] == "1"
                    if !transparent, args.count >= 4 {
                        guard let r = UInt8(args[1]), let g = UInt8(args[2]), let b = UInt8(args[3]) else {
                            throw RequestError.invalid("round_corner colour is r,g,b (0–255)")
                        }
                        options.background = (r, g, b)
                    }
                case "watermark":
                    options.watermark = try watermark(args)
                case "focal":
                    guard let region = args.first, isManualCrop(Substring(region)) else {
                        throw RequestError.invalid("focal takes AxB:CxD")
                    }
                    let n = region.split(whereSeparator: { $0 == "x" || $0 == ":" }).compactMap { Int($0) }
                    guard n.count == 4, n.allSatisfy({ (0...(1 << 20)).contains($0) }) else {
                        throw RequestError.invalid("focal takes AxB:CxD (pixels up to 1048576)")
                    }
                    // In the pixels of the source; a manual crop before it moves them.
                    var (left, top) = (0, 0)
                    if case .edges(let l, let t, _, _) = options.crop { (left, top) = (min(max(0, l), 1 << 20), min(max(0, t), 1 << 20)) }
                    options.gravity = .focalPixel(x: (n[0] + n[2]) / 2 - left, y: (n[1] + n[3]) / 2 - top)
                case "strip_exif", "strip_icc":
                    break  // answers never carry metadata or a profile (colour is converted to sRGB)
                case "fill", "background_color":
                    guard let text = args.first else { throw RequestError.invalid("\(name) needs a colour") }
                    if text == "transparent" {
                        filled = (nil, true)
                    } else if text == "auto" {
                        throw RequestError.invalid("\(name)(auto) is not supported; name a colour")
                    } else {
                        guard let colour = ProcessingOptions.colour(Substring(text)) else { throw RequestError.invalid("bad colour \(text)") }
                        filled = (colour, false)
                        if name == "background_color" { options.background = colour }
                    }
                    if name == "background_color" { filled = nil }
                case "upscale": upscale = true
                case "no_upscale": upscale = false
                default:
                    throw RequestError.invalid("unknown filter \(name)")
                }
            }
        }
        let sourceText = segments.joined(separator: "/")
        guard !sourceText.isEmpty else { throw RequestError.notFound("no source in the URL") }
        if fitIn {
            options.mode = .fit
            options.enlarge = upscale ?? false
            if let filled {
                options.extend = true
                options.transparentExtend = filled.transparent
                if let colour = filled.colour { options.background = colour }
            }
        } else {
            options.enlarge = upscale ?? true
            if let colour = filled?.colour { options.background = colour }
        }
        return ThumborURL(options: options, source: try ImageServer.split("/" + sourceText, prefix: "/", withSpec: false).1,
                          signature: signature, signedPath: signedPath)
    }

    /// `watermark(image, x, y, alpha[, w_ratio, h_ratio])`: x and y in pixels (negative from
    /// the right or bottom), `center`, or `repeat`; alpha is transparency 0–100.
    static func watermark(_ args: [String]) throws -> ProcessingOptions.WatermarkOptions {
        guard args.count >= 4 else { throw RequestError.invalid("watermark takes image, x, y, alpha") }
        var mark = ProcessingOptions.WatermarkOptions()
        mark.image = .source(try ImageServer.split("/" + args[0], prefix: "/", withSpec: false).1)
        guard let alpha = Double(args[3]), (0...100).contains(alpha) else { throw RequestError.invalid("watermark alpha is 0–100") }
        mark.opacity = 1 - alpha / 100
        let x = args[1].trimmingCharacters(in: .whitespaces), y = args[2].trimmingCharacters(in: .whitespaces)
        if x == "repeat" || y == "repeat" {
            mark.position = .tiled
        } else {
            // Each axis: a margin from the near edge, from the far edge when written with `-`
            // (`-0` included), or centred.
            func axis(_ text: String, _ name: String) throws -> (side: Int, margin: Int) {
                if text == "center" { return (1, 0) }
                guard let value = Int(text), value.magnitude <= 1 << 20 else { throw RequestError.invalid("bad watermark \(name) \(text)") }
                return (text.hasPrefix("-") ? 2 : 0, Int(value.magnitude))
            }
            let (h, dx) = try axis(x, "x"), (v, dy) = try axis(y, "y")
            let positions: [[Watermark.Position]] = [[.northWest, .north, .northEast], [.west, .center, .east], [.southWest, .south, .southEast]]
            mark.position = positions[v][h]
            mark.offsetX = dx
            mark.offsetY = dy
        }
        if args.count >= 6 {
            func ratio(_ text: String) throws -> Double {
                if text == "none" { return 0 }
                guard let value = Double(text), (0...100).contains(value) else { throw RequestError.invalid("bad watermark ratio \(text)") }
                return value / 100
            }
            mark.widthRatio = try ratio(args[4])
            mark.heightRatio = try ratio(args[5])
            guard mark.heightRatio == 0 else {
                throw RequestError.invalid("watermark h_ratio is not supported (give none); w_ratio sets the mark's width")
            }
        }
        return mark
    }

    static func isManualCrop(_ text: Substring) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { part in
            let sides = part.split(separator: "x", omittingEmptySubsequences: false)
            return sides.count == 2 && sides.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        }
    }

    static func isDimensions(_ text: Substring) -> Bool {
        let parts = text.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        return parts.allSatisfy { part in
            let digits = part.hasPrefix("-") ? part.dropFirst() : part
            return digits.isEmpty || digits == "orig" || digits.allSatisfy(\.isNumber)
        }
    }

    /// `name(arg,arg):name()…` → names and arguments (arguments may hold `:` and `/` inside the
    /// parentheses, e.g. a watermark URL).
    static func filters(_ text: Substring) throws -> [(String, [String])] {
        var result: [(String, [String])] = []
        var index = text.startIndex
        while index < text.endIndex {
            guard let open = text[index...].firstIndex(of: "(") else { throw RequestError.invalid("bad filters \(text)") }
            let name = String(text[index..<open])
            var depth = 0, close: Substring.Index?
            var cursor = open
            while cursor < text.endIndex {
                if text[cursor] == "(" { depth += 1 }
                if text[cursor] == ")" { depth -= 1; if depth == 0 { close = cursor; break } }
                cursor = text.index(after: cursor)
            }
            guard let close else { throw RequestError.invalid("unclosed filter \(name)") }
            let inner = text[text.index(after: open)..<close]
            let decoded = inner.contains("%") ? (String(inner).removingPercentEncoding ?? String(inner)) : String(inner)
            result.append((name, decoded.isEmpty ? [] : decoded.split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
            index = text.index(after: close)
            if index < text.endIndex, text[index] == ":" { index = text.index(after: index) }
        }
        return result
    }

    /// thumbor's signature of `path` (what follows `/{signature}/`).
    static func signature(path: Substring, key: String) -> String {
        let code = HMAC<Insecure.SHA1>.authenticationCode(for: Data(path.utf8), using: SymmetricKey(data: Data(key.utf8)))
        return Data(code).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// Whether `signature` is thumbor's for `path`, spelt as thumbor writes and checks it: the
    /// 28 characters of padded urlsafe base64, compared whole (thumbor's signer compares the
    /// strings, so it too refuses the unpadded form); in constant time.
    static func verify(signature: Substring, path: Substring, key: String) -> Bool {
        let expected = Self.signature(path: path, key: key)
        return URLSigner.constantTimeEqual(Array(expected.utf8), Array(signature.utf8))
    }
}
