import EaselPipeline
import EaselSupport
import EaselCodecs
import Foundation

/// thumbor's `meta/` operations, `extract_focal()` sources, and the arguments of `curve` and
/// `watermark`.
extension ThumborURL {
    /// `watermark(image, x, y, alpha[, w_ratio, h_ratio])`: x and y in pixels (negative from
    /// the right or bottom), `center`, or `repeat`; alpha is transparency 0–100.
    static func watermark(_ args: [String]) throws -> ImagePlan.Mark {
        guard (4...6).contains(args.count) else { throw RequestError.invalid("watermark takes image, x, y, alpha[, w_ratio[, h_ratio]]") }
        var mark = ImagePlan.Mark()
        mark.image = .source(try ImageServer.split("/" + args[0], prefix: "/", withSpec: false).1)
        guard let alpha = RequestNumber.decimal(args[3]), (0...100).contains(alpha) else { throw RequestError.invalid("watermark alpha is 0–100") }
        mark.opacity = 1 - alpha / 100
        let x = args[1].trimmingCharacters(in: .whitespaces), y = args[2].trimmingCharacters(in: .whitespaces)
        if x == "repeat" || y == "repeat" {
            guard x == y else { throw RequestError.invalid("watermark repeat on one axis only is not supported (repeat both x and y)") }
            mark.position = .spread
        } else {
            // Each axis: a margin from the near edge, from the far edge when written with `-`
            // (`-0` included), or centred. A margin written `20p` is 20 % of the image's side
            // (thumbor rounds it to the nearest pixel of the image the filter draws on).
            func axis(_ text: String, _ name: String) throws -> (side: Int, margin: Int, fraction: Double?) {
                if text == "center" { return (1, 0, nil) }
                let side = text.hasPrefix("-") ? 2 : 0
                if text.hasSuffix("p") {
                    // (Past 100p the mark lies outside the image, as in thumbor.)
                    guard let percent = RequestNumber.whole(String(text.dropFirst(side == 2 ? 1 : 0).dropLast()), in: 0...10_000) else {
                        throw RequestError.invalid("bad watermark \(name) \(text) (a percentage is 0p–10000p)")
                    }
                    return (side, 0, Double(percent) / 100)
                }
                guard let value = RequestNumber.whole(text, in: RequestNumber.anyWhole), value.magnitude <= 1 << 20 else { throw RequestError.invalid("bad watermark \(name) \(text)") }
                return (side, Int(value.magnitude), nil)
            }
            let (h, dx, fx) = try axis(x, "x"), (v, dy, fy) = try axis(y, "y")
            let positions: [[Watermark.Position]] = [[.northWest, .north, .northEast], [.west, .center, .east], [.southWest, .south, .southEast]]
            mark.position = positions[v][h]
            mark.offsetX = dx
            mark.offsetY = dy
            mark.relativeOffsetX = fx
            mark.relativeOffsetY = fy
        }
        // w_ratio and h_ratio: percentages of the image's width and height the mark fits in
        // (`none` or `false`: that side is not limited).
        func ratio(_ text: String) throws -> Double {
            let text = text.trimmingCharacters(in: .whitespaces)
            if ["none", "false", "False", "0"].contains(text) { return 0 }
            guard let value = RequestNumber.decimal(text), value > 0, value <= 100 else { throw RequestError.invalid("bad watermark ratio \(text)") }
            return value / 100
        }
        if args.count >= 5 { mark.scale = try ratio(args[4]) }
        if args.count >= 6 { mark.heightScale = try ratio(args[5]) }
        return mark
    }

    /// thumbor's `meta` operations for `chain` on a source of `width` × `height` (upright): its
    /// manual crop, resizes and flips as thumbor's JSON engine lists them (`crop` with `left`,
    /// `top`, `right`, `bottom`; `resize` with `width`, `height`; `flip_horizontally`,
    /// `flip_vertically`), and the target size they come to. A crop to a box is placed by its
    /// gravity's direction (a smart or focal crop, which needs the pixels, is listed centred);
    /// a trim, which needs the pixels too, is not listed.
    static func metaOperations(_ chain: [any ImageProcessor], width: Int, height: Int,
                               focus: (x: Double, y: Double)? = nil) -> ([[String: Any]], (Int, Int), focusIn: (Int, Int)) {
        var (w, h) = (width, height)
        var operations: [[String: Any]] = []
        // The size the focal points are in: the image before its resize (after any manual crop).
        var focusIn: (Int, Int)?
        func crop(_ left: Int, _ top: Int, _ right: Int, _ bottom: Int) {
            operations.append(["type": "crop", "left": left, "top": top, "right": right, "bottom": bottom])
            (w, h) = (right - left, bottom - top)
        }
        func resize(_ width: Int, _ height: Int) {
            operations.append(["type": "resize", "width": width, "height": height])
            (w, h) = (width, height)
        }
        for step in chain {
            switch step {
            case let step as RegionCrop:
                if case .edges(let left, let top, let right, let bottom) = step.region {
                    let l = min(max(0, left), w), t = min(max(0, top), h)
                    crop(l, t, max(l, min(right, w)), max(t, min(bottom, h)))
                }
            case let step as Resize:
                focusIn = focusIn ?? (w, h)
                let mode = step.effectiveMode(sourceWidth: w, sourceHeight: h)
                let scaled = step.scaledSize(sourceWidth: w, sourceHeight: h)
                switch mode {
                case .fill, .fillDown:
                    // thumbor's order: a crop to the box's aspect ratio in the source's pixels
                    // (its `auto_crop`, with its rounding), then the resize to the box.
                    let (boxWidth, boxHeight) = (step.width, step.height)
                    let sameRatio = (Double(w) / Double(h) * 100).rounded() == (Double(boxWidth) / Double(boxHeight) * 100).rounded()
                    if !sameRatio {
                        let (cropWidth, cropHeight) = Double(boxWidth) / Double(w) > Double(boxHeight) / Double(h)
                            ? (w, max(1, Int(checked: (Double(w) * Double(boxHeight) / Double(boxWidth)).rounded())))
                            : (max(1, Int(checked: (Double(boxWidth) * Double(h) / Double(boxHeight)).rounded(.up))), h)
                        let (cw, ch) = (min(cropWidth, w), min(cropHeight, h))
                        let (x, y) = step.gravity.offset(freeX: w - cw, freeY: h - ch)
                            ?? (Int(checked: (Double(w - cw) / 2).rounded()), Int(checked: (Double(h - ch) / 2).rounded()))
                        crop(x, y, x + cw, y + ch)
                    }
                    if (boxWidth != w || boxHeight != h) && (step.upscale || (boxWidth <= w && boxHeight <= h)) { resize(boxWidth, boxHeight) }
                default:
                    if scaled.width != w || scaled.height != h { resize(scaled.width, scaled.height) }
                }
            case let step as ThumborFill:
                // thumbor's own crop and resize (a smart crop around the detectors' `focus`,
                // centred when nothing was found).
                focusIn = focusIn ?? (w, h)
                let cut = ThumborFill(width: step.width, height: step.height, gravity: step.gravity.isSmart ? .center : step.gravity)
                    .crop(sourceWidth: w, sourceHeight: h, detected: step.gravity.isSmart ? focus : nil)
                if cut.width != w || cut.height != h { crop(cut.x, cut.y, cut.x + cut.width, cut.y + cut.height) }
                if step.width != w || step.height != h { resize(step.width, step.height) }
            case let step as FitIn:
                focusIn = focusIn ?? (w, h)
                let size = step.size(sourceWidth: w, sourceHeight: h)
                if size.width != w || size.height != h { resize(size.width, size.height) }
            case let step as Scale:
                let size = step.size(width: w, height: h)
                if size.width != w || size.height != h { resize(size.width, size.height) }
            case let step as QuarterTurn where step.turns % 2 == 1:
                (w, h) = (h, w)  // (thumbor's JSON engine lists no rotation)
            case let step as Flip:
                if step.horizontal { operations.append(["type": "flip_horizontally"]) }
                if step.vertical { operations.append(["type": "flip_vertically"]) }
            default:
                break
            }
        }
        return (operations, (w, h), focusIn ?? (w, h))
    }

    /// thumbor's `extract_focal()`: a source that is itself a thumbor URL (`[scheme://]host/`
    /// then `{signature|unsafe}/…`, nested up to ten deep) with a manual crop names its image and
    /// a focal point, the crop's centre; the image is then read from this server's own sources.
    /// Nil for any other source (nothing to extract: the filter does nothing, as in thumbor).
    static func extractFocal(_ source: String, nesting: Int = 0) -> (String, Gravity)? {
        var url = source
        guard nesting < 10 else { return nil }
        for level in nesting..<10 {
            // The host: everything up to the first `/` (after a scheme).
            let withoutScheme = url.hasPrefix("http://") ? String(url.dropFirst(7)) : url.hasPrefix("https://") ? String(url.dropFirst(8)) : url
            guard let slash = withoutScheme.firstIndex(of: "/") else { return nil }
            let path = withoutScheme[slash...]
            guard let (signature, _) = signatureAndPath(Substring(path)), signature == "unsafe" || signature.count == 28,
                  let inner = try? parse(Substring(path), nesting: level + 1) else { return nil }
            let image = inner.sourceText
            if case .edges(let left, let top, let right, let bottom) = inner.options.crop, right > left, bottom > top, !image.isEmpty {
                // (Halfway without overflow: right > left ≥ 0, bottom > top ≥ 0.)
                return (image, .focalPixel(x: left + (right - left) / 2, y: top + (bottom - top) / 2))
            }
            guard !image.isEmpty else { return nil }
            url = image
        }
        return nil
    }

    /// `curve`'s four lists, `[(x,y),(x,y),…]` each (all, red, green, blue).
    static func curveLists(_ text: String) throws -> [[(Int, Int)]] {
        var lists: [[(Int, Int)]] = []
        var rest = Substring(text.filter { !$0.isWhitespace })
        while !rest.isEmpty {
            if rest.first == "," { rest = rest.dropFirst() }
            guard rest.first == "[", let close = rest.firstIndex(of: "]") else { throw RequestError.invalid("curve takes four lists [(x,y),…]") }
            let inner = rest[rest.index(after: rest.startIndex)..<close]
            var points: [(Int, Int)] = []
            for pair in inner.split(separator: ")") {
                let numbers = pair.drop { $0 == "," || $0 == "(" }.split(separator: ",")
                guard numbers.count == 2, let x = RequestNumber.whole(numbers[0], in: RequestNumber.anyWhole), let y = RequestNumber.whole(numbers[1], in: RequestNumber.anyWhole) else {
                    throw RequestError.invalid("curve points are (x,y) whole numbers")
                }
                points.append((x, y))
            }
            lists.append(points)
            rest = rest[rest.index(after: close)...]
        }
        guard lists.count == 4 else { throw RequestError.invalid("curve takes four lists (all, red, green, blue)") }
        return lists
    }

}
