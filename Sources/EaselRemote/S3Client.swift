import AsyncHTTPClient
import EaselSupport
import Foundation
import NIOCore
import NIOHTTP1

/// A small S3 client on AsyncHTTPClient: get (streamed, with a byte limit and conditional
/// headers), put, delete and list, each signed with `SignatureV4`. Enough for image originals
/// and a shared result tier; nothing more.
///
/// Addressing: against AWS (no endpoint), virtual-hosted (`https://BUCKET.s3.REGION.amazonaws.com/KEY`,
/// path-style for bucket names with dots); against a custom endpoint (`EASEL_S3_ENDPOINT`, an
/// S3-compatible store such as MinIO, Ceph or moto), path-style (`ENDPOINT/BUCKET/KEY`).
///
/// Call `shutdown()` when done with it.
public final class S3Client: Sendable {
    /// How to reach S3: credentials, an optional endpoint and time limits.
    public struct Configuration: Sendable {
        /// The keys requests are signed with, and the region they are signed for.
        public var credentials: S3Credentials
        /// A custom endpoint (path-style addressing); nil for AWS.
        public var endpoint: URL?
        /// Limit for opening a connection (2 seconds by default).
        public var connectTimeout: Duration
        /// For each request: the head and the whole body.
        public var requestTimeout: Duration

        /// A configuration for AWS (no endpoint) or a custom endpoint, with a 2-second connect
        /// and a 10-second request limit by default.
        public init(credentials: S3Credentials, endpoint: URL? = nil, connectTimeout: Duration = .seconds(2),
                    requestTimeout: Duration = .seconds(10)) {
            self.credentials = credentials
            self.endpoint = endpoint
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
        }

        /// Credentials from `AWS_*` (see `S3Credentials.fromEnvironment`) and the endpoint from
        /// `EASEL_S3_ENDPOINT` (an http or https URL), when set.
        public static func fromEnvironment(_ environment: [String: String]) throws(S3Error) -> Configuration {
            var configuration = Configuration(credentials: try S3Credentials.fromEnvironment(environment))
            if let text = environment["EASEL_S3_ENDPOINT"], !text.isEmpty {
                guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                      url.host != nil, url.query == nil else {
                    throw .invalidLocation("EASEL_S3_ENDPOINT=\(text)")
                }
                configuration.endpoint = url
            }
            return configuration
        }
    }

    /// What S3 says about an object.
    public struct ObjectHead: Sendable, Equatable {
        /// The `ETag` header as sent (quotes included); nil when absent.
        public var etag: String?
        /// The `Last-Modified` header as sent (an HTTP date); nil when absent.
        public var lastModified: String?
        /// The `Content-Type` header; nil when absent.
        public var contentType: String?
        /// The `Content-Length` header, in bytes; nil when absent or not a number.
        public var contentLength: Int?
        /// The `Cache-Control` header; nil when absent.
        public var cacheControl: String?
    }

    /// What a `get` received: the object, or word that the caller's copy is still current.
    public enum GetOutcome: Sendable, Equatable {
        /// The object was found and its body streamed to the caller (HTTP 200).
        case object(ObjectHead)
        /// The object still matches `If-None-Match` / `If-Modified-Since` (HTTP 304).
        case notModified(ObjectHead)
    }

    /// The credentials, endpoint and time limits this client was made with.
    public let configuration: Configuration
    private let signer: SignatureV4
    /// Reads (GET of objects) and everything else (PUT, DELETE, listings) have their own
    /// connection pools, so that writes left behind by answers never queue reads.
    private let client: HTTPClient
    private let writer: HTTPClient

    /// A client with its own connection pools for reads and for writes; no connection is opened
    /// until the first request.
    public init(configuration: Configuration) {
        self.configuration = configuration
        signer = SignatureV4(credentials: configuration.credentials)
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Int64(configuration.connectTimeout.components.seconds) * 1_000_000_000
                                                 + configuration.connectTimeout.components.attoseconds / 1_000_000_000)))
        clientConfiguration.decompression = .disabled
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        writer = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    /// Shuts down both connection pools; throws the first error either gave. No request may be
    /// made afterwards.
    public func shutdown() async throws {
        var failure: (any Error)?
        do { try await client.shutdown() } catch { failure = error }
        do { try await writer.shutdown() } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    // MARK: Operations

    /// Streams the object into `onChunk` (after `onHead`), refusing more than `maximumBytes`.
    /// 404 is `S3Error.notFound`.
    public func get(bucket: String, key: String, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil,
                    maximumBytes: Int, onHead: @escaping @Sendable (ObjectHead) -> Void = { _ in },
                    onChunk: @escaping @Sendable (ByteBuffer) -> Void) async throws(S3Error) -> GetOutcome {
        var conditions: [(String, String)] = []
        if let ifNoneMatch { conditions.append(("If-None-Match", ifNoneMatch)) }
        if let ifModifiedSince { conditions.append(("If-Modified-Since", ifModifiedSince)) }
        let headers = conditions
        let timeout = configuration.requestTimeout
        return try await withTimeLimit(timeout, timedOut: S3Error.timedOut(seconds: Self.seconds(timeout)), cancelled: .network("cancelled")) {
            () async throws(S3Error) -> GetOutcome in
            let response = try await self.send("GET", bucket: bucket, key: key, headers: headers)
            let head = Self.head(response)
            if response.status == .notModified, ifNoneMatch != nil || ifModifiedSince != nil { return .notModified(head) }
            guard response.status == .ok else { throw await Self.failure(response, bucket: bucket, key: key) }
            if let length = head.contentLength, length > maximumBytes { throw .tooLarge(limit: maximumBytes, received: length) }
            onHead(head)
            var received = 0
            do {
                for try await buffer in response.body {
                    received += buffer.readableBytes
                    guard received <= maximumBytes else { throw S3Error.tooLarge(limit: maximumBytes, received: received) }
                    onChunk(buffer)
                }
            } catch let error as S3Error {
                throw error
            } catch {
                throw .network("\(error)")
            }
            return .object(head)
        }
    }

    /// The whole object, or nil when there is none.
    public func data(bucket: String, key: String, maximumBytes: Int) async throws(S3Error) -> Data? {
        let collected = Locked(Data())
        do {
            _ = try await get(bucket: bucket, key: key, maximumBytes: maximumBytes) { buffer in
                collected.withLock { $0.append(contentsOf: buffer.readableBytesView) }
            }
        } catch {
            if case .notFound = error { return nil }
            throw error
        }
        return collected.withLock { $0 }
    }

    /// Stores `data` under `key` (replacing any object there).
    public func put(bucket: String, key: String, data: Data, contentType: String = "application/octet-stream") async throws(S3Error) {
        let timeout = configuration.requestTimeout
        try await withTimeLimit(timeout, timedOut: S3Error.timedOut(seconds: Self.seconds(timeout)), cancelled: .network("cancelled")) {
            () async throws(S3Error) in
            let response = try await self.send("PUT", bucket: bucket, key: key, headers: [("Content-Type", contentType)], body: data)
            // S3 answers 200; some S3-compatible stores 201 or 204.
            guard response.status.code / 100 == 2 else { throw await Self.failure(response, bucket: bucket, key: key) }
        }
    }

    /// Removes `key` (no error when there was none, as S3 does).
    public func delete(bucket: String, key: String) async throws(S3Error) {
        let timeout = configuration.requestTimeout
        try await withTimeLimit(timeout, timedOut: S3Error.timedOut(seconds: Self.seconds(timeout)), cancelled: .network("cancelled")) {
            () async throws(S3Error) in
            let response = try await self.send("DELETE", bucket: bucket, key: key)
            if response.status == .noContent || response.status == .ok { return }
            // S3 answers 204 for a key that is not there; some stores 404 NoSuchKey. A missing
            // bucket is an error.
            let failure = await Self.failure(response, bucket: bucket, key: key)
            if case .notFound = failure { return }
            throw failure
        }
    }

    /// One page of the keys that begin with `prefix` (ListObjectsV2, up to 1,000 keys), and the
    /// token for the next page when there is one.
    public func list(bucket: String, prefix: String, continuation: String? = nil,
                     pageSize: Int? = nil) async throws(S3Error) -> (keys: [String], next: String?) {
        var items = [("list-type", "2"), ("prefix", prefix)]
        if let continuation { items.append(("continuation-token", continuation)) }
        if let pageSize { items.append(("max-keys", String(pageSize))) }
        let query = items
        let timeout = configuration.requestTimeout
        return try await withTimeLimit(timeout, timedOut: S3Error.timedOut(seconds: Self.seconds(timeout)), cancelled: .network("cancelled")) {
            () async throws(S3Error) -> (keys: [String], next: String?) in
            let response = try await self.send("GET", bucket: bucket, key: nil, query: query)
            guard response.status == .ok else { throw await Self.failure(response, bucket: bucket, key: prefix) }
            let text = await Self.body(response, limit: 16 << 20)
            let keys = XMLText.values(of: "Key", in: text)
            guard XMLText.values(of: "IsTruncated", in: text).first == "true" else { return (keys, nil) }
            // A truncated page without a token (a store that only speaks ListObjects V1) would
            // end the listing early and leave objects behind a purge: an error instead.
            guard let next = XMLText.values(of: "NextContinuationToken", in: text).first, !next.isEmpty else {
                throw S3Error.service(status: 200, code: "NoContinuationToken", message: "truncated listing without a continuation token")
            }
            return (keys, next)
        }
    }

    /// Every key that begins with `prefix`, following pages. More than `maximumKeys` is an error
    /// (never a silently shortened list).
    public func allKeys(bucket: String, prefix: String, maximumKeys: Int = 100_000, pageSize: Int? = nil) async throws(S3Error) -> [String] {
        var keys: [String] = []
        var continuation: String?
        repeat {
            let page = try await list(bucket: bucket, prefix: prefix, continuation: continuation, pageSize: pageSize)
            keys += page.keys
            continuation = page.next
            if continuation != nil, keys.count >= maximumKeys {
                throw .service(status: 200, code: "TooManyKeys", message: "more than \(maximumKeys) keys under \(prefix)")
            }
        } while continuation != nil
        return keys
    }

    // MARK: Requests

    /// The URL of a bucket or an object, with its path exactly as sent and signed.
    func address(bucket: String, key: String?) -> (url: String, host: String, path: String) {
        let encodedKey = key.map { SignatureV4.encode($0, keepingSlash: true) } ?? ""
        if let endpoint = configuration.endpoint {
            var base = endpoint.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            let basePath = endpoint.path.hasSuffix("/") ? String(endpoint.path.dropLast()) : endpoint.path
            // A bucket-level request (a listing) names the bucket without a trailing slash.
            let path = basePath + "/" + bucket + (key == nil ? "" : "/" + encodedKey)
            return (base + "/" + bucket + (key == nil ? "" : "/" + encodedKey), Self.hostHeader(endpoint), path)
        }
        let region = configuration.credentials.region
        if bucket.contains(".") {
            let host = "s3.\(region).amazonaws.com"
            return ("https://\(host)/\(bucket)/\(encodedKey)", host, "/\(bucket)/\(encodedKey)")
        }
        let host = "\(bucket).s3.\(region).amazonaws.com"
        return ("https://\(host)/\(encodedKey)", host, "/\(encodedKey)")
    }

    private static func hostHeader(_ url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port else { return host }
        let scheme = url.scheme?.lowercased()
        if (scheme == "http" && port == 80) || (scheme == "https" && port == 443) { return host }
        return "\(host):\(port)"
    }

    private func send(_ method: String, bucket: String, key: String?, query: [(String, String)] = [],
                      headers: [(String, String)] = [], body: Data? = nil) async throws(S3Error) -> HTTPClientResponse {
        let (url, host, path) = address(bucket: bucket, key: key)
        let queryText = SignatureV4.canonicalQuery(query)
        var request = HTTPClientRequest(url: queryText.isEmpty ? url : url + "?" + queryText)
        request.method = HTTPMethod(rawValue: method)
        let payloadHash = body.map { SignatureV4.payloadHash($0) } ?? SignatureV4.emptyPayloadHash
        let signedHeaders = [("host", host)] + headers
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        for (name, value) in signer.sign(method: method, path: path, query: query, headers: signedHeaders,
                                         payloadHash: payloadHash, date: Date()) {
            request.headers.add(name: name, value: value)
        }
        if let body {
            request.headers.add(name: "Content-Length", value: String(body.count))
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let pool = method == "GET" && key != nil ? client : writer
            return try await pool.execute(request, timeout: .hours(1))  // the time limit is ours
        } catch {
            throw Task.isCancelled ? .network("cancelled") : .network("\(error)")
        }
    }

    private static func head(_ response: HTTPClientResponse) -> ObjectHead {
        ObjectHead(etag: response.headers.first(name: "ETag"), lastModified: response.headers.first(name: "Last-Modified"),
                   contentType: response.headers.first(name: "Content-Type"),
                   contentLength: response.headers.first(name: "Content-Length").flatMap(Int.init),
                   cacheControl: response.headers.first(name: "Cache-Control"))
    }

    /// An error answer as an `S3Error`, with S3's `<Code>` and `<Message>`.
    private static func failure(_ response: HTTPClientResponse, bucket: String, key: String) async -> S3Error {
        let status = Int(response.status.code)
        let text = await body(response, limit: 64 << 10)
        let code = XMLText.values(of: "Code", in: text).first ?? response.status.reasonPhrase
        let message = XMLText.values(of: "Message", in: text).first ?? ""
        if status == 404, code != "NoSuchBucket" { return .notFound(bucket: bucket, key: key) }
        if status == 401 || status == 403 { return .denied(status: status, code: code, message: message) }
        return .service(status: status, code: code, message: message)
    }

    /// The body as text, at most `limit` bytes (the rest is read and dropped).
    private static func body(_ response: HTTPClientResponse, limit: Int) async -> String {
        var bytes: [UInt8] = []
        do {
            for try await buffer in response.body where bytes.count < limit {
                bytes += buffer.readableBytesView.prefix(limit - bytes.count)
            }
        } catch {}
        return String(decoding: bytes, as: UTF8.self)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// The few XML reads S3's answers need: the text of every `<name>…</name>`, entities decoded.
enum XMLText {
    static func values(of name: String, in text: String) -> [String] {
        let open = "<" + name + ">", close = "</" + name + ">"
        var result: [String] = []
        var rest = text[...]
        while let start = rest.range(of: open), let end = rest.range(of: close, range: start.upperBound..<rest.endIndex) {
            result.append(decodeEntities(String(rest[start.upperBound..<end.lowerBound])))
            rest = rest[end.upperBound...]
        }
        return result
    }

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: amp)..<semicolon]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let number = entity.hasPrefix("#x") ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let number, let scalar = Unicode.Scalar(number) { result.unicodeScalars.append(scalar) } else { result += "&" + entity + ";" }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
