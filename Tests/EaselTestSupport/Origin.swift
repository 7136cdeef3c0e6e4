import EaselSupport
import EaselStorage
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore

/// A real HTTP origin on 127.0.0.1 for the pipeline tests (Hummingbird, a random port), whose
/// paths behave as each test declares, and which records every request it gets.
public final class Origin: Sendable {
    public enum Behaviour: Sendable {
        /// The bytes, with these headers; honours If-None-Match (304 when the ETag matches) and
        /// Range with If-Range (206 from the offset when the validator matches).
        case file(Data, headers: [String: String] = [:])
        /// Sends `first` bytes, waits for the gate, then the rest (Content-Length and ETag set,
        /// ranges honoured on later requests).
        case gated(Data, first: Int, gate: Gate, etag: String? = nil)
        /// `count` zero bytes in 64 KiB chunks; `declareLength` sends a Content-Length.
        case zeros(count: Int, declareLength: Bool)
        /// One byte per `interval`, forever (until the client leaves).
        case trickle(interval: Duration)
        /// A redirect to another path.
        case redirect(String)
        case status(Int)
    }

    public struct Seen: Sendable {
        public let path: String
        public let headers: HTTPFields
        public var method: HTTPRequest.Method = .get
        /// The body of a `POST` (at most 1 MiB; empty for other methods).
        public var body = Data()
        public var range: String? { headers[HTTPField.Name("Range")!] }
        public var ifRange: String? { headers[HTTPField.Name("If-Range")!] }
        public var ifNoneMatch: String? { headers[.ifNoneMatch] }
    }

    private let behaviours = Locked<[String: Behaviour]>([:])
    private let seen = Locked<[Seen]>([])
    public let requests: AsyncStream<Seen>
    private let requestContinuation: AsyncStream<Seen>.Continuation

    public init() {
        (requests, requestContinuation) = AsyncStream.makeStream()
    }

    public func serve(_ path: String, _ behaviour: Behaviour) { behaviours.withLock { $0[path] = behaviour } }

    public var all: [Seen] { seen.withLock { $0 } }
    public func count(_ path: String) -> Int { all.filter { $0.path == path }.count }

    /// Waits for the next request the origin receives.
    public func nextRequest() async -> Seen? {
        for await request in requests { return request }
        return nil
    }

    /// Runs `body` with the origin listening; `base` is its root URL.
    public func run(_ body: @escaping @Sendable (_ base: URL) async throws -> Void) async throws {
        let router = Router()
        router.get("**") { request, _ in try await self.respond(to: request) }
        router.put("**") { request, _ in try await self.respond(to: request) }  // a plain object store's writes
        router.post("**") { request, _ in try await self.respond(to: request) }  // a CDN's purge endpoint
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            try await body(URL(string: "http://127.0.0.1:\(client.port!)")!)
        }
    }

    private func respond(to request: Request) async throws -> Response {
        let path = request.uri.path
        var record = Seen(path: path, headers: request.headers, method: request.method)
        if request.method == .post { record.body = Data(buffer: try await request.body.collect(upTo: 1 << 20)) }
        seen.withLock { $0.append(record) }
        requestContinuation.yield(record)
        guard let behaviour = behaviours.withLock({ $0[path] }) else { return Response(status: .notFound) }
        switch behaviour {
        case .file(let data, let headers):
            var fields = HTTPFields()
            for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
            let etag = headers["ETag"]
            if let etag, record.ifNoneMatch == etag { return Response(status: .notModified, headers: fields) }
            if let range = record.range, let offset = Self.offset(range), offset < data.count,
               record.ifRange == nil || record.ifRange == etag {
                fields[HTTPField.Name("Content-Range")!] = "bytes \(offset)-\(data.count - 1)/\(data.count)"
                return Response(status: .partialContent, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data[offset...])))
            }
            return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        case .gated(let data, let first, let gate, let etag):
            var fields: HTTPFields = [HTTPField.Name("Accept-Ranges")!: "bytes"]
            if let etag { fields[.eTag] = etag }
            if let range = record.range, let offset = Self.offset(range), offset < data.count,
               record.ifRange == nil || record.ifRange == etag {
                fields[HTTPField.Name("Content-Range")!] = "bytes \(offset)-\(data.count - 1)/\(data.count)"
                return Response(status: .partialContent, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data[offset...])))
            }
            return Response(status: .ok, headers: fields, body: ResponseBody(contentLength: data.count) { writer in
                if first > 0 { try await writer.write(ByteBuffer(bytes: data.prefix(first))) }
                try await gate.wait()
                try await writer.write(ByteBuffer(bytes: data.dropFirst(first)))
                try await writer.finish(nil)
            })
        case .zeros(let count, let declareLength):
            return Response(status: .ok, body: ResponseBody(contentLength: declareLength ? count : nil) { writer in
                var sent = 0
                let chunk = ByteBuffer(repeating: 0, count: 65_536)
                while sent < count {
                    let size = min(65_536, count - sent)
                    try await writer.write(chunk.getSlice(at: 0, length: size)!)
                    sent += size
                }
                try await writer.finish(nil)
            })
        case .trickle(let interval):
            return Response(status: .ok, body: ResponseBody { writer in
                while true {
                    try await writer.write(ByteBuffer(bytes: [0xFF]))
                    try await Task.sleep(for: interval)
                }
            })
        case .redirect(let target):
            return Response(status: .found, headers: [.location: target])
        case .status(let code):
            return Response(status: .init(code: code))
        }
    }

    private static func offset(_ range: String) -> Int? {
        guard range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
        return Int(range.dropFirst(6).dropLast())
    }
}
