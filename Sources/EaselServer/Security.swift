import EaselSupport
import Crypto
import EaselPipeline
import EaselStorage
import Foundation

/// Signs and checks image URLs: `s` = base64url (no padding) of HMAC-SHA256(key, salt ‖ path),
/// over the path without the query. Any of several keys verifies (rotation); the comparison
/// takes the same time wherever the first difference is.
public struct URLSigner: Sendable {
    let keys: [SymmetricKey]
    let salt: Data

    /// Creates a signer from raw key bytes (the first signs, any verifies) and the salt
    /// prepended to every signed path; no keys: signing is off.
    public init(keys: [Data], salt: Data) {
        self.keys = keys.map { SymmetricKey(data: $0) }
        self.salt = salt
    }

    /// Whether there is a key at all; without one nothing verifies and signatures are
    /// empty.
    public var isEnabled: Bool { !keys.isEmpty }

    /// The signature of `path` with the first key.
    public func signature(path: String) -> String {
        guard let key = keys.first else { return "" }
        return Self.base64URL(Data(HMAC<SHA256>.authenticationCode(for: salt + Data(path.utf8), using: key)))
    }

    /// Whether `signature` signs `path` with one of the keys. Exactly one spelling is accepted:
    /// the 43 characters `signature(path:)` writes (base64url, no padding, unused bits zero), so
    /// one signed image has one URL — never one with `=`, `+` or `/`, or other trailing bits.
    public func verify(path: String, signature: String?) -> Bool {
        guard let signature, signature.utf8.count == 43, let given = Self.decodeBase64URL(signature), given.count == 32,
              Self.base64URL(given) == signature else { return false }
        var valid = false
        for key in keys {
            let expected = Data(HMAC<SHA256>.authenticationCode(for: salt + Data(path.utf8), using: key))
            // No early exit: every key is checked.
            valid = Self.constantTimeEqual(Array(expected), Array(given)) || valid
        }
        return valid
    }

    /// Compares two secrets in time independent of where they differ and of their lengths.
    static func secretsEqual(_ a: String, _ b: String) -> Bool {
        constantTimeEqual(Array(SHA256.hash(data: Data(a.utf8))), Array(SHA256.hash(data: Data(b.utf8))))
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

/// Which remote sources may be fetched (checked before the first request and on every redirect
/// hop): http(s) only, and then either
/// - under the http origin the operator configured (same scheme, host, port and path prefix), or
/// - on an allow-list entry: `host` (ports 80 and 443) or `host:port`;
/// and never — after DNS resolution — a loopback, private, link-local, unspecified, multicast or
/// metadata address, unless the URL is under the configured origin or the allow-list entry is
/// that very address (or `localhost`): a local origin during development.
///
/// Known limit: the address is checked on this resolution, and AsyncHTTPClient resolves the name
/// again to connect; a DNS server that answers differently within that moment (DNS rebinding)
/// is not caught.
struct SourcePolicy: Sendable {
    struct Entry: Hashable, Sendable {
        let host: String
        /// nil: the default ports (80, 443).
        let port: Int?
    }

    let entries: Set<Entry>
    let origin: URL?

    init(allowHosts: [String], origin: URL?) {
        var entries = Set<Entry>()
        for item in allowHosts {
            let text = item.lowercased().trimmingCharacters(in: .whitespaces)
            // "host", "host:port", "[v6]", "[v6]:port", or a bare IPv6 address.
            if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
                let host = String(text[text.index(after: text.startIndex)..<close])
                let rest = text[text.index(after: close)...]
                entries.insert(Entry(host: host, port: rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil))
            } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) {
                entries.insert(Entry(host: String(text[..<colon]), port: port))
            } else {
                entries.insert(Entry(host: text, port: nil))
            }
        }
        self.entries = entries
        self.origin = origin
    }

    /// True when `url` lies under the configured http origin. Both paths are compared after
    /// removing dot segments (percent-encoded dots included), byte for byte.
    func isUnderOrigin(_ url: URL) -> Bool {
        guard let origin, let host = url.host?.lowercased(), host == origin.host?.lowercased(),
              url.scheme?.lowercased() == origin.scheme?.lowercased(), Self.port(of: url) == Self.port(of: origin) else { return false }
        let base = Self.removeDotSegments(Self.rawPath(origin))
        if base.isEmpty || base == "/" { return true }
        let prefix = base.hasSuffix("/") ? base : base + "/"
        return Self.removeDotSegments(Self.rawPath(url)).utf8.starts(with: prefix.utf8)
    }

    /// The path as written in the URL, percent-encoding kept (so `%2e%2e` stays visible).
    static func rawPath(_ url: URL) -> String {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
    }

    /// RFC 3986 §5.2.4 remove_dot_segments, where a segment of dots written with `%2e` counts
    /// as a dot segment too (origin servers decode it before resolving the path).
    static func removeDotSegments(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(absolute ? 1 : 0)
        for (index, segment) in segments.enumerated() {
            let dots = segment.replacingOccurrences(of: "%2e", with: ".", options: .caseInsensitive)
            let last = index == segments.count - 1
            if dots == "." {
                if last { output.append("") }
            } else if dots == ".." {
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            } else {
                output.append(segment)
            }
        }
        return (absolute ? "/" : "") + output.joined(separator: "/")
    }

    /// Whether a path (as written, percent-encoding kept) has a parent segment in any spelling an
    /// origin server might resolve: `..`, written with `%2e` once or twice encoded (`%252e`), or
    /// followed by a path parameter (`..;x`, which Tomcat and others resolve). (A `.` segment
    /// cannot leave anything: it is resolved, `SourcePolicy.removingDotSegments`.)
    static func hasDotSegment(_ path: String) -> Bool {
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            var text = String(segment)
            for _ in 0..<3 {
                // (Decoded, a segment may hold slashes or backslashes: `%2e%2e%2fsecret`.)
                for piece in text.split(whereSeparator: { $0 == "/" || $0 == "\\" }) where piece.prefix(while: { $0 != ";" }) == ".." {
                    return true
                }
                guard text.contains("%"), let decoded = text.removingPercentEncoding, decoded != text else { break }
                text = decoded
            }
        }
        return false
    }

    /// `url` with its path's dot segments removed; nil when it cannot be rebuilt.
    static func removingDotSegments(_ url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let path = components.percentEncodedPath
        guard !path.isEmpty else { return url }
        let normalized = removeDotSegments(path)
        if normalized == path { return url }
        components.percentEncodedPath = normalized
        return components.url
    }

    static func port(of url: URL) -> Int { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }

    /// What `check` decides without resolving the host: an http(s) URL under the origin or on
    /// the list. Returns the host, and whether it is explicitly local (under the origin,
    /// `localhost`, an IP literal), which needs no resolving.
    @discardableResult
    func checkListed(_ url: URL) throws(PipelineError) -> (host: String, local: Bool) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let rawHost = url.host?.lowercased() else {
            throw .forbiddenURL(url.absoluteString, reason: "not an http(s) URL")
        }
        guard !Self.hasDotSegment(Self.rawPath(url)) else {
            throw .forbiddenURL(url.absoluteString, reason: "a parent (..) segment in the path")
        }
        let host = rawHost.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let port = Self.port(of: url)
        let underOrigin = isUnderOrigin(url)
        let listed = entries.contains(Entry(host: host, port: port)) || ((port == 80 || port == 443) && entries.contains(Entry(host: host, port: nil)))
        guard underOrigin || listed else { throw .forbiddenURL(url.absoluteString, reason: "host not allowed") }
        return (host, underOrigin || host == "localhost" || Self.isIPLiteral(host))
    }

    func check(_ url: URL) async throws(PipelineError) {
        let (host, explicitlyLocal) = try checkListed(url)
        if explicitlyLocal { return }
        let addresses: [IPAddress]
        do {
            addresses = try await BlockingIOPool.resolving.run { try Self.resolve(host) }
        } catch {
            throw .network("cannot resolve \(host)")
        }
        guard !addresses.isEmpty else { throw .network("cannot resolve \(host)") }
        if addresses.contains(where: \.isInternal) {
            throw .forbiddenURL(url.absoluteString, reason: "the host resolves to an internal address")
        }
    }

    static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    struct ResolutionFailed: Error {}

    /// Blocking: getaddrinfo.
    static func resolve(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { throw ResolutionFailed() }
        defer { freeaddrinfo(list) }
        var result: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                if entry.pointee.ai_family == AF_INET {
                    let v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    result.append(.v4(withUnsafeBytes(of: v4) { Array($0) }))
                } else if entry.pointee.ai_family == AF_INET6 {
                    let v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    result.append(.v6(withUnsafeBytes(of: v6) { Array($0) }))
                }
            }
            cursor = entry.pointee.ai_next
        }
        return result
    }
}

enum IPAddress: Sendable, CustomStringConvertible {
    case v4([UInt8])
    case v6([UInt8])

    /// Loopback, private, link-local (incl. 169.254.169.254, the cloud metadata address),
    /// unspecified, carrier-grade NAT, multicast and the like.
    var isInternal: Bool {
        switch self {
        case .v4(let b):
            return b[0] == 127 || b[0] == 10 || b[0] == 0 || (b[0] == 172 && (16...31).contains(b[1])) || (b[0] == 192 && b[1] == 168)
                || (b[0] == 169 && b[1] == 254) || (b[0] == 100 && (64...127).contains(b[1])) || b[0] >= 224
                || (b[0] == 192 && b[1] == 0 && b[2] == 0) || (b[0] == 198 && (18...19).contains(b[1]))
        case .v6(let b):
            if b.allSatisfy({ $0 == 0 }) { return true }                              // ::
            if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }        // ::1
            if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {  // ::ffff:a.b.c.d
                return IPAddress.v4(Array(b[12..<16])).isInternal
            }
            if b[0..<12].allSatisfy({ $0 == 0 }) { return true }                        // ::a.b.c.d (IPv4-compatible)
            if b[0] == 0x20 && b[1] == 0x02 { return IPAddress.v4(Array(b[2..<6])).isInternal }  // 6to4
            return (b[0] & 0xFE) == 0xFC || (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) || b[0] == 0xFF
                || (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8)      // documentation
                || (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B)      // NAT64 (64:ff9b::/96, 64:ff9b:1::/48)
        }
    }

    var description: String {
        switch self {
        case .v4(let b): return b.map(String.init).joined(separator: ".")
        case .v6(let b): return stride(from: 0, to: 16, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }.joined(separator: ":")
        }
    }
}

extension BlockingIOPool {
    /// Threads for name lookups (`getaddrinfo` blocks for the resolver's whole timeout when DNS
    /// hangs): kept apart from the disk and file I/O of `.shared`, which they would otherwise
    /// hold up.
    static let resolving = BlockingIOPool(threadCount: 4)
}
