import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// imgproxy's geometry options: the size asked for and how it is reached, the part of the
/// image kept and the canvas around it, and the turns and flips.
extension ImgproxyURL {
    /// The size and how it is reached: `resize`, `size`, `resizing_type`, `width`, `height`,
    /// `dpr`, `enlarge`, `min-width`, `min-height`, `zoom` and `max_result_dimension`.
    static func applySizing(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "resize", "rs":
            // rs:type:width:height:enlarge:extend[:gravity[:x:y]]
            try a.atMost(8)
            if let type = a.arg(0) { options.mode = try resizingType(type) }
            try applySize(a, from: 1, to: &options)
        case "size", "s":
            try a.atMost(7)
            try applySize(a, from: 0, to: &options)
        case "resizing_type", "rt":
            try a.atMost(1)
            options.mode = try resizingType(a.args[0])
        case "width", "w":
            try a.atMost(1)
            options.width = try a.int(0, "width") ?? 0
        case "height", "h":
            try a.atMost(1)
            options.height = try a.int(0, "height") ?? 0
        case "dpr":
            try a.atMost(1)
            guard let dpr = try a.double(0, "dpr"), dpr > 0 else { throw RequestError.invalid("dpr is above 0") }
            options.dpr = dpr
        case "enlarge", "el":
            try a.atMost(1)
            options.enlarge = try a.bool(0) ?? false
        case "min-width", "mw":
            try a.atMost(1)
            options.minWidth = try a.int(0, "min-width") ?? 0
        case "min-height", "mh":
            try a.atMost(1)
            options.minHeight = try a.int(0, "min-height") ?? 0
        case "zoom", "z":
            try a.atMost(2)
            guard let x = try a.double(0, "zoom"), x > 0 else { throw RequestError.invalid("zoom is above 0") }
            let y = try a.double(1, "zoom") ?? x
            guard y > 0, x <= Scale.maximumFactor, y <= Scale.maximumFactor else { throw RequestError.invalid("zoom is above 0 and at most \(Scale.maximumFactor)") }
            options.zoom = (x, y)
        case "max_result_dimension", "mrd":
            // Only ever tightens (`parse` keeps the server's when it is lower); 0: the
            // server's. Its own limits still refuse larger requests.
            try a.atMost(1)
            let side = try a.int(0, "size") ?? 0
            options.maxResultSide = side == 0 ? nil : side
        default:
            throw RequestError.invalid("\(a.name) is no size option")
        }
    }

    /// `width:height:enlarge:extend[:gravity[:x:y]]` from argument `first` on: what `size` reads,
    /// and `resize` after its type. An empty argument leaves what it sets as it was.
    private static func applySize(_ a: OptionArguments, from first: Int, to options: inout ImagePlan) throws {
        if let width = try a.int(first, "width") { options.width = width }
        if let height = try a.int(first + 1, "height") { options.height = height }
        if let enlarge = try a.bool(first + 2) { options.enlarge = enlarge }
        if let extend = try a.bool(first + 3) { options.extend = extend }
        if let gravity = try a.gravityGiven(at: first + 4) {
            options.extendGravity = try extendGravity(gravity, Array(a.args.dropFirst(first + 5)), option: a.name)
        }
    }

    /// imgproxy's resizing types (`rt`, and `rs`'s first argument).
    static func resizingType(_ text: Substring) throws -> ResizeMode {
        switch text {
        case "fit": return .fit
        case "fill": return .fill
        case "fill-down": return .fillDown
        case "force": return .exact
        case "auto": return .auto
        default: throw RequestError.invalid("resizing type \(text) is not fit, fill, fill-down, force or auto")
        }
    }

    /// The part of the image kept and the canvas around it: `gravity`, `crop`, `trim`,
    /// `extend`, `extend_aspect_ratio` and `padding`.
    static func applyCropping(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "gravity", "g":
            try a.atMost(3)
            options.gravity = try gravity(a.args[0], Array(a.args.dropFirst()), option: a.name)
        case "crop", "c":
            let width = try a.double(0, "width") ?? 0, height = try a.double(1, "height") ?? 0
            guard width >= 0, height >= 0 else { throw RequestError.invalid("crop sizes are ≥ 0") }
            try a.atMost(5)
            options.cropGravity = try a.gravityGiven(at: 2).map { try gravity($0, Array(a.args.dropFirst(3)), option: "crop") }
            options.crop = .size(width: width, height: height, gravity: .center)
        case "trim", "t":
            options.trim = try trim(a)
        case "extend", "ex":
            options.extend = try a.bool(0) ?? false
            try a.atMost(4)
            if let gravity = try a.gravityGiven(at: 1) { options.extendGravity = try extendGravity(gravity, Array(a.args.dropFirst(2)), option: a.name) }
        case "extend_aspect_ratio", "extend_ar", "exar":
            options.aspectExtend = try a.bool(0) ?? false
            try a.atMost(4)
            if let gravity = try a.gravityGiven(at: 1) {
                options.aspectExtendGravity = try extendGravity(gravity, Array(a.args.dropFirst(2)), option: a.name)
            }
        case "padding", "pd":
            // imgproxy's CSS-like reading: top for every side; then right (and left), bottom,
            // left, each when given (an empty argument keeps what it carried); all 0: none.
            try a.atMost(4)
            let top = try a.int(0, "padding") ?? 0
            let right = try a.int(1, "padding") ?? top
            let bottom = try a.int(2, "padding") ?? top
            let left = try a.int(3, "padding") ?? right
            options.padding = top + right + bottom + left > 0 ? (top, right, bottom, left) : nil
        default:
            throw RequestError.invalid("\(a.name) is no cropping option")
        }
    }

    /// `trim:threshold[:colour[:equal_hor[:equal_ver]]]`: the border within threshold levels on
    /// every channel of the colour (else of the top-left pixel).
    private static func trim(_ a: OptionArguments) throws -> Trim {
        try a.atMost(4)
        guard let threshold = try a.int(0, "threshold"), threshold <= 255 else { throw RequestError.invalid("trim: threshold is 0–255") }
        var trim = try Trim(tolerance: threshold, metric: .perChannel)
        if let text = a.arg(1) {
            guard let colour = ImagePlan.colour(text) else { throw RequestError.invalid("trim: bad colour \(text)") }
            trim.colour = [colour.red, colour.green, colour.blue]
        }
        trim.equalHorizontal = try a.bool(2) ?? false
        trim.equalVertical = try a.bool(3) ?? false
        return trim
    }

    /// Turns and flips: `flip`, `rotate` and `auto_rotate`.
    static func applyOrientation(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "flip", "fl":
            try a.atMost(2)
            options.flipHorizontal = try a.bool(0) ?? false
            options.flipVertical = try a.bool(1) ?? false
        case "rotate", "rot":
            try a.atMost(1)
            guard let degrees = RequestNumber.whole(a.args[0], in: RequestNumber.anyWhole), degrees % 90 == 0, degrees.magnitude <= 3600 else {
                throw RequestError.invalid("rotate takes 0, 90, 180 or 270 (multiples of 90)")
            }
            options.rotation = degrees
        case "auto_rotate", "ar":
            // On by default, as imgproxy's IMGPROXY_AUTO_ROTATE; off: the pixels as stored.
            try a.atMost(1)
            options.autoRotate = try a.bool(0) ?? true
        default:
            throw RequestError.invalid("\(a.name) is no orientation option")
        }
    }
}

extension OptionArguments {
    /// Argument `index` as a gravity's name, nil when it is absent; offsets after an absent
    /// gravity would be read by nothing, so they are a 400.
    func gravityGiven(at index: Int) throws -> Substring? {
        if let gravity = arg(index) { return gravity }
        guard args.dropFirst(index + 1).allSatisfy(\.isEmpty) else {
            throw RequestError.invalid("option \(name): offsets without a gravity")
        }
        return nil
    }
}
