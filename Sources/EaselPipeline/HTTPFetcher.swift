import EaselSupport
import AsyncHTTPClient
import EaselStorage
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression

/// Fetches http and https URLs with AsyncHTTPClient, within limits:
/// - `connectTimeout` to open a connection, `deadline` for the whole download (head and body);
/// - at most `maximumBytes` (default 20 MB): a larger Content-Length is refused before the body
///   is read, and the body is counted as it streams (after any decompression), so a server that
///   lies or sends no length is cut off one buffer past the limit;
/// - at most `maximumRedirects` (5) redirects, each checked by `urlPolicy` before it is followed;
/// - non-2xx answers are `PipelineError.httpStatus`.
///
/// Call `shutdown()` when done with it.
public final class HTTPFetcher: ImageFetcher {
    /// The fetcher's limits, identity and URL policy.
    public struct Configuration: Sendable {
        /// Time allowed to open a connection. Default 5 seconds.
        public var connectTimeout: Duration
        /// Time allowed for a whole download, redirects, head and body included; past it the
        /// fetch fails with `.timedOut`. Default 10 seconds.
        public var deadline: Duration
        /// Largest body accepted, in bytes after decompression; a larger one is
        /// `PipelineError.tooLarge`. Default 20 MB.
        public var maximumBytes: Int
        /// Redirects followed at most; one more is `PipelineError.tooManyRedirects`. Default 5.
        public var maximumRedirects: Int
        /// The User-Agent header sent with every request. Default `Easel/1.0`.
        public var userAgent: String
        /// Checked before the first request and every redirect hop; throw to refuse the URL.
        public var urlPolicy: @Sendable (URL) async throws(PipelineError) -> Void

        /// Creates a configuration; every setting has the default its property names, and the
        /// default `urlPolicy` allows every URL.
        public init(connectTimeout: Duration = .seconds(5), deadline: Duration = .seconds(10), maximumBytes: Int = 20_000_000,
                    maximumRedirects: Int = 5, userAgent: String = "Easel/1.0",
                    urlPolicy: @escaping @Sendable (URL) async throws(PipelineError) -> Void = { _ throws(PipelineError) in }) {
            self.connectTimeout = connectTimeout
            self.deadline = deadline
            self.maximumBytes = maximumBytes
            self.maximumRedirects = maximumRedirects
            self.userAgent = userAgent
            self.urlPolicy = urlPolicy
        }
    }

    /// The limits the fetcher was made with.
    public let configuration: Configuration
    private let client: HTTPClient

    /// Creates a fetcher with an HTTP client of its own (redirects are followed by the fetcher,
    /// so that `urlPolicy` sees each hop); call `shutdown()` when done.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Int64(checked: configuration.connectTimeout.seconds * 1e9))),
            decompression: .enabled(limit: .size(configuration.maximumBytes + 1)))
        clientConfiguration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    /// Closes the connections. Pending fetches fail.
    public func shutdown() async throws { try await client.shutdown() }

    public func canFetch(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        return scheme == "http" || scheme == "https"
    }

    public func fetch(_ request: FetchRequest, into sink: FetchSink) async throws(PipelineError) -> FetchResponse {
        do {
            return try await bounded(by: configuration.deadline) { () async throws(PipelineError) in
                try await self.download(request, into: sink)
            }
        } catch {
            // A download that completed stays complete even if cancellation came just after.
            throw Task.isCancelled ? .cancelled : error
        }
    }

    private func download(_ request: FetchRequest, into sink: FetchSink) async throws(PipelineError) -> FetchResponse {
        var url = request.url
        var redirects = 0
        var resume = request.resume
        while true {
            try await configuration.urlPolicy(url)
            let response = try await send(outgoingRequest(url, for: request, resume: resume))
            let status = Int(response.status.code)
            if [301, 302, 303, 307, 308].contains(status) {
                redirects += 1
                url = try redirectTarget(of: response, status: status, from: url, hop: redirects)
                continue
            }
            let metadata = Self.metadata(of: response)
            if status == 304, request.revalidating != nil { return FetchResponse(outcome: .notModified, metadata: metadata) }
            if status == 416, resume != nil {
                // The range no longer fits (the resource changed size): start over.
                resume = nil
                sink.reset()
                continue
            }
            guard (200..<300).contains(status) else { throw .httpStatus(status, url: url.absoluteString) }
            var resumed = false
            if status == 206 {
                // Only a range that starts where we stopped continues the body; anything else
                // starts over without a Range header.
                let range = response.headers.first(name: "Content-Range") ?? ""
                guard let offset = resume?.offset, range.lowercased().hasPrefix("bytes \(offset)-"), sink.count == offset else {
                    guard resume != nil else { throw .network("a partial answer (\(range)) to a request for the whole body") }
                    resume = nil
                    sink.reset()
                    continue
                }
                resumed = true
            } else {
                sink.reset()
            }
            sink.rangeValidator = metadata.acceptsRanges ? metadata.rangeValidator : nil
            try await receiveBody(of: response, into: sink)
            return FetchResponse(outcome: resumed ? .resumed : .complete, metadata: metadata)
        }
    }

    /// The GET for `url`: the fetcher's User-Agent and Accept, the stored copy's validators when
    /// `request` revalidates one, and a Range (with If-Range) from `resume`'s offset.
    private func outgoingRequest(_ url: URL, for request: FetchRequest, resume: (offset: Int, validator: String)?) -> HTTPClientRequest {
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.headers.add(name: "User-Agent", value: configuration.userAgent)
        outgoing.headers.add(name: "Accept", value: "image/webp,image/png,image/jpeg,image/gif,*/*;q=0.5")
        if let stored = request.revalidating {
            if let etag = stored.etag { outgoing.headers.add(name: "If-None-Match", value: etag) }
            if let lastModified = stored.lastModified { outgoing.headers.add(name: "If-Modified-Since", value: lastModified) }
        }
        if let resume, resume.offset > 0 {
            outgoing.headers.add(name: "Range", value: "bytes=\(resume.offset)-")
            outgoing.headers.add(name: "If-Range", value: resume.validator)
        }
        return outgoing
    }

    /// Sends `outgoing` and waits for the answer's head; a failure is `.network` (or `.cancelled`).
    private func send(_ outgoing: HTTPClientRequest) async throws(PipelineError) -> HTTPClientResponse {
        do {
            return try await client.execute(outgoing, timeout: .hours(1))  // the deadline is ours
        } catch {
            throw Task.isCancelled ? .cancelled : .network("\(error)")
        }
    }

    /// Where a redirect from `url` leads, once `hop` redirects have been made: its Location
    /// (none is `.httpStatus`), within `maximumRedirects`, with a scheme the fetcher handles.
    private func redirectTarget(of response: HTTPClientResponse, status: Int, from url: URL, hop: Int) throws(PipelineError) -> URL {
        guard let location = response.headers.first(name: "Location"),
              let next = URL(string: location, relativeTo: url)?.absoluteURL else {
            throw .httpStatus(status, url: url.absoluteString)
        }
        guard hop <= configuration.maximumRedirects else { throw .tooManyRedirects(limit: configuration.maximumRedirects) }
        // Only http and https: AsyncHTTPClient would also follow http+unix:// to a local socket.
        guard canFetch(next) else { throw .forbiddenURL(next.absoluteString, reason: "redirect to an unsupported scheme") }
        return next
    }

    /// The validators and caching headers of an answer.
    private static func metadata(of response: HTTPClientResponse) -> HTTPMetadata {
        HTTPMetadata(
            etag: response.headers.first(name: "ETag"), lastModified: response.headers.first(name: "Last-Modified"),
            cacheControl: response.headers[canonicalForm: "Cache-Control"].map(String.init).joined(separator: ", ").nilIfEmpty,
            contentType: response.headers.first(name: "Content-Type"), expires: response.headers.first(name: "Expires"),
            acceptsRanges: response.headers.first(name: "Accept-Ranges")?.lowercased() == "bytes")
    }

    /// Appends the answer's body to `sink` within `maximumBytes` (what the sink holds
    /// included): a larger Content-Length is refused before the body is read, and the body is
    /// counted as it streams.
    private func receiveBody(of response: HTTPClientResponse, into sink: FetchSink) async throws(PipelineError) {
        let limit = configuration.maximumBytes
        let declared = response.headers.first(name: "Content-Length").flatMap(Int.init)
        if let declared, sink.count + declared > limit {
            throw .tooLarge(limit: limit, received: sink.count, declared: sink.count + declared)
        }
        sink.expect(declared.map { $0 + sink.count })
        do {
            for try await buffer in response.body {
                guard sink.count + buffer.readableBytes <= limit else {
                    throw PipelineError.tooLarge(limit: limit, received: sink.count + buffer.readableBytes, declared: nil)
                }
                sink.append(buffer.readableBytesView)
            }
        } catch let error as PipelineError {
            throw error
        } catch {
            // AsyncHTTPClient's own decompression limit (set just past ours) ends a
            // compressed body that inflates past the limit.
            if error is NIOHTTPDecompression.DecompressionError {
                throw .tooLarge(limit: limit, received: sink.count, declared: nil)
            }
            throw Task.isCancelled ? .cancelled : .network("\(error)")
        }
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
