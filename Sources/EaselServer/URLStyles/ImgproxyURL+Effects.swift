import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// imgproxy's effects: blur, sharpen, pixelate, the background colour, and Pro's tones.
extension ImgproxyURL {
    /// `blur`, `sharpen`, `pixelate` and `background`; `monochrome`, `duotone` and `colorize`
    /// (`applyTone`).
    static func applyEffect(_ a: OptionArguments, to options: inout ImagePlan) throws {
        switch a.name {
        case "blur", "bl":
            // 0 is imgproxy's "no blur"; a negative sigma is a 400, as in imgproxy.
            try a.atMost(1)
            let sigma = try a.double(0, "sigma") ?? 0
            guard sigma >= 0 else { throw RequestError.invalid("blur: sigma is 0 or more") }
            options.blur = sigma > 0 ? sigma : nil
        case "sharpen", "sh":
            try a.atMost(1)
            let sigma = try a.double(0, "sigma") ?? 0
            guard sigma >= 0 else { throw RequestError.invalid("sharpen: sigma is 0 or more") }
            options.sharpen = sigma > 0 ? sigma : nil
        case "pixelate", "pix":
            try a.atMost(1)
            let size = try a.int(0, "size") ?? 0
            options.pixelate = size > 1 ? size : nil
        case "background", "bg":
            options.background = try background(a.args)
        case "monochrome", "mc", "duotone", "dt", "colorize", "col":
            try applyTone(a, to: &options)
        default:
            throw RequestError.invalid("\(a.name) is no effect option")
        }
    }

    /// `bg:R:G:B` or `bg:hex` (an empty one: none).
    private static func background(_ args: [Substring]) throws -> (red: UInt8, green: UInt8, blue: UInt8)? {
        guard args.count == 1 || args.count == 3 else { throw RequestError.invalid("background is R:G:B (0–255) or a hex colour") }
        if args.count == 3 {
            guard let r = UInt8(args[0]), let g = UInt8(args[1]), let b = UInt8(args[2]) else {
                throw RequestError.invalid("background is R:G:B (0–255) or a hex colour")
            }
            return (r, g, b)
        } else if let colour = ImagePlan.colour(args[0]) {
            return colour
        } else if args[0].isEmpty {
            return nil
        } else {
            throw RequestError.invalid("background is R:G:B (0–255) or a hex colour")
        }
    }

    /// imgproxy Pro's `monochrome:%intensity:%color`, `duotone:%intensity:%color1:%color2` and
    /// `colorize:%opacity:%color:%keep_alpha`: one of each a request (a later one replaces it;
    /// an intensity or opacity of 0 removes it), after the resize, in `adjustments`.
    private static func applyTone(_ arguments: OptionArguments, to options: inout ImagePlan) throws {
        func colour(_ index: Int, _ fallback: RGBColour) throws -> RGBColour {
            guard let text = arguments.arg(index), !text.isEmpty else { return fallback }
            guard let rgb = ImagePlan.colour(text) else { throw RequestError.invalid("\(arguments.name): \(text) is not a hex colour") }
            return RGBColour(red: rgb.red, green: rgb.green, blue: rgb.blue)
        }
        let amount = try arguments.double(0, arguments.name.hasPrefix("col") ? "opacity" : "intensity", in: 0...1) ?? 0
        let step: any ImageProcessor
        switch arguments.name {
        case "monochrome", "mc":
            try arguments.atMost(2)
            options.adjustments.removeAll { $0 is Monochrome }
            step = try Monochrome(intensity: amount, colour: colour(1, Monochrome.defaultColour))
        case "duotone", "dt":
            try arguments.atMost(3)
            options.adjustments.removeAll { $0 is Duotone }
            step = try Duotone(intensity: amount, dark: colour(1, .black), light: colour(2, .white))
        default:
            try arguments.atMost(3)
            options.adjustments.removeAll { $0 is Colorize }
            step = try Colorize(opacity: amount, colour: colour(1, .black), keepAlpha: arguments.bool(2) ?? false)
        }
        if amount > 0 { options.adjustments.append(step) }
    }
}
