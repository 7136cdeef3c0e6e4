// The ceiling of answering `easel serve`'s warm path inside the SwiftNIO channel pipeline (the
// experiment of issue 14): a plain NIO HTTP/1.1 server, no framework, whose one handler answers
// `GET` (and `HEAD`) `/images/thumb/{name}` from bytes preloaded from a directory, with the
// headers easel sends (type, length, strong ETag, Cache-Control, Vary, X-Content-Type-Options)
// plus Date and Server as every server here sends them — no router, no concurrency-pool hop, no
// cache lookup, no metrics. One event loop per core. Used by Benchmarks/peers/serve-vs-nginx.sh next to BareRoute (the same through
// Hummingbird), easel and nginx.
//
//   BareNIO DIRECTORY PORT
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The bytes and headers of one preloaded thumbnail (immutable, shared by every event loop).
struct Entry: Sendable {
    var body: ByteBuffer
    var etag: String
}

/// The HTTP date, formatted at most once a second per connection.
final class DateCache {
    private var second = 0
    private var text = ""
    private let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()

    func now() -> String {
        let current = Int(Date().timeIntervalSince1970)
        if current != second {
            second = current
            text = formatter.string(from: Date(timeIntervalSince1970: Double(current)))
        }
        return text
    }
}

final class ThumbnailHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let table: [String: Entry]
    private let dates: DateCache
    private var head: HTTPRequestHead?

    init(table: [String: Entry], dates: DateCache) {
        self.table = table
        self.dates = dates
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
        case .body:
            break
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let prefix = "/images/thumb/"
        var headers = HTTPHeaders()
        headers.add(name: "server", value: "bare-nio")
        headers.add(name: "date", value: dates.now())
        let status: HTTPResponseStatus
        var body: ByteBuffer?
        if request.method == .GET || request.method == .HEAD, request.uri.hasPrefix(prefix),
           let entry = table[String(request.uri.dropFirst(prefix.count))] {
            status = .ok
            headers.add(name: "content-type", value: "image/jpeg")
            headers.add(name: "content-length", value: String(entry.body.readableBytes))
            headers.add(name: "etag", value: entry.etag)
            headers.add(name: "cache-control", value: "public, max-age=86400")
            headers.add(name: "vary", value: "Accept")
            headers.add(name: "x-content-type-options", value: "nosniff")
            if request.method == .GET { body = entry.body }
        } else {
            status = .notFound
            headers.add(name: "content-length", value: "0")
        }
        let keepAlive = request.isKeepAlive
        if !keepAlive {
            headers.add(name: "connection", value: "close")
        } else if request.version == .http1_0 {
            headers.add(name: "connection", value: "keep-alive")
        }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

@main
struct BareNIO {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let port = Int(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: BareNIO DIRECTORY PORT\n".utf8))
            exit(2)
        }
        let directory = URL(fileURLWithPath: arguments[1])
        var files: [String: Entry] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            // FNV-1a of the bytes: stable from run to run (unlike `hashValue`).
            let hash = data.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
            files[name] = Entry(body: ByteBuffer(bytes: data), etag: "\"\(String(hash, radix: 16))\"")
        }
        let table = files
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: true)
                    try channel.pipeline.syncOperations.addHandler(ThumbnailHandler(table: table, dates: DateCache()))
                }
            }
        let channel = try bootstrap.bind(host: "127.0.0.1", port: port).wait()
        try channel.closeFuture.wait()
    }
}
