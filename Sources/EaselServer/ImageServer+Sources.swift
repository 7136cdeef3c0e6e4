import EaselSupport
import Crypto
import EaselCodecs
import EaselPipeline
import EaselRemote
import EaselStorage
import EaselTables
import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import Synchronization

/// Sources in image paths: a path under the origin, or an absolute URL; their one spelling
/// (canonical URLs, byte-exact file keys), so every form of a source shares one cache identity
/// and one purge.
extension ImageServer {
    /// The first segment after `prefix` (the format, or nil when `withSpec` is false) and the
    /// source: an absolute http(s) URL (`…/https://host/a.jpg`), or decoded path segments.
    static func split(_ path: String, prefix: String, withSpec: Bool = true) throws -> (String?, Source) {
        // Byte comparisons throughout (Character operations and Foundation's String overloads
        // cost more than the rest of a warm answer).
        guard path.utf8.starts(with: prefix.utf8) else { throw RequestError.noSuchImage }
        var rest = path[path.utf8.index(path.startIndex, offsetBy: prefix.utf8.count)...]
        var spec: String?
        if withSpec {
            guard let slash = rest.utf8.firstIndex(of: UInt8(ascii: "/")) else { throw RequestError.noSuchImage }
            spec = String(rest[..<slash])
            if rest[..<slash].utf8.contains(UInt8(ascii: "%")) { spec = spec!.removingPercentEncoding }
            rest = rest[rest.utf8.index(after: slash)...]
        }
        if let first = rest.utf8.first, first | 0x20 == UInt8(ascii: "h") || first | 0x20 == UInt8(ascii: "s"),
           let text = Self.absoluteSource(rest) {
            // Parent segments, in any spelling (`..`, `..;`, percent-encoded once or twice), are
            // refused: an origin server may resolve any of them out of the path allowed. (`.`
            // segments are resolved, so that the policy checks the URL an origin would serve.)
            guard let written = URL(string: text), written.host != nil else { throw RequestError.noSuchImage }
            guard !SourcePolicy.hasDotSegment(SourcePolicy.rawPath(written)) else {
                throw RequestError.refused("a source URL may not have parent segments (.., ..;, %2e%2e…) in its path")
            }
            guard let url = SourcePolicy.removingDotSegments(written) else { throw RequestError.noSuchImage }
            guard url.user == nil, url.password == nil else {
                throw RequestError.refused("a source URL may not carry a user name or password")
            }
            return (spec, .remote(url))
        }
        return (spec, .path(try decodedSegments(rest.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Substring.init))))
    }

    /// Where an image comes from (`ImagePlan.Source`).
    typealias Source = ImagePlan.Source

    /// An absolute source URL as written in a path: as is (`…/https://host/a%2Fb.jpg` keeps its
    /// escapes, so the origin gets the resource it names), or, when the whole URL arrived
    /// percent-encoded (`…/https%3A%2F%2Fhost%2Fa.jpg`), decoded once. Nil when it is neither.
    static func absoluteSource(_ rest: Substring) -> String? {
        func starts(_ text: some StringProtocol, with prefix: String) -> Bool {
            text.utf8.count >= prefix.utf8.count
                && zip(text.utf8, prefix.utf8).allSatisfy { a, b in a | 0x20 == b | 0x20 } // ASCII, case-insensitive
        }
        if starts(rest, with: "http://") || starts(rest, with: "https://") || starts(rest, with: "s3://") { return String(rest) }
        if starts(rest, with: "http%3a%2f%2f") || starts(rest, with: "https%3a%2f%2f") || starts(rest, with: "s3%3a%2f%2f") {
            return String(rest).removingPercentEncoding
        }
        return nil
    }

    /// Percent-decoded path segments; `..`, `.`, empty segments, NUL and `/` inside a segment
    /// (an encoded slash) are refused as not found.
    static func decodedSegments(_ raw: [Substring]) throws -> [String] {
        guard !raw.isEmpty else { throw RequestError.noSuchImage }
        return try raw.map { segment in
            guard let decoded = segment.utf8.contains(UInt8(ascii: "%")) ? String(segment).removingPercentEncoding : String(segment),
                  !decoded.isEmpty, decoded != ".", decoded != "..",
                  !decoded.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 || $0 == UInt8(ascii: "\\") }) else {
                throw RequestError.noSuchImage
            }
            return decoded
        }
    }

    /// The source URL: under the file origin's root or the http origin's base, or an absolute
    /// http(s) URL (`/images/thumb/https://host/a.jpg`), which the source policy then checks.
    /// Every spelling of one image gives one URL (scheme and host in lower case, no default
    /// port, no dot segments): one cache identity, one purge.
    func resolve(_ source: Source) throws -> URL {
        switch (source, origin) {
        case (.remote(let url), _):
            let canonical = Self.canonical(url)
            guard canonical.scheme == "s3" else { return canonical }
            // One spelling per object: the key decoded, then encoded as the S3 origin encodes
            // it (`a+b.jpg` and `a%2Bb.jpg` are one object, one cache identity, one purge).
            guard let (bucket, key) = S3Fetcher.object(of: canonical),
                  let spelled = URL(string: "s3://" + bucket + "/" + SignatureV4.encode(key, keepingSlash: true)) else {
                throw RequestError.noSuchImage
            }
            try checkS3Source(spelled)
            return spelled
        case (.path(let segments), .directory): return URL(fileURLWithPath: rootPath + "/" + segments.joined(separator: "/"), isDirectory: false)
        case (.path(let segments), .http(let base)): return Self.canonical(segments.reduce(base) { $0.appendingPathComponent($1) })
        case (.path(let segments), .s3(let location)):
            let key = SignatureV4.encode(location.prefix + segments.joined(separator: "/"), keepingSlash: true)
            guard let url = URL(string: "s3://" + location.bucket + "/" + key) else { throw RequestError.noSuchImage }
            return url
        }
    }

    /// An absolute `s3://` source is read only from the S3 origin's bucket, under its prefix, or
    /// from a bucket listed in `allowHosts` as `s3://BUCKET`.
    func checkS3Source(_ url: URL) throws {
        guard let (bucket, key) = S3Fetcher.object(of: url) else { throw RequestError.noSuchImage }
        // No empty, `.` or `..` segments: S3 takes them literally, but a proxy or an
        // S3-compatible store in front may resolve them out of the prefix.
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        guard !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw RequestError.noSuchImage
        }
        if case .s3(let location) = origin, location.bucket == bucket, key.hasPrefix(location.prefix) { return }
        if configuration.allowHosts.contains(where: { $0.lowercased() == "s3://" + bucket || $0.lowercased() == "s3://" + bucket + "/" }) { return }
        throw RequestError.refused("source refused")
    }

    /// The cache identity of a file-origin source, made from its path segments (not from the
    /// URL `resolve` builds); nil for URL sources, whose identity is their canonical URL.
    ///
    /// Bytes, not characters: Swift compares strings by canonical equivalence, so `café.jpg`
    /// written with one code point or with `e` and a combining accent would be one key, while
    /// Linux has two files. Non-ASCII bytes (and `%`) are percent-escaped, which keeps keys that
    /// are equal as strings equal as bytes.
    func sourceKey(_ source: Source) -> String? {
        guard case .path(let segments) = source, case .directory = origin else { return nil }
        return fileKeyPrefix + Self.escapingNonASCII(segments.joined(separator: "/"))
    }

    /// `text` with every byte outside printable ASCII, and `%`, written as `%XX` (unchanged, and
    /// not copied, when there is none).
    static func escapingNonASCII(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x7F || $0 < 0x20 || $0 == UInt8(ascii: "%") }) else { return text }
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if byte >= 0x7F || byte < 0x20 || byte == UInt8(ascii: "%") {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One spelling per URL: scheme and host in lower case (no trailing dot on the host), no
    /// default port, no dot segments, percent-escapes upper case and unreserved characters
    /// unescaped (RFC 3986 section 6.2.2), no empty query.
    static func canonical(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.scheme = components.scheme?.lowercased()
        if var host = components.host?.lowercased() {
            while host.count > 1, host.hasSuffix(".") { host.removeLast() }
            components.host = host
        }
        if let port = components.port, (components.scheme == "http" && port == 80) || (components.scheme == "https" && port == 443) {
            components.port = nil
        }
        components.percentEncodedPath = normalisingEscapes(components.percentEncodedPath)
        if let query = components.percentEncodedQuery {
            components.percentEncodedQuery = query.isEmpty ? nil : normalisingEscapes(query)
        }
        return components.url.flatMap(SourcePolicy.removingDotSegments) ?? url
    }

    /// Percent-escapes in upper case, and escaped unreserved characters (letters, digits,
    /// `-._~`) written plainly.
    static func normalisingEscapes(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        let bytes = Array(text.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        func value(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        let hex = Array("0123456789ABCDEF".utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = value(bytes[index + 1]), let low = value(bytes[index + 2]) {
                let byte = high << 4 | low
                let unreserved = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "-._~".utf8.contains(byte)
                result += unreserved ? [byte] : [UInt8(ascii: "%"), hex[Int(high)], hex[Int(low)]]
                index += 3
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
