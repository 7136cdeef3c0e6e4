import Foundation

/// What can go wrong talking to S3. Messages from the service are kept for logs; a server tells
/// its clients only a generic text.
public enum S3Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// No object under this key (404 `NoSuchKey`).
    case notFound(bucket: String, key: String)
    /// The credentials were refused: wrong secret, unknown key, expired token, a policy that
    /// forbids the action (401/403 with S3's error code).
    case denied(status: Int, code: String, message: String)
    /// Any other error answer (a missing bucket, throttling, a 5xx).
    case service(status: Int, code: String, message: String)
    /// The endpoint could not be reached or the connection failed.
    case network(String)
    /// No answer within the request's time limit.
    case timedOut(seconds: Double)
    /// The object is larger than the caller's limit (checked from Content-Length, then counted).
    case tooLarge(limit: Int, received: Int)
    /// An `s3://` location or endpoint that cannot be used.
    case invalidLocation(String)
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` are not both set.
    case missingCredentials

    public var description: String {
        switch self {
        case .notFound(let bucket, let key): "no object s3://\(bucket)/\(key)"
        case .denied(let status, let code, let message): "S3 refused the credentials (HTTP \(status) \(code)): \(message)"
        case .service(let status, let code, let message): "S3 error HTTP \(status) \(code): \(message)"
        case .network(let message): "S3 endpoint unreachable: \(message)"
        case .timedOut(let seconds): "S3 did not answer within \(seconds) s"
        case .tooLarge(let limit, let received): "the object is larger than \(limit) bytes (\(received) seen)"
        case .invalidLocation(let text): "invalid S3 location \(text): use s3://BUCKET/PREFIX/"
        case .missingCredentials: "S3 needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        }
    }
}

/// A bucket and a key prefix: `s3://BUCKET/PREFIX/` (the prefix may be empty; a non-empty one
/// ends with `/`).
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    /// The bucket name.
    public var bucket: String
    /// The key prefix every object name starts with: empty, or ending with `/`.
    public var prefix: String

    /// A location from its parts, taken as they are (not validated; a non-empty `prefix` should
    /// end with `/`).
    public init(bucket: String, prefix: String = "") {
        self.bucket = bucket
        self.prefix = prefix
    }

    /// Parses `s3://BUCKET[/PREFIX]`; a prefix gets a trailing `/`. Bucket names follow S3's
    /// rules (3–63 of `a–z 0–9 . -`, starting and ending with a letter or digit).
    public init(_ text: String) throws(S3Error) {
        guard text.utf8.count > 5, text.lowercased().hasPrefix("s3://") else { throw .invalidLocation(text) }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        var prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        guard Self.isValidBucket(bucket) else { throw .invalidLocation(text) }
        if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
        self.bucket = bucket
        self.prefix = prefix
    }

    public var description: String { "s3://\(bucket)/\(prefix)" }

    static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) }
        guard alphanumeric(bytes.first!), alphanumeric(bytes.last!) else { return false }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }
}
