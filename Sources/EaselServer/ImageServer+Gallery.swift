import EaselSupport
import EaselCodecs
import EaselPipeline
import EaselStorage
import Foundation
import Hummingbird
import NIOCore

extension ImageServer {
    // MARK: Gallery and metrics

    /// Answers per tier so far (for the gallery and tests).
    func metricsSnapshot() -> [String: Int] {
        Dictionary(uniqueKeysWithValues: pipeline.counters.answers.map { ($0.key.rawValue, $0.value) })
    }

    /// The image files of the file origin, sorted (blocking: a directory listing).
    static func listImages(in root: URL) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root.path) else { return [] }
        // Sources in the formats browsers show as images, by their file names.
        return names.filter { FormatRegistry.forExtension(URL(fileURLWithPath: $0).pathExtension)?.capabilities.contains(.web) == true }.sorted()
    }

    func gallery(_ request: Request) async throws -> Response {
        guard configuration.gallery else { throw RequestError.notFound("the gallery is turned off") }
        let all = await galleryListing.names()
        let pageSize = configuration.galleryPageSize
        let pages = max(1, (all.count + pageSize - 1) / pageSize)
        let page = request.uri.queryParameters["page"].flatMap { RequestNumber.whole($0, in: RequestNumber.anyWhole) } ?? 1
        guard (1...pages).contains(page) else { throw RequestError.notFound("no page \(page); pages 1–\(pages)") }
        let names = all[((page - 1) * pageSize)..<min(all.count, page * pageSize)]
        let small = configuration.formats.count > 1 ? configuration.formats[1].name : configuration.formats[0].name
        let thumb = configuration.formats[0].name
        let stats = await pipeline.statistics()
        let hits = metricsSnapshot()
        func link(_ format: String, _ name: String) -> String {
            let path = "/images/\(format)/" + (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)
            guard configuration.signNamedFormats, signer.isEnabled else { return path }
            return path + "?s=" + signer.signature(path: path)
        }
        let navigation = pages == 1 ? "" : "<nav>" + (page > 1 ? "<a rel=\"prev\" href=\"/?page=\(page - 1)\">previous</a> " : "")
            + "page \(page) of \(pages)" + (page < pages ? " <a rel=\"next\" href=\"/?page=\(page + 1)\">next</a>" : "") + "</nav>"
        var html = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Easel</title>
        <style>
        body { font: 15px system-ui, sans-serif; margin: 2em; background: #fafafa; color: #222 }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 1em }
        figure { margin: 0; background: #fff; padding: .5em; border-radius: 6px; box-shadow: 0 1px 3px #0002 }
        figure img { width: 100%; height: 180px; object-fit: contain; display: block }
        figcaption { font-size: 13px; margin-top: .3em; word-break: break-all }
        table { border-collapse: collapse; margin-top: 2em } td, th { padding: .2em .8em; text-align: left; border-bottom: 1px solid #ddd }
        </style></head>
        <body><h1>Easel</h1>
        <p>\(all.count) images from the origin, as <code>\(Self.escape(thumb))</code> thumbnails made by this server; each links to <code>\(Self.escape(small))</code>.</p>
        <div class="grid">

        """
        for name in names {
            html += """
            <figure><a href="\(Self.escape(link(small, name)))"><img src="\(Self.escape(link(thumb, name)))" alt="\(Self.escape(name))"></a>\
            <figcaption>\(Self.escape(name))</figcaption></figure>

            """
        }
        html += """
        </div>
        \(navigation)
        <h2>Caches</h2>
        <table><tr><th>tier</th><th>answers</th></tr>
        \(Self.tierLabels.map { "<tr><td>\($0.label)</td><td>\(hits[$0.key] ?? 0)</td></tr>" }.joined(separator: "\n"))
        </table>
        <table><tr><th>store</th><th>size</th></tr>
        <tr><td>memory (decoded)</td><td>\(Self.bytes(stats.memoryBytes))</td></tr>
        <tr><td>memory (encoded)</td><td>\(Self.bytes(stats.encodedMemoryBytes))</td></tr>
        <tr><td>disk (originals and variants)</td><td>\(Self.bytes(stats.diskBytes)) in \(stats.diskEntries) entries</td></tr>
        \(stats.tableEntries.sorted { $0.key < $1.key }.map { "<tr><td>table \(Self.escape($0.key))</td><td>\($0.value) entries</td></tr>" }.joined(separator: "\n"))
        </table>
        <script>
        // For the browser test: how many thumbnails loaded (natural width > 0).
        window.addEventListener("load", () => {
          const images = [...document.querySelectorAll(".grid img")];
          document.body.dataset.thumbnails = images.filter(i => i.complete && i.naturalWidth > 0).length + "/" + images.length;
        });
        </script>
        </body></html>

        """
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
        // The page's images may then be sized by the browser's hints (`w=auto`, `dpr=auto`).
        if configuration.delivery.acceptClientHints { headers[Self.acceptCHField] = "Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    static let tierLabels: [(key: String, label: String)] = [
        ("encodedMemory", "memory (encoded bytes)"), ("encodedDisk", "disk (encoded bytes)"),
        ("encodedShared", "shared store (encoded bytes)"), ("memory", "memory (decoded)"),
        ("table", "image table"), ("diskVariant", "disk (processed variant)"), ("diskOriginal", "disk (original)"),
        ("network", "origin (fetched and processed)"), ("file", "origin files (read and processed)"),
    ]

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func bytes(_ count: Int) -> String {
        count >= 1 << 20 ? String(format: "%.1f MiB", Double(count) / 1_048_576) : String(format: "%.1f KiB", Double(count) / 1024)
    }

    func metricsPage() async throws -> Response {
        let stats = await pipeline.statistics()
        metrics.cacheBytes(memory: stats.memoryBytes + stats.encodedMemoryBytes, disk: stats.diskBytes)
        metrics.queue.record(admission.count)
        metrics.budget(stats.memoryBudget, reserved: stats.reservedBytes, peak: stats.peakReservedBytes)
        metrics.connections(open: connections.count, evicted: connections.evictedCount)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }
}

/// The file origin's image names, listed off the cooperative pool and kept: a stale listing is
/// served while one refresh runs in the background, so `GET /` never lists a directory on the
/// request path once the first listing exists, however many clients ask at once.
final class GalleryListing: Sendable {
    private struct State {
        var names: [String]?
        var listedAt = ContinuousClock.now
        var refresh: Task<[String], Never>?
    }
    private let state = Locked(State())
    private let root: URL?
    /// How long a listing is served before a refresh starts.
    let freshness: Duration

    init(root: URL?, freshness: Duration = .seconds(10)) {
        self.root = root
        self.freshness = freshness
    }

    func names() async -> [String] {
        guard let root else { return [] }
        let (cached, refresh) = state.withLock { state -> ([String]?, Task<[String], Never>?) in
            let stale = state.names == nil || ContinuousClock.now - state.listedAt > freshness
            if stale, state.refresh == nil {
                state.refresh = Task {
                    let names = (try? await BlockingIOPool.shared.run { ImageServer.listImages(in: root) }) ?? []
                    self.state.withLock { state in
                        state.names = names
                        state.listedAt = .now
                        state.refresh = nil
                    }
                    return names
                }
            }
            return (state.names, state.refresh)
        }
        if let cached { return cached }
        return await refresh?.value ?? []
    }

    /// Returns once the refresh in progress, if any, has finished (for tests).
    func refreshed() async {
        let refresh = state.withLock { $0.refresh }
        _ = await refresh?.value
    }
}
