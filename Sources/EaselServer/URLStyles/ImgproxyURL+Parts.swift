import EaselSupport
import EaselCodecs
import EaselPipeline
import Foundation

/// imgproxy's sources, its names for formats and gravities, its presets' syntax and its signatures.
extension ImgproxyURL {
    /// `local:///path` (the file origin), or an absolute http(s) or s3 URL.
    static func source(_ text: String) throws -> ImageServer.Source {
        if text.lowercased().hasPrefix("local://") {
            let path = text.dropFirst("local://".count).drop { $0 == "/" }
            return .path(try ImageServer.decodedSegments(path.split(separator: "/", omittingEmptySubsequences: false)))
        }
        guard let scheme = text.split(separator: ":", maxSplits: 1).first?.lowercased(),
              scheme == "http" || scheme == "https" || scheme == "s3" || scheme.hasPrefix("http%3a") || scheme.hasPrefix("https%3a") || scheme.hasPrefix("s3%3a") else {
            throw RequestError.notFound("sources are local:///, http(s):// or s3:// URLs")
        }
        return try ImageServer.split("/" + text, prefix: "/", withSpec: false).1
    }

    /// A source type by imgproxy's name (`skip_processing`, `IMGPROXY_SKIP_PROCESSING_FORMATS`):
    /// any name `FormatRegistry` gives it.
    static func sourceType(_ name: some StringProtocol) -> ImageFileType? { ImageFileType(name: name) }

    static func outputFormat(_ name: Substring) throws -> ImageEncoding.Format {
        guard let format = ImageEncoding.Format(name: name) else {
            throw RequestError.invalid("output format \(name) is not supported (\(ImageEncoding.Format.names))")
        }
        return format
    }

    /// Where `extend` places the image: the nine directions and `fp:x:y` (imgproxy's extend
    /// takes no smart gravity).
    static func extendGravity(_ type: Substring, _ rest: [Substring], option: Substring) throws -> Gravity {
        let gravity = try gravity(type, rest, option: option)
        if case .smart = gravity { throw RequestError.invalid("\(option): extend takes no smart gravity") }
        return gravity
    }

    /// `g:TYPE[:x:y]`: the nine directions and `sm` (offsets 0 only), `fp:x:y` (fractions),
    /// `obj:face` (imgproxy Pro's: the faces).
    static func gravity(_ type: Substring, _ rest: [Substring], option: Substring) throws -> Gravity {
        if type == "obj" {
            // imgproxy Pro's object gravity: `face` (or `all`, the faces being the objects found here).
            guard !rest.isEmpty, rest.allSatisfy({ $0 == "face" || $0 == "all" }) else {
                throw RequestError.invalid("\(option): obj takes face (the only object class detected)")
            }
            return .smart(.face)
        }
        if type == "fp" {
            guard rest.count == 2, let x = RequestNumber.decimal(rest[0]), let y = RequestNumber.decimal(rest[1]), (0...1).contains(x), (0...1).contains(y) else {
                throw RequestError.invalid("\(option): fp takes x and y between 0 and 1")
            }
            return .focalPoint(x: x, y: y)
        }
        guard let gravity = ImagePlan.gravity(named: type) else {
            throw RequestError.invalid("\(option): unknown gravity \(type)")
        }
        guard rest.count <= 2 else { throw RequestError.invalid("\(option): a gravity takes at most two offsets") }
        // Kept as given: imgproxy's geometry reads one below 1 in magnitude as a fraction of the
        // outer size, and rounds the others half to even after the DPR.
        let offsets = try rest.map { text -> Double in
            guard !text.isEmpty else { return 0 }
            guard let value = RequestNumber.decimal(text), value.magnitude <= 1_048_576 else {
                throw RequestError.invalid("\(option): gravity offsets are numbers of pixels, or fractions below 1")
            }
            return value
        }
        let (x, y) = (offsets.first ?? 0, offsets.count > 1 ? offsets[1] : 0)
        guard x != 0 || y != 0 else { return gravity }
        // Offsets move the nine directions; a smart crop has none.
        if case .smart = gravity { throw RequestError.invalid("\(option): a smart gravity takes no offsets") }
        return .offset(gravity, x: x, y: y)
    }

    /// Presets as imgproxy reads `IMGPROXY_PRESETS`: `name=option/option,name2=…`.
    static func presets(_ text: String) -> [String: [Substring]] {
        var result: [String: [Substring]] = [:]
        for entry in text.split(separator: ",") {
            let pair = entry.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            result[pair[0].trimmingCharacters(in: .whitespaces)] = pair[1].split(separator: "/").map { Substring($0.trimmingCharacters(in: .whitespaces)) }
        }
        return result
    }

    /// Signs `path` (what follows the signature, from its `/`) as imgproxy does.
    static func signature(path: String, key: Data, salt: Data) -> String {
        URLSigner(keys: [key], salt: salt).signature(path: path)
    }
}
