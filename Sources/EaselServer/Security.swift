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

    public init(keys: [Data], salt: Data) {
        self.keys = keys.map { SymmetricKey(data: $0) }
        self.salt = salt
    }

    public var isEnabled: Bool { !keys.isEmpty }

    /// The signature of `path` with the first key.
    public func signature(path: String) -> String {
        guard let key = keys.first else { return "" }
        return Self.base64URL(Data(HMAC<SHA256>.authenticationCode(for: salt + Data(path.utf8), using: key)))
    }

    public func verify(path: String, signature: String?) -> Bool {
        guard let signature, let given = Self.decodeBase64URL(signature), given.count == 32 else { return false }
        var valid = false
        for key in keys {
            let expected = Data(HMAC<SHA256>.authenticationCode(for: salt + Data(path.utf8), using: key))
            // No early exit: every key is checked.
            valid = Self.constantTimeEqual(Array(expected), Array(given)) || valid
        }
        return valid
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
/// hop): http(s) only, hosts on the allow-list only, and never — after DNS resolution — a
/// loopback, private, link-local, unspecified, multicast or metadata address, unless the
/// allow-list names that very address (or `localhost`): a local origin during development.
struct SourcePolicy: Sendable {
    let allowHosts: Set<String>

    init(allowHosts: [String]) {
        self.allowHosts = Set(allowHosts.map { $0.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")) })
    }

    func check(_ url: URL) async throws(PipelineError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let rawHost = url.host?.lowercased() else {
            throw .forbiddenURL(url.absoluteString, reason: "not an http(s) URL")
        }
        let host = rawHost.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard allowHosts.contains(host) else { throw .forbiddenURL(url.absoluteString, reason: "host \(host) is not allowed") }
        let explicitlyLocal = host == "localhost" || Self.isIPLiteral(host)
        let addresses: [IPAddress]
        do {
            addresses = try await BlockingIOPool.shared.run { try Self.resolve(host) }
        } catch {
            throw .network("cannot resolve \(host)")
        }
        guard !addresses.isEmpty else { throw .network("cannot resolve \(host)") }
        if !explicitlyLocal, let inside = addresses.first(where: \.isInternal) {
            throw .forbiddenURL(url.absoluteString, reason: "\(host) resolves to an internal address (\(inside))")
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
            return (b[0] & 0xFE) == 0xFC || (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) || b[0] == 0xFF
                || (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8)      // documentation
                || (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B)      // NAT64
        }
    }

    var description: String {
        switch self {
        case .v4(let b): return b.map(String.init).joined(separator: ".")
        case .v6(let b): return stride(from: 0, to: 16, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }.joined(separator: ":")
        }
    }
}
