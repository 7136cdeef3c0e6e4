import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// thumbor's filters (`filters:name(args):name(args)…`): each handed to the function for its
/// concern; the colour and detail filters are in `ThumborURL+ColourFilters.swift`.
extension ThumborURL {
    /// One filter of the `filters:` segment: its name and its arguments as written.
    struct Filter {
        let name: String
        let args: [String]

        /// A 400 unless the filter has no arguments.
        func noArguments() throws {
            guard args.isEmpty else { throw RequestError.invalid("\(name)() takes no arguments") }
        }

        /// Argument `index` (trimmed) as a number, or a 400 naming the filter.
        func number(_ index: Int) throws -> Double {
            guard index < args.count, let value = RequestNumber.decimal(args[index].trimmingCharacters(in: .whitespaces)) else {
                throw RequestError.invalid("filter \(name) needs a number as argument \(index + 1)")
            }
            return value
        }
    }

    /// What filters say that is settled only once the whole URL is read (`settle`), or weighed
    /// against the other filters (`background_color`).
    struct FilterEffects {
        /// `fill`: the colour fit-in pads with (none: transparent, or the image's mean with
        /// `auto`); with `fillTransparent`, the image's own transparent pixels take it too.
        var filled: (colour: (UInt8, UInt8, UInt8)?, transparent: Bool, fillTransparent: Bool, auto: Bool)?
        /// `background_color`: the colour transparent pixels are composited onto.
        var backgroundColour: (UInt8, UInt8, UInt8)?
        /// `background_color`'s alpha (`rrggbbaa`), 255 for an opaque colour.
        var backgroundAlpha: UInt8 = 255
        /// `stretch()`: the exact size asked for, unless fit-in.
        var stretch = false
        /// `extract_focal()`: the focal point from a source that is itself a thumbor URL.
        var extractFocal = false
        /// `upscale()` (true) or `no_upscale()` (false); nil: fit-in's or the box's default.
        var upscale: Bool?
        /// `focal(AxB:CxD)`'s region (left, top, width, height), for `meta/`.
        var focalRegion: [Int]?
    }

    /// The filters (what follows `filters:`), on `options` in the URL's order; what waits for
    /// the rest of the URL is returned. `fitIn`: whether the URL is fit-in.
    static func applyFilters(_ text: Substring, to options: inout ImagePlan, fitIn: Bool) throws -> FilterEffects {
        // Each filter once: a repeated one would override the first (filters apply in a
        // fixed order, not in the URL's). Watermarks excepted: each draws one more mark.
        var seen = Set<String>()
        var effects = FilterEffects()
        for (name, args) in try filters(text) {
            guard name == "watermark" || seen.insert(name).inserted else { throw RequestError.invalid("filter \(name) is given twice") }
            try applyFilter(Filter(name: name, args: args), to: &options, effects: &effects)
        }
        if let backgroundColour = effects.backgroundColour {
            // Two colours for the same transparent pixels, or a flatten a transparent
            // canvas would undo: refused rather than one silently winning.
            if let filled = effects.filled, filled.fillTransparent {
                throw RequestError.invalid("fill(…, true) and background_color both colour transparent pixels: give one")
            }
            if let filled = effects.filled, filled.transparent || filled.auto, fitIn {
                throw RequestError.invalid("fill(transparent) and background_color contradict each other")
            }
            options.background = backgroundColour
            options.backgroundAlpha = effects.backgroundAlpha
        }
        return effects
    }

    /// One filter, handed by its name to the function for its concern; an unknown name is a 400.
    static func applyFilter(_ f: Filter, to options: inout ImagePlan, effects: inout FilterEffects) throws {
        switch f.name {
        case "quality", "format", "strip_exif", "strip_icc", "max_bytes", "autojpg", "gifv", "max_age":
            try applyOutputFilter(f, to: &options)
        case "grayscale", "brightness", "contrast", "rgb", "saturation", "colorize", "equalize", "curve", "redeye":
            try applyColourFilter(f, to: &options)
        case "blur", "sharpen", "noise", "convolution":
            try applyDetailFilter(f, to: &options)
        case "focal", "extract_focal", "rotate", "proportion":
            try applyGeometryFilter(f, to: &options, effects: &effects)
        case "fill", "background_color", "upscale", "no_upscale", "stretch":
            try applyCanvasFilter(f, to: &effects)
        case "watermark", "frame", "round_corner":
            try applyMarkFilter(f, to: &options)
        default:
            throw RequestError.invalid("unknown filter \(f.name)")
        }
    }

    /// The answer's encoding and headers: `quality`, `format`, `strip_exif`, `strip_icc`,
    /// `max_bytes`, `autojpg`, `gifv` and `max_age`.
    static func applyOutputFilter(_ f: Filter, to options: inout ImagePlan) throws {
        let args = f.args
        switch f.name {
        case "quality":
            guard args.count == 1, let quality = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (1...100).contains(quality) else {
                throw RequestError.invalid("quality takes one whole number, 1–100")
            }
            options.quality = quality
        case "format":
            guard args.count == 1 else { throw RequestError.invalid("format takes one name") }
            options.format = try ImgproxyURL.outputFormat(Substring(args[0].trimmingCharacters(in: .whitespaces)))
        case "strip_exif", "strip_icc":
            try f.noArguments()  // answers never carry metadata or a profile (colour is converted to sRGB)
        case "max_bytes":
            guard args.count == 1, let bytes = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), bytes > 0 else {
                throw RequestError.invalid("max_bytes takes a number of bytes above 0")
            }
            options.maxBytes = bytes
        case "autojpg":
            // thumbor's AUTO_PNG_TO_JPG (and AUTO_JPG): `autojpg()` or `autojpg(true)` answers
            // as the client takes best (JPEG, WebP, AVIF), not in the source's format;
            // `autojpg(false)` keeps the source's format, the default.
            guard args.count <= 1, let on = args.isEmpty ? true : Self.boolean(args[0]) else {
                throw RequestError.invalid("autojpg takes true or false")
            }
            options.keepsSourceFormat = !on
        case "gifv":
            // thumbor turns an animated GIF into a video (mp4 by default, or webm): here an
            // animated WebP (every browser plays it in an <img>), whichever is named, until a
            // video encoder exists. A still keeps its format, as in thumbor.
            guard args.count <= 1, ["", "mp4", "webm"].contains(args.first?.trimmingCharacters(in: .whitespaces) ?? "") else {
                throw RequestError.invalid("gifv takes mp4 or webm")
            }
            options.animationsAsWebP = true
        case "max_age":
            guard args.count == 1, let seconds = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (0...31_536_000).contains(seconds) else {
                throw RequestError.invalid("max_age takes seconds, 0–31536000")
            }
            options.maxAge = seconds
        default:
            throw RequestError.invalid("\(f.name) is no output filter")
        }
    }

    /// Where the image is cropped towards and its turns and scale: `focal`, `extract_focal`,
    /// `rotate` and `proportion`.
    static func applyGeometryFilter(_ f: Filter, to options: inout ImagePlan, effects: inout FilterEffects) throws {
        let args = f.args
        switch f.name {
        case "focal" where args.isEmpty:
            // No region: no point, and nothing changes (thumbor runs no detector for it).
            break
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
            effects.focalRegion = [n[0], n[1], n[2] - n[0], n[3] - n[1]]
        case "extract_focal":
            try f.noArguments()
            effects.extractFocal = true
        case "rotate":
            guard args.count == 1, let degrees = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), degrees.magnitude <= 3600 else {
                throw RequestError.invalid("rotate takes a whole number of degrees")
            }
            do { options.adjustments.append(try QuarterTurn(degrees: degrees)) } catch {
                throw RequestError.invalid("rotate takes a multiple of 90 degrees (other angles are not supported)")
            }
        case "proportion":
            guard args.count == 1 else { throw RequestError.invalid("proportion takes one number") }
            let factor = try f.number(0)
            guard factor > 0, factor <= 1 else { throw RequestError.invalid("bad proportion: above 0 and at most 1") }
            var scale = try Scale(factor: factor)
            scale.roundsDown = true  // (thumbor's PIL engine truncates the sides)
            options.adjustments.append(scale)
        default:
            throw RequestError.invalid("\(f.name) is no geometry filter")
        }
    }

    /// How the image meets its box and what shows around and through it: `fill`,
    /// `background_color`, `upscale`, `no_upscale` and `stretch` (settled once the URL is read).
    static func applyCanvasFilter(_ f: Filter, to effects: inout FilterEffects) throws {
        let args = f.args
        switch f.name {
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
                effects.filled = (nil, true, false, false)
            } else if text == "auto" {
                // The image's mean colour (every pixel's), as thumbor's fill(auto).
                effects.filled = (nil, false, false, true)
            } else if text == "blur" {
                throw RequestError.invalid("fill(blur) is not supported; name a colour, or auto")
            } else {
                guard let colour = ImagePlan.colour(Substring(text)) else { throw RequestError.invalid("bad colour \(text)") }
                effects.filled = (colour, false, fillTransparent, false)
            }
        case "background_color":
            // The colour transparent pixels are composited onto (thumbor's background layer).
            guard args.count == 1 else { throw RequestError.invalid("background_color takes one colour") }
            let text = args[0].trimmingCharacters(in: .whitespaces)
            // (`rrggbbaa` too: thumbor's canvas is then that translucent colour.)
            let hex = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
            if hex.count == 8, let value = UInt32(hex, radix: 16) {
                effects.backgroundColour = (UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF))
                effects.backgroundAlpha = UInt8(value & 0xFF)
            } else {
                guard let colour = ImagePlan.colour(Substring(text)) else { throw RequestError.invalid("bad colour \(text)") }
                effects.backgroundColour = colour
            }
        case "stretch":
            try f.noArguments()
            effects.stretch = true
        case "upscale":
            try f.noArguments()
            effects.upscale = true
        case "no_upscale":
            try f.noArguments()
            effects.upscale = false
        default:
            throw RequestError.invalid("\(f.name) is no canvas filter")
        }
    }

    /// What is drawn on or around the image: `watermark`, `frame` and `round_corner`.
    static func applyMarkFilter(_ f: Filter, to options: inout ImagePlan) throws {
        let args = f.args
        switch f.name {
        case "watermark":
            // Each watermark filter draws one more mark, in the URL's order.
            options.watermarks.append(try watermark(args))
        case "frame":
            // frame(image): a nine-patch frame, read like any source (a watermark's limits).
            guard args.count == 1, !args[0].isEmpty else { throw RequestError.invalid("frame takes one image") }
            options.frame = try ImageServer.split("/" + args[0], prefix: "/", withSpec: false).1
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
        default:
            throw RequestError.invalid("\(f.name) is no mark filter")
        }
    }
}
