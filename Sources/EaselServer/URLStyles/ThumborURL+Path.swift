import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// thumbor's path parts before the source: `meta`, `trim`, the manual crop, `fit-in`, the
/// size, the alignments, `smart` and the `filters:` segment.
extension ThumborURL {
    /// The first of `segments` when it `matches`, taken off; nil (and nothing taken) otherwise.
    static func next(_ segments: inout ArraySlice<Substring>, _ matches: (Substring) -> Bool) -> Substring? {
        guard let first = segments.first, matches(first) else { return nil }
        segments.removeFirst()
        return first
    }

    /// The parts before the filters, each taken off the front of `segments` when it is there, in
    /// thumbor's order; whether the URL is `meta/` and whether it is fit-in.
    static func applyPathParts(_ segments: inout ArraySlice<Substring>, to options: inout ImagePlan) throws -> (meta: Bool, fitIn: Bool) {
        // `meta/`: thumbor's JSON metadata endpoint.
        let meta = next(&segments, { $0 == "meta" }) != nil
        if let trim = next(&segments, { $0 == "trim" || $0.hasPrefix("trim:") }) { options.trim = try trimPart(trim) }
        if let crop = next(&segments, Self.isManualCrop) {
            let numbers = crop.split(whereSeparator: { $0 == "x" || $0 == ":" }).compactMap { RequestNumber.whole($0, in: RequestNumber.anyWhole) }
            guard numbers.count == 4 else { throw RequestError.invalid("bad crop \(crop)") }
            if numbers != [0, 0, 0, 0] {
                if var trim = options.trim {
                    // With a trim, the crop names pixels of the original (thumbor shifts it by
                    // what the trim removed).
                    trim.thenCrop = numbers
                    options.trim = trim
                } else {
                    options.crop = .edges(left: numbers[0], top: numbers[1], right: numbers[2], bottom: numbers[3])
                }
            }
        }
        var fitIn = false
        if let fit = next(&segments, { $0.hasSuffix("fit-in") }) {
            switch fit {
            case "fit-in": break
            case "adaptive-fit-in": options.fitVariant = (adaptive: true, full: false)
            case "full-fit-in": options.fitVariant = (adaptive: false, full: true)
            case "adaptive-full-fit-in": options.fitVariant = (adaptive: true, full: true)
            default: throw RequestError.invalid("\(fit) is not one of fit-in, adaptive-fit-in, full-fit-in, adaptive-full-fit-in")
            }
            fitIn = true
        }
        if let size = next(&segments, Self.isDimensions) { try applySize(size, to: &options) }
        var horizontal = 1, vertical = 1
        if let align = next(&segments, { $0 == "left" || $0 == "center" || $0 == "right" }) {
            horizontal = align == "left" ? 0 : align == "right" ? 2 : 1
        }
        if let align = next(&segments, { $0 == "top" || $0 == "middle" || $0 == "bottom" }) {
            vertical = align == "top" ? 0 : align == "bottom" ? 2 : 1
        }
        let gravities: [[Gravity]] = [[.northWest, .north, .northEast], [.west, .center, .east], [.southWest, .south, .southEast]]
        options.gravity = gravities[vertical][horizontal]
        // thumbor's smart: its face detector first, then its feature detector (here attention).
        if next(&segments, { $0 == "smart" }) != nil { options.gravity = .smart(.face) }
        return (meta, fitIn)
    }

    /// `trim[:top-left|:bottom-right][:tolerance]`: thumbor's Euclidean colour distance from
    /// that corner's pixel, 0–442.
    static func trimPart(_ trim: Substring) throws -> Trim {
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
        return try Trim(tolerance: tolerance, metric: .euclidean, reference: reference)
    }

    /// `[-]WxH`: the size (empty or `orig`: the source's), a `-` flipping that axis.
    static func applySize(_ size: Substring, to options: inout ImagePlan) throws {
        let parts = size.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        func side(_ text: Substring) throws -> (Int, Bool) {
            let flip = text.hasPrefix("-")
            let digits = flip ? text.dropFirst() : text
            if digits.isEmpty || digits == "orig" { return (0, flip) }
            guard let value = RequestNumber.whole(digits), value >= 0 else { throw RequestError.invalid("bad size \(size)") }
            return (value, flip)
        }
        let (width, flipH) = try side(parts[0]), (height, flipV) = try side(parts[1])
        // `orig`: the source's own side (with `origxorig`, the source's size: no side asked).
        options.widthIsSource = parts[0].hasSuffix("orig") && !parts[1].hasSuffix("orig")
        options.heightIsSource = parts[1].hasSuffix("orig") && !parts[0].hasSuffix("orig")
        options.width = width
        options.height = height
        options.flipHorizontal = flipH
        options.flipVertical = flipV
    }

    /// The `filters:` segment when it comes next, taken off, without its `filters:`. A filter's
    /// argument may hold slashes (a watermark's URL): the segment goes on until the parentheses
    /// close.
    static func filtersSegment(_ segments: inout ArraySlice<Substring>) -> Substring? {
        guard let filters = next(&segments, { $0.hasPrefix("filters:") }) else { return nil }
        var joined = String(filters)
        while joined.filter({ $0 == "(" }).count > joined.filter({ $0 == ")" }).count, let more = segments.first {
            joined += "/" + more
            segments.removeFirst()
        }
        return Substring(joined).dropFirst("filters:".count)
    }
}
