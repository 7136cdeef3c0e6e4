import EaselStorage
import Foundation

/// Reads file URLs below a root directory: paths that leave it — through `..` or a symbolic
/// link pointing outside — are `PipelineError.fileNotFound`, as if they did not exist.
public struct FileFetcher: ImageFetcher {
    public let root: URL
    /// Files larger than this are refused (default 20 MB, like downloads).
    public let maximumBytes: Int
    private let resolvedRoot: String

    public init(root: URL, maximumBytes: Int = 20_000_000) {
        self.root = root
        self.maximumBytes = maximumBytes
        resolvedRoot = Self.realPath(root.path) ?? root.standardizedFileURL.path
    }

    public func canFetch(_ url: URL) -> Bool { url.isFileURL }

    public func cacheKey(for url: URL) -> String { "file://" + url.standardizedFileURL.path }

    /// The file for `url` when it lies inside the root (after resolving symbolic links).
    public func confinedPath(for url: URL) -> String? {
        let path = url.path
        guard !path.split(separator: "/").contains("..") else { return nil }
        guard let resolved = Self.realPath(path) else { return nil }
        let prefix = resolvedRoot.hasSuffix("/") ? resolvedRoot : resolvedRoot + "/"
        return resolved.hasPrefix(prefix) ? resolved : nil
    }

    public func fetch(_ request: FetchRequest, into sink: FetchSink) async throws(PipelineError) -> FetchResponse {
        let url = request.url
        guard let path = confinedPath(for: url) else { throw .fileNotFound(url.path) }
        let limit = maximumBytes
        let result: Result<(Data, Double), PipelineError> = await withCheckedContinuation { continuation in
            BlockingIOPool.shared.submit {
                continuation.resume(returning: Result { () throws(PipelineError) -> (Data, Double) in
                    var info = stat()
                    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw .fileNotFound(url.path) }
                    guard Int(info.st_size) <= limit else {
                        throw .tooLarge(limit: limit, received: 0, declared: Int(info.st_size))
                    }
                    guard let data = FileManager.default.contents(atPath: path) else { throw .fileNotFound(url.path) }
                    return (data, Double(info.st_mtim.tv_sec))
                })
            }
        }
        let (data, modified) = try result.get()
        try Task.checkCancellation(orThrow: .cancelled)
        sink.reset()
        sink.expect(data.count)
        sink.append(data)
        let lastModified = Date(timeIntervalSince1970: modified)
        return FetchResponse(outcome: .complete, metadata: HTTPMetadata(lastModified: String(Int(lastModified.timeIntervalSince1970))))
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension Task where Success == Never, Failure == Never {
    /// Throws `error` when the current task is cancelled.
    static func checkCancellation(orThrow error: PipelineError) throws(PipelineError) {
        if Task.isCancelled { throw error }
    }
}
