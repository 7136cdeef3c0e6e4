import EaselSupport
import Crypto
import EaselCodecs
import EaselPipeline
import Foundation
import Hummingbird

/// thumbor-compatible URLs (under `/thumbor/`):
/// `/{signature|unsafe}/[trim[:top-left|:bottom-right][:tolerance]/][AxB:CxD/][[adaptive-][full-]fit-in/][-]WxH/[halign/][valign/][smart/][filters:…/]{source}`.
///
/// The signature is thumbor's: urlsafe base64 (with padding) of HMAC-SHA1(`THUMBOR_SECURITY_KEY`,
/// everything after the signature segment, as written). Filters: `quality`, `format`, `blur`,
/// `grayscale`, `round_corner`, `watermark`, `focal`, `strip_exif`, `strip_icc`, `fill`,
/// `background_color`, `upscale`, `no_upscale`, `sharpen`, `brightness`, `contrast`, `rgb`,
/// `saturation`, `colorize`, `equalize`, `curve`, `noise`, `convolution`, `rotate`,
/// `proportion`, `stretch`, `max_age`; another is a 400 that names it.
struct ThumborURL {
    var options: ImagePlan
    var source: ImageServer.Source
    var signature: Substring
    /// What the signature covers: everything after `/{signature}/`.
    var signedPath: Substring
    /// The source as the URL writes it (after any `extract_focal()`).
    var sourceText: String
    /// `meta/`: thumbor's JSON of the source, the operations and the target, not the image.
    var meta = false

    /// The signature segment and what it covers (everything after `/{signature}/`).
    static func signatureAndPath(_ path: Substring) -> (Substring, Substring)? {
        let rest = path.drop { $0 == "/" }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return (rest[..<slash], rest[rest.index(after: slash)...])
    }

    /// thumbor's default quality (`QUALITY`).
    static let defaultQuality = 80

    /// - Parameter path: the request path after the `/thumbor` prefix (starting with `/`).
    /// - Parameter nesting: how deep in `extract_focal()`'s sources this URL is (ten at most).
    static func parse(_ path: Substring, nesting: Int = 0) throws -> ThumborURL {
        let rest = path.drop { $0 == "/" }
        guard let slash = rest.firstIndex(of: "/") else { throw RequestError.noSuchImage }
        let signature = rest[..<slash]
        let signedPath = rest[rest.index(after: slash)...]
        var segments = signedPath.split(separator: "/", omittingEmptySubsequences: false)[...]
        var options = ImagePlan()
        options.mode = .fill
        var fitIn = false, stretch = false, extractFocal = false, upscale: Bool?
        var filled: (colour: (UInt8, UInt8, UInt8)?, transparent: Bool, fillTransparent: Bool, auto: Bool)?

        func next(_ matches: (Substring) -> Bool) -> Substring? {
            guard let first = segments.first, matches(first) else { return nil }
            segments.removeFirst()
            return first
        }
        // `meta/`: thumbor's JSON metadata endpoint.
        let meta = next({ $0 == "meta" }) != nil
        // trim[:top-left|:bottom-right][:tolerance]: thumbor's Euclidean colour distance from
        // that corner's pixel, 0–442.
        if let trim = next({ $0 == "trim" || $0.hasPrefix("trim:") }) {
            var parts = trim.split(separator: ":", omittingEmptySubsequences: false).dropFirst()
            var reference = Trim.Reference.topLeft
            if let corner = parts.first, corner == "top-left" || corner == "bottom-right" {
                reference = corner == "top-left" ? .topLeft : .bottomRight
                parts = parts.dropFirst()
            }
            var tolerance = 0
            if let text = parts.first {
                guard parts.count == 1, let value = RequestNumber.whole(text, in: RequestNumber.anyWhole), (0...Trim.maximumTolerance(.euclidean)).contains(value) else {
                    throw RequestError.invalid("bad trim \(trim): trim[:top-left|:bottom-right][:tolerance 0–442]")
                }
                tolerance = value
            }
            options.trim = Trim(tolerance: tolerance, metric: .euclidean, reference: reference)
        }
        if let crop = next(Self.isManualCrop) {
            let numbers = crop.split(whereSeparator: { $0 == "x" || $0 == ":" }).compactMap { RequestNumber.whole($0, in: RequestNumber.anyWhole) }
            guard numbers.count == 4 else { throw RequestError.invalid("bad crop \(crop)") }
            if numbers != [0, 0, 0, 0] {
                options.crop = .edges(left: numbers[0], top: numbers[1], right: numbers[2], bottom: numbers[3])
            }
        }
        if let fit = next({ $0.hasSuffix("fit-in") }) {
            switch fit {
            case "fit-in": break
            case "adaptive-fit-in": options.fitVariant = (adaptive: true, full: false)
            case "full-fit-in": options.fitVariant = (adaptive: false, full: true)
            case "adaptive-full-fit-in": options.fitVariant = (adaptive: true, full: true)
            default: throw RequestError.invalid("\(fit) is not one of fit-in, adaptive-fit-in, full-fit-in, adaptive-full-fit-in")
            }
            fitIn = true
        }
        if let size = next(Self.isDimensions) {
            let parts = size.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
            func side(_ text: Substring) throws -> (Int, Bool) {
                let flip = text.hasPrefix("-")
                let digits = flip ? text.dropFirst() : text
                if digits.isEmpty || digits == "orig" { return (0, flip) }
                guard let value = RequestNumber.whole(digits), value >= 0 else { throw RequestError.invalid("bad size \(size)") }
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
        // thumbor's smart: its face detector first, then its feature detector (here attention).
        if next({ $0 == "smart" }) != nil { options.gravity = .smart(.face) }
        if var filters = next({ $0.hasPrefix("filters:") }) {
            // A filter's argument may hold slashes (a watermark's URL): the segment goes on
            // until the parentheses close.
            var joined = String(filters)
            while joined.filter({ $0 == "(" }).count > joined.filter({ $0 == ")" }).count, let more = segments.first {
                joined += "/" + more
                segments.removeFirst()
            }
            filters = Substring(joined)
            // Each filter once: a repeated one would override the first (filters apply in a
            // fixed order, not in the URL's). Watermarks excepted: each draws one more mark.
            var seen = Set<String>()
            var backgroundColour: (UInt8, UInt8, UInt8)?
            for filter in try Self.filters(filters.dropFirst("filters:".count)) {
                let (name, args) = filter
                guard name == "watermark" || seen.insert(name).inserted else { throw RequestError.invalid("filter \(name) is given twice") }
                func noArguments() throws {
                    guard args.isEmpty else { throw RequestError.invalid("\(name)() takes no arguments") }
                }
                func number(_ index: Int) throws -> Double {
                    guard index < args.count, let value = RequestNumber.decimal(args[index].trimmingCharacters(in: .whitespaces)) else {
                        throw RequestError.invalid("filter \(name) needs a number as argument \(index + 1)")
                    }
                    return value
                }
                switch name {
                case "quality":
                    guard args.count == 1, let quality = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (1...100).contains(quality) else {
                        throw RequestError.invalid("quality takes one whole number, 1–100")
                    }
                    options.quality = quality
                case "format":
                    guard args.count == 1 else { throw RequestError.invalid("format takes one name") }
                    options.format = try ImgproxyURL.outputFormat(Substring(args[0].trimmingCharacters(in: .whitespaces)))
                case "blur":
                    // blur(radius[, sigma]): a Gaussian of that sigma (default: the radius) cut at
                    // the radius; radius 0 is no blur.
                    guard (1...2).contains(args.count), let radius = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (0...150).contains(radius) else {
                        throw RequestError.invalid("blur takes a radius 0–150 (a whole number) and an optional sigma")
                    }
                    // thumbor: a sigma of 0 is the radius.
                    let given = args.count > 1 ? try number(1) : 0
                    let sigma = given == 0 ? Double(radius) : given
                    guard radius == 0 || (sigma > 0 && sigma <= 250) else { throw RequestError.invalid("blur's sigma is above 0 and at most 250") }
                    options.blur = radius > 0 ? sigma : nil
                    options.blurRadius = radius > 0 ? radius : nil
                case "sharpen":
                    // sharpen(amount, radius, luminance_only), all three required as in thumbor.
                    guard args.count == 3 else { throw RequestError.invalid("sharpen takes amount, radius, luminance_only") }
                    let amount = try number(0), radius = try number(1)
                    guard let luminanceOnly = Self.boolean(args[2]) else {
                        throw RequestError.invalid("sharpen's luminance_only is true or false")
                    }
                    do {
                        options.waveletSharpen = try WaveletSharpen(amount: amount, radius: radius, luminanceOnly: luminanceOnly)
                    } catch {
                        throw RequestError.invalid("bad sharpen: \(error)")
                    }
                case "grayscale":
                    try noArguments()
                    options.grayscale = true
                case "round_corner":
                    // round_corner(a|b, r, g, b[, transparent]): `a` across, `b` (default `a`) down.
                    guard let first = args.first else { throw RequestError.invalid("round_corner needs a radius") }
                    let radii = first.split(separator: "|", omittingEmptySubsequences: false).map { RequestNumber.decimal($0.trimmingCharacters(in: .whitespaces)) }
                    guard (1...2).contains(radii.count), let a = radii[0], let b = radii.last ?? nil,
                          a.isFinite, b.isFinite, a > 0, b > 0, a <= 8192, b <= 8192 else {
                        throw RequestError.invalid("bad round_corner radius \(first): a or a|b, above 0 and at most 8192")
                    }
                    options.cornerRadii = (a, b)
                    // The colour is required, as in thumbor; `transparent` (default false) leaves the
                    // corners transparent instead.
                    guard (4...5).contains(args.count) else { throw RequestError.invalid("round_corner takes a|b, r, g, b[, transparent]") }
                    guard let r = UInt8(args[1].trimmingCharacters(in: .whitespaces)), let g = UInt8(args[2].trimmingCharacters(in: .whitespaces)),
                          let b = UInt8(args[3].trimmingCharacters(in: .whitespaces)) else {
                        throw RequestError.invalid("round_corner colour is r,g,b (0–255)")
                    }
                    var transparent = false
                    if args.count == 5 {
                        guard let value = Self.boolean(args[4]) else { throw RequestError.invalid("round_corner's transparent is true or false") }
                        transparent = value
                    }
                    options.cornerColour = transparent ? nil : (r, g, b)
                case "watermark":
                    // Each watermark filter draws one more mark, in the URL's order.
                    options.watermarks.append(try watermark(args))
                case "focal" where args.isEmpty:
                    // No region: the detectors' (faces, else attention), as smart.
                    options.gravity = .smart(.face)
                case "extract_focal":
                    try noArguments()
                    extractFocal = true
                case "focal":
                    guard args.count == 1, let region = args.first, isManualCrop(Substring(region)) else {
                        throw RequestError.invalid("focal takes AxB:CxD")
                    }
                    let n = region.split(whereSeparator: { $0 == "x" || $0 == ":" }).compactMap { RequestNumber.whole($0, in: RequestNumber.anyWhole) }
                    guard n.count == 4, n.allSatisfy({ (0...(1 << 20)).contains($0) }) else {
                        throw RequestError.invalid("focal takes AxB:CxD (pixels up to 1048576)")
                    }
                    // In the pixels of the source; a manual crop before it moves them.
                    var (left, top) = (0, 0)
                    if case .edges(let l, let t, _, _) = options.crop { (left, top) = (min(max(0, l), 1 << 20), min(max(0, t), 1 << 20)) }
                    options.gravity = .focalPixel(x: (n[0] + n[2]) / 2 - left, y: (n[1] + n[3]) / 2 - top)
                case "strip_exif", "strip_icc":
                    try noArguments()  // answers never carry metadata or a profile (colour is converted to sRGB)
                case "fill":
                    // fill(colour[, fill_transparent]): the colour `fit-in` pads with; with
                    // fill_transparent, the image's own transparent pixels take it too.
                    guard (1...2).contains(args.count) else { throw RequestError.invalid("fill takes a colour and an optional fill_transparent") }
                    let text = args[0].trimmingCharacters(in: .whitespaces)
                    var fillTransparent = false
                    if args.count == 2 {
                        guard let value = Self.boolean(args[1]) else { throw RequestError.invalid("fill's fill_transparent is true or false") }
                        fillTransparent = value
                    }
                    if text == "transparent" {
                        filled = (nil, true, false, false)
                    } else if text == "auto" {
                        // The image's mean colour (every pixel's), as thumbor's fill(auto).
                        filled = (nil, false, false, true)
                    } else if text == "blur" {
                        throw RequestError.invalid("fill(blur) is not supported; name a colour, or auto")
                    } else {
                        guard let colour = ImagePlan.colour(Substring(text)) else { throw RequestError.invalid("bad colour \(text)") }
                        filled = (colour, false, fillTransparent, false)
                    }
                case "background_color":
                    // The colour transparent pixels are composited onto (thumbor's background layer).
                    guard args.count == 1 else { throw RequestError.invalid("background_color takes one colour") }
                    let text = args[0].trimmingCharacters(in: .whitespaces)
                    guard let colour = ImagePlan.colour(Substring(text)) else { throw RequestError.invalid("bad colour \(text)") }
                    backgroundColour = colour
                case "brightness", "contrast":
                    guard args.count == 1, let value = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (-100...100).contains(value) else {
                        throw RequestError.invalid("\(name) takes one whole number, −100–100")
                    }
                    options.adjustments.append(name == "brightness" ? ChannelCurves.brightness(value) : ChannelCurves.contrast(value))
                case "rgb":
                    let values = args.compactMap { RequestNumber.whole($0.trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole) }
                    guard args.count == 3, values.count == 3, values.allSatisfy({ (-100...100).contains($0) }) else {
                        throw RequestError.invalid("rgb takes three whole numbers, −100–100")
                    }
                    options.adjustments.append(ChannelCurves.rgb(red: values[0], green: values[1], blue: values[2]))
                case "saturation":
                    guard args.count == 1 else { throw RequestError.invalid("saturation takes one number") }
                    do { options.adjustments.append(try Saturation(change: try number(0))) } catch let error as CodecError {
                        throw RequestError.invalid("bad saturation: \(error)")
                    }
                case "colorize":
                    let values = args.prefix(3).compactMap { RequestNumber.whole($0.trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole) }
                    guard args.count == 4, values.count == 3, values.allSatisfy({ (0...100).contains($0) }),
                          case let hex = args[3].trimmingCharacters(in: .whitespaces), hex.count == 6,
                          let fill = ImagePlan.colour(Substring(hex)) else {
                        throw RequestError.invalid("colorize takes red, green and blue percents (0–100) and a fill colour RRGGBB")
                    }
                    options.adjustments.append(ChannelCurves.colorize(red: values[0], green: values[1], blue: values[2], fill: fill))
                case "equalize":
                    try noArguments()
                    options.adjustments.append(Equalize())
                case "curve":
                    let lists = try Self.curveLists(args.joined(separator: ","))
                    do {
                        options.adjustments.append(try ChannelCurves.curve(all: lists[0], red: lists[1], green: lists[2], blue: lists[3]))
                    } catch {
                        throw RequestError.invalid("bad curve: \(error)")
                    }
                case "noise":
                    guard (1...2).contains(args.count), let amount = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (0...255).contains(amount) else {
                        throw RequestError.invalid("noise takes an amount 0–255 and an optional seed")
                    }
                    var seed: UInt64 = 0
                    if args.count == 2 {
                        guard let value = UInt64(args[1].trimmingCharacters(in: .whitespaces)) else { throw RequestError.invalid("noise's seed is a whole number ≥ 0") }
                        seed = value
                    }
                    options.adjustments.append(try Noise(amount: amount, seed: seed))
                case "convolution":
                    guard (2...3).contains(args.count), let columns = RequestNumber.whole(args[1].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole) else {
                        throw RequestError.invalid("convolution takes weights (w;w;…), columns and an optional normalize")
                    }
                    let weights = args[0].split(separator: ";", omittingEmptySubsequences: false).map { RequestNumber.decimal($0.trimmingCharacters(in: .whitespaces)) }
                    guard weights.allSatisfy({ $0 != nil }) else { throw RequestError.invalid("convolution weights are numbers separated by ;") }
                    var normalize = true
                    if args.count == 3 {
                        guard let value = Self.boolean(args[2]) else { throw RequestError.invalid("convolution's normalize is true or false") }
                        normalize = value
                    }
                    do {
                        options.adjustments.append(try Convolution(weights: weights.map { $0! }, columns: columns, normalize: normalize))
                    } catch {
                        throw RequestError.invalid("bad convolution: \(error)")
                    }
                case "rotate":
                    guard args.count == 1, let degrees = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), degrees.magnitude <= 3600 else {
                        throw RequestError.invalid("rotate takes a whole number of degrees")
                    }
                    do { options.adjustments.append(try QuarterTurn(degrees: degrees)) } catch {
                        throw RequestError.invalid("rotate takes a multiple of 90 degrees (other angles are not supported)")
                    }
                case "proportion":
                    guard args.count == 1 else { throw RequestError.invalid("proportion takes one number") }
                    let factor = try number(0)
                    guard factor > 0, factor <= 1 else { throw RequestError.invalid("bad proportion: above 0 and at most 1") }
                    options.adjustments.append(try Scale(factor: factor))
                case "frame":
                    // frame(image): a nine-patch frame, read like any source (a watermark's limits).
                    guard args.count == 1, !args[0].isEmpty else { throw RequestError.invalid("frame takes one image") }
                    options.frame = try ImageServer.split("/" + args[0], prefix: "/", withSpec: false).1
                case "max_bytes":
                    guard args.count == 1, let bytes = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), bytes > 0 else {
                        throw RequestError.invalid("max_bytes takes a number of bytes above 0")
                    }
                    options.maxBytes = bytes
                case "autojpg":
                    // thumbor's AUTO_PNG_TO_JPG, on: a PNG source without a format asked for is
                    // answered as JPEG (or WebP or AVIF), which is already how answers are decided.
                    guard args.count <= 1, args.first.map({ Self.boolean($0) == true }) ?? true else {
                        throw RequestError.invalid("autojpg(false) is not supported: a PNG source is answered as JPEG, WebP or AVIF unless format(png) asks for PNG")
                    }
                case "gifv":
                    // thumbor turns an animated GIF into a video (mp4 by default, or webm): here an
                    // animated WebP (every browser plays it in an <img>), whichever is named, until
                    // a video encoder exists. A still source is a still WebP.
                    guard args.count <= 1, ["", "mp4", "webm"].contains(args.first?.trimmingCharacters(in: .whitespaces) ?? "") else {
                        throw RequestError.invalid("gifv takes mp4 or webm")
                    }
                    options.format = .webp
                case "redeye":
                    // Eyes found with OpenCV's cascades inside the faces found, their red pupils
                    // corrected (`RedEye`).
                    try noArguments()
                    options.adjustments.append(RedEye())
                case "stretch":
                    try noArguments()
                    stretch = true
                case "max_age":
                    guard args.count == 1, let seconds = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (0...31_536_000).contains(seconds) else {
                        throw RequestError.invalid("max_age takes seconds, 0–31536000")
                    }
                    options.maxAge = seconds
                case "upscale":
                    try noArguments()
                    upscale = true
                case "no_upscale":
                    try noArguments()
                    upscale = false
                default:
                    throw RequestError.invalid("unknown filter \(name)")
                }
            }
            if let backgroundColour {
                // Two colours for the same transparent pixels, or a flatten a transparent
                // canvas would undo: refused rather than one silently winning.
                if let filled, filled.fillTransparent {
                    throw RequestError.invalid("fill(…, true) and background_color both colour transparent pixels: give one")
                }
                if let filled, filled.transparent || filled.auto, fitIn {
                    throw RequestError.invalid("fill(transparent) and background_color contradict each other")
                }
                options.background = backgroundColour
            }
        }
        var sourceText = segments.joined(separator: "/")
        guard !sourceText.isEmpty else { throw RequestError.notFound("no source in the URL") }
        if extractFocal, nesting < 10, let (image, focal) = Self.extractFocal(sourceText, nesting: nesting) {
            sourceText = image
            options.gravity = focal
        }
        if fitIn {
            options.mode = .fit
            options.enlarge = upscale ?? false
            if let filled {
                options.extend = true
                options.transparentExtend = filled.transparent
                options.extendColour = filled.colour
                options.autoExtendColour = filled.auto
            }
        } else {
            options.enlarge = upscale ?? true
            // stretch(): exactly the size asked for, the aspect ratio not kept (both sides given).
            if stretch, options.width > 0, options.height > 0 { options.mode = .exact }
        }
        if let filled, filled.fillTransparent, let colour = filled.colour { options.background = colour }
        return ThumborURL(options: options, source: try ImageServer.split("/" + sourceText, prefix: "/", withSpec: false).1,
                          signature: signature, signedPath: signedPath, sourceText: sourceText, meta: meta)
    }

    /// thumbor's booleans (`BaseFilter.Boolean`): true/false, 1/0, on/off, yes/no, any case.
    static func boolean(_ text: String) -> Bool? {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "1", "on", "yes": true
        case "false", "0", "off", "no": false
        default: nil
        }
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
