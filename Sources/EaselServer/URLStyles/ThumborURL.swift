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
    /// `focal(AxB:CxD)`'s region (left, top, width, height): `meta/`'s explicit focal point.
    var focalRegion: [Int]?

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
        // thumbor answers in the source's format unless `format()` names one.
        options.keepsSourceFormat = true
        options.thumborFill = true
        options.dropsAlphaForJPEG = true
        let (meta, fitIn) = try applyPathParts(&segments, to: &options)
        var filters = FilterEffects()
        if let text = filtersSegment(&segments) {
            filters = try applyFilters(text, to: &options, fitIn: fitIn)
        }
        var sourceText = segments.joined(separator: "/")
        guard !sourceText.isEmpty else { throw RequestError.notFound("no source in the URL") }
        if filters.extractFocal, nesting < 10, let (image, focal) = Self.extractFocal(sourceText, nesting: nesting) {
            sourceText = image
            options.gravity = focal
        }
        settle(&options, fitIn: fitIn, filters: filters)
        return ThumborURL(options: options, source: try ImageServer.split("/" + sourceText, prefix: "/", withSpec: false).1,
                          signature: signature, signedPath: signedPath, sourceText: sourceText, meta: meta, focalRegion: filters.focalRegion)
    }

    /// What fit-in and the filters that act with it (`upscale`, `no_upscale`, `stretch`, `fill`)
    /// make of the plan, once the whole URL is read.
    static func settle(_ options: inout ImagePlan, fitIn: Bool, filters: FilterEffects) {
        if fitIn {
            options.mode = .fit
            options.enlarge = filters.upscale ?? false
            if let filled = filters.filled {
                options.extend = true
                options.transparentExtend = filled.transparent
                options.extendColour = filled.colour
                options.autoExtendColour = filled.auto
            }
        } else {
            options.enlarge = filters.upscale ?? true
            // stretch(): exactly the size asked for, the aspect ratio not kept (both sides given).
            if filters.stretch, options.width > 0, options.height > 0 { options.mode = .exact }
        }
        if let filled = filters.filled, filled.fillTransparent, let colour = filled.colour { options.background = colour }
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
