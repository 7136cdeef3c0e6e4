import Crypto
import Foundation

/// Credentials for S3 requests: an access key, its secret, an optional session token
/// (temporary credentials) and the region requests are signed for.
public struct S3Credentials: Sendable, Equatable {
    /// The access key ID (`AWS_ACCESS_KEY_ID`), named in each signature's credential scope.
    public var accessKeyID: String
    /// The secret key (`AWS_SECRET_ACCESS_KEY`) the signing keys are derived from.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `x-amz-security-token`; nil for
    /// long-term keys.
    public var sessionToken: String?
    /// The region requests are signed for and, against AWS, sent to (`us-east-1` by default).
    public var region: String

    /// Credentials from their parts; the region defaults to `us-east-1`.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String = "us-east-1") {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
    }

    /// From the standard variables: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional
    /// `AWS_SESSION_TOKEN`, and `AWS_REGION` (else `AWS_DEFAULT_REGION`, else us-east-1).
    public static func fromEnvironment(_ environment: [String: String]) throws(S3Error) -> S3Credentials {
        guard let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
            throw .missingCredentials
        }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let region = environment["AWS_REGION"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["AWS_DEFAULT_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token, region: region)
    }
}

/// AWS Signature Version 4 for S3 (`AWS4-HMAC-SHA256` in the `Authorization` header), on
/// swift-crypto. Pure: the same request, credentials and date give the same headers, which the
/// tests check against AWS's published examples.
public struct SignatureV4: Sendable {
    /// The keys, token and region requests are signed with.
    public let credentials: S3Credentials
    /// The service name in the credential scope (`s3` by default).
    public let service: String

    /// A signer for `service` (`s3` by default) with `credentials`.
    public init(credentials: S3Credentials, service: String = "s3") {
        self.credentials = credentials
        self.service = service
    }

    /// The hex SHA-256 of an empty body.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The hex SHA-256 of `data`, for `x-amz-content-sha256` (lowercase, 64 characters).
    public static func payloadHash(_ data: some DataProtocol) -> String { hex(SHA256.hash(data: data)) }

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256`,
    /// `x-amz-security-token` (with a session token) and `Authorization`.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, as sent (`GET`, `PUT`, ...);
    ///   - path: the request path exactly as sent, already percent-encoded (S3 does not encode
    ///     it a second time for the canonical request);
    ///   - query: the query items, unencoded (they are encoded and sorted here, and must be sent
    ///     the same way: see `canonicalQuery`);
    ///   - headers: the other headers to sign (`host` must be among them), any case;
    ///   - payloadHash: the body's SHA-256 in hex (`payloadHash(_:)`, `emptyPayloadHash`);
    ///   - date: the signing time (the request must reach S3 within 15 minutes of it).
    public func sign(method: String, path: String, query: [(String, String)], headers: [(String, String)],
                     payloadHash: String, date: Date) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(date)
        var signed = headers.map { ($0.0.lowercased(), Self.trimmed($0.1)) }
        signed.append(("x-amz-date", amzDate))
        signed.append(("x-amz-content-sha256", payloadHash))
        if let token = credentials.sessionToken { signed.append(("x-amz-security-token", token)) }
        signed.sort { $0.0 < $1.0 }
        // Repeated names are one line with their values joined by commas, in order.
        var merged: [(String, String)] = []
        for (name, value) in signed {
            if let last = merged.last, last.0 == name { merged[merged.count - 1].1 += "," + value } else { merged.append((name, value)) }
        }
        let signedHeaders = merged.map(\.0).joined(separator: ";")
        let canonicalRequest = [
            method, path.isEmpty ? "/" : path, Self.canonicalQuery(query),
            merged.map { $0.0 + ":" + $0.1 + "\n" }.joined(), signedHeaders, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(credentials.region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))]
            .joined(separator: "\n")
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: signingKey(day: day)))
        var result: [(String, String)] = [("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash)]
        if let token = credentials.sessionToken { result.append(("x-amz-security-token", token)) }
        result.append(("Authorization",
                       "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"))
        return result
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request").
    private func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data(("AWS4" + credentials.secretAccessKey).utf8))
        for part in [day, credentials.region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    /// Query items encoded with `encode` (a `/` too) and sorted by name, then value.
    public static func canonicalQuery(_ items: [(String, String)]) -> String {
        let encoded: [(name: String, value: String)] = items.map { item in
            (encode(item.0, keepingSlash: false), encode(item.1, keepingSlash: false))
        }
        let sorted = encoded.sorted { a, b in a.name != b.name ? a.name < b.name : a.value < b.value }
        return sorted.map { item in item.name + "=" + item.value }.joined(separator: "&")
    }

    /// AWS's URI encoding: every byte but `A–Z a–z 0–9 - . _ ~` (and `/` in paths) as `%XX`
    /// with upper-case hex.
    public static func encode(_ text: String, keepingSlash: Bool) -> String {
        let hexDigits = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            case UInt8(ascii: "/") where keepingSlash:
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `yyyyMMdd'T'HHmmss'Z'` and `yyyyMMdd` in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { let v = value ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        let day = "\(c.year ?? 1970)" + two(c.month) + two(c.day)
        return (day + "T" + two(c.hour) + two(c.minute) + two(c.second) + "Z", day)
    }

    /// Leading and trailing spaces dropped, inner runs of spaces made one.
    static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        let hexDigits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        for byte in digest { bytes += [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
