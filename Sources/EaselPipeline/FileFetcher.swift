import EaselCodecs
import EaselSupport
import EaselStorage
import Foundation

/// Reads file URLs below a root directory: paths that leave it — through `..` or a symbolic
/// link pointing outside — are `PipelineError.fileNotFound`, as if they did not exist.
public struct FileFetcher: ImageFetcher {
    /// The directory whose files, and whose subdirectories' files, may be read.
    public let root: URL
    /// Files larger than this are refused (default 20 MB, like downloads).
    public let maximumBytes: Int
    private let resolvedRoot: String
    /// Single files outside the root that may be read too (resolved paths, compared exactly).
    private let extraFiles: Set<[UInt8]>

    /// - Parameters:
    ///   - root: the directory whose files (and whose subdirectories' files) may be read.
    ///   - maximumBytes: files larger than this are refused.
    ///   - files: files outside `root` that may also be read (e.g. a configured watermark
    ///     image); nothing else beside them is.
    public init(root: URL, maximumBytes: Int = 20_000_000, alsoAllowing files: [URL] = []) {
        self.root = root
        self.maximumBytes = maximumBytes
        resolvedRoot = Self.realPath(root.path) ?? root.standardizedFileURL.path
        extraFiles = Set(files.map { Array((Self.realPath($0.path) ?? $0.standardizedFileURL.path).utf8) })
    }

    public func canFetch(_ url: URL) -> Bool { url.isFileURL }

    /// Local files are already on disk: the pipeline keeps no copy of them (their variants and
    /// table entries are still cached).
    public var cachesOriginals: Bool { false }

    public var tier: ImageTier { .file }

    public func cacheKey(for url: URL) -> String { "file://" + url.standardizedFileURL.path }

    /// The file for `url` when it lies inside the root (after resolving symbolic links).
    public func confinedPath(for url: URL) -> String? {
        let path = url.path
        guard !path.split(separator: "/").contains("..") else { return nil }
        guard let resolved = Self.realPath(path) else { return nil }
        return isInsideRoot(resolved) ? resolved : nil
    }

    /// Compares bytes, not characters: `String.hasPrefix` treats canonically equivalent
    /// Unicode forms (NFC `café`, NFD `café`) as equal, and they are different directories.
    func isInsideRoot(_ resolved: String) -> Bool {
        let prefix = resolvedRoot.hasSuffix("/") ? resolvedRoot : resolvedRoot + "/"
        return resolved.utf8.starts(with: prefix.utf8) || extraFiles.contains(Array(resolved.utf8))
    }

    public func fetch(_ request: FetchRequest, into sink: FetchSink) async throws(PipelineError) -> FetchResponse {
        let url = request.url
        let limit = maximumBytes
        let (data, modified) = try await BlockingIOPool.shared.perform { () throws(PipelineError) in try self.read(url, limit: limit) }
        try Task.checkCancellation(orThrow: .cancelled)
        sink.expect(data.count)
        sink.adopt(data)
        return FetchResponse(outcome: .complete, metadata: HTTPMetadata(lastModified: String(Int(checked: modified))))
    }

    /// Opens the file and checks the root on the open descriptor (what /proc says it is), so a
    /// path swapped for a symbolic link after the check cannot escape; then maps it (`InputFile`:
    /// every request waiting for a decode holds a mapping, not a copy, and the decoders hand
    /// back the pages they have read), or reads it where it cannot be mapped. Blocking.
    private func read(_ url: URL, limit: Int) throws(PipelineError) -> (Data, Double) {
        guard let path = confinedPath(for: url) else { throw .fileNotFound(url.path) }
        // O_NONBLOCK: a FIFO planted in the root must not block a pool thread in open.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { throw .fileNotFound(url.path) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        if let opened = Self.realPath("/proc/self/fd/\(fd)") {
            guard isInsideRoot(opened) else { throw .fileNotFound(url.path) }
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw .fileNotFound(url.path) }
        guard Int(info.st_size) <= limit else { throw .tooLarge(limit: limit, received: 0, declared: Int(info.st_size)) }
        let data: Data
        do {
            // (The handle owns the descriptor: it lives until the file is mapped or read.)
            data = try withExtendedLifetime(handle) { try InputFile(descriptor: handle.fileDescriptor, path: path, limit: limit).data }
        } catch let error as CodecError {
            guard case .inputTooLarge(let bytes, _) = error else { throw .fileNotFound(url.path) }
            throw .tooLarge(limit: limit, received: bytes, declared: nil)
        } catch {
            throw .fileNotFound(url.path)
        }
        return (data, Double(info.st_mtim.tv_sec))
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
