import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// thumbor's colour filters and its detail filters (blur, sharpen, noise, convolution).
extension ThumborURL {
    /// The image's colours: `grayscale`, `brightness`, `contrast`, `rgb`, `saturation`,
    /// `colorize`, `equalize`, `curve` and `redeye`.
    static func applyColourFilter(_ f: Filter, to options: inout ImagePlan) throws {
        let args = f.args
        switch f.name {
        case "grayscale":
            // In the URL's order with the other filters, as thumbor applies them.
            try f.noArguments()
            options.adjustments.append(Grayscale())
        case "brightness", "contrast":
            guard args.count == 1, let value = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (-100...100).contains(value) else {
                throw RequestError.invalid("\(f.name) takes one whole number, −100–100")
            }
            options.adjustments.append(f.name == "brightness" ? ChannelCurves.brightness(value) : ChannelCurves.contrast(value))
        case "rgb":
            let values = args.compactMap { RequestNumber.whole($0.trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole) }
            guard args.count == 3, values.count == 3, values.allSatisfy({ (-100...100).contains($0) }) else {
                throw RequestError.invalid("rgb takes three whole numbers, −100–100")
            }
            options.adjustments.append(ChannelCurves.rgb(red: values[0], green: values[1], blue: values[2]))
        case "saturation":
            guard args.count == 1 else { throw RequestError.invalid("saturation takes one number") }
            do { options.adjustments.append(try Saturation(change: try f.number(0))) } catch let error as CodecError {
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
            try f.noArguments()
            options.adjustments.append(Equalize())
        case "curve":
            let lists = try Self.curveLists(args.joined(separator: ","))
            do {
                options.adjustments.append(try ChannelCurves.curve(all: lists[0], red: lists[1], green: lists[2], blue: lists[3]))
            } catch {
                throw RequestError.invalid("bad curve: \(error)")
            }
        case "redeye":
            // Eyes found with OpenCV's cascades inside the faces found, their red pupils
            // corrected (`RedEye`).
            try f.noArguments()
            options.adjustments.append(RedEye())
        default:
            throw RequestError.invalid("\(f.name) is no colour filter")
        }
    }

    /// The image's detail: `blur`, `sharpen`, `noise` and `convolution`.
    static func applyDetailFilter(_ f: Filter, to options: inout ImagePlan) throws {
        let args = f.args
        switch f.name {
        case "blur":
            // blur(radius[, sigma]): a Gaussian of that sigma (default: the radius) cut at
            // the radius; radius 0 is no blur.
            guard (1...2).contains(args.count), let radius = RequestNumber.whole(args[0].trimmingCharacters(in: .whitespaces), in: RequestNumber.anyWhole), (0...150).contains(radius) else {
                throw RequestError.invalid("blur takes a radius 0–150 (a whole number) and an optional sigma")
            }
            // thumbor: a sigma of 0 is the radius.
            let given = args.count > 1 ? try f.number(1) : 0
            let sigma = given == 0 ? Double(radius) : given
            guard radius == 0 || (sigma > 0 && sigma <= 250) else { throw RequestError.invalid("blur's sigma is above 0 and at most 250") }
            if radius > 0 {
                // In the URL's order with the other filters, as thumbor applies them.
                do { options.adjustments.append(try GaussianBlur(sigma: sigma, radius: radius)) } catch { throw RequestError.invalid("bad blur: \(error)") }
            }
        case "sharpen":
            // sharpen(amount, radius, luminance_only), all three required as in thumbor.
            guard args.count == 3 else { throw RequestError.invalid("sharpen takes amount, radius, luminance_only") }
            let amount = try f.number(0), radius = try f.number(1)
            guard let luminanceOnly = Self.boolean(args[2]) else {
                throw RequestError.invalid("sharpen's luminance_only is true or false")
            }
            do {
                var sharpen = try WaveletSharpen(amount: amount, radius: radius, luminanceOnly: luminanceOnly)
                sharpen.ignoresAlpha = true  // (thumbor's filter sharpens the stored colours)
                options.adjustments.append(sharpen)  // (in the URL's order, as thumbor)
            } catch {
                throw RequestError.invalid("bad sharpen: \(error)")
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
        default:
            throw RequestError.invalid("\(f.name) is no detail filter")
        }
    }
}
