// The framework's ceiling for `easel serve`'s warm path: a bare Hummingbird route that answers
// `GET /images/thumb/{name}` with bytes preloaded from a directory, with the same headers easel
// sends (type, length, strong ETag, Cache-Control, Vary) and nothing else: no cache lookup, no
// negotiation, no metrics. Used by Benchmarks/peers/serve-vs-nginx.sh.
//
//   BareRoute DIRECTORY PORT
import Foundation
import Hummingbird
import NIOCore

@main
struct BareRoute {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let port = Int(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: BareRoute DIRECTORY PORT\n".utf8))
            exit(2)
        }
        let directory = URL(fileURLWithPath: arguments[1])
        var files: [String: (bytes: ByteBuffer, etag: String)] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            files[name] = (ByteBuffer(bytes: data), "\"\(String(data.hashValue, radix: 16))\"")
        }
        let table = files

        let router = Router()
        router.get("/images/thumb/:name") { _, context -> Response in
            guard let name = context.parameters.get("name"), let file = table[name] else { return Response(status: .notFound) }
            return Response(status: .ok, headers: [.contentType: "image/jpeg", .contentLength: String(file.bytes.readableBytes), .eTag: file.etag,
                                                   .cacheControl: "public, max-age=86400", .vary: "Accept"],
                            body: .init(byteBuffer: file.bytes))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "bare"))
        try await app.runService()
    }
}
