#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// The file-system calls the disk cache makes, behind one seam so tests can inject faults
/// (a full disk, an I/O error, a denied permission) that cannot be caused on demand for real.
///
/// Every method reports failure as an `errno` value.
package protocol FileOperations: Sendable {
    /// Creates `path` (which must not exist), writes `chunks` in order, optionally fsyncs, closes.
    func createFile(at path: String, writing chunks: [UnsafeRawBufferPointer], sync: Bool) throws(Errno)
    /// Atomically moves `source` onto `destination`.
    func rename(_ source: String, to destination: String) throws(Errno)
    /// Removes a file.
    func unlink(_ path: String) throws(Errno)
    /// Opens a file for reading; the caller closes the descriptor.
    func openForReading(_ path: String) throws(Errno) -> Int32
    /// Reads exactly `buffer.count` bytes at `offset`, or fewer at end of file; returns the count.
    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(Errno) -> Int
    /// Creates a directory; an existing one is not an error.
    func makeDirectory(_ path: String) throws(Errno)
    /// Creates `path` if needed and gives it real blocks up to `size` bytes (never a sparse file).
    func allocate(_ path: String, size: Int) throws(Errno)
    /// Free and total bytes of the file system holding `path`, as an unprivileged user sees them.
    func space(at path: String) throws(Errno) -> FileSystemSpace
}

/// What `statvfs` reports about a file system, in bytes.
package struct FileSystemSpace: Equatable, Sendable {
    /// Bytes an unprivileged process may still write.
    package var available: Int
    package var total: Int
    package init(available: Int, total: Int) {
        self.available = available
        self.total = total
    }
}

/// An `errno` value thrown by `FileOperations`.
package struct Errno: Error, Equatable, Sendable {
    package let code: Int32
    package init(_ code: Int32) { self.code = code }
    static var current: Errno { Errno(errno) }

    /// The `errno` carried by `error`, or EIO for anything else.
    static func code(of error: any Error) -> Int32 { (error as? Errno)?.code ?? EIO }
}

/// The real file system.
package struct PosixFileOperations: FileOperations {
    package init() {}

    package func createFile(at path: String, writing chunks: [UnsafeRawBufferPointer], sync: Bool) throws(Errno) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Errno.current }
        var failure: Errno?
        outer: for chunk in chunks {
            guard var pointer = chunk.baseAddress else { continue }
            var remaining = chunk.count
            while remaining > 0 {
                let written = write(fd, pointer, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = Errno.current
                    break outer
                }
                pointer += written
                remaining -= written
            }
        }
        if failure == nil, sync, fsync(fd) != 0 { failure = Errno.current }
        if close(fd) != 0, failure == nil { failure = Errno.current }
        if let failure {
            Glibc.unlink(path)
            throw failure
        }
    }

    package func rename(_ source: String, to destination: String) throws(Errno) {
        guard Glibc.rename(source, destination) == 0 else { throw Errno.current }
    }

    package func unlink(_ path: String) throws(Errno) {
        guard Glibc.unlink(path) == 0 else { throw Errno.current }
    }

    package func openForReading(_ path: String) throws(Errno) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Errno.current }
        return fd
    }

    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(Errno) -> Int {
        var total = 0
        while total < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + total, buffer.count - total, off_t(offset + total))
            if n < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            if n == 0 { break }
            total += n
        }
        return total
    }

    package func makeDirectory(_ path: String) throws(Errno) {
        if mkdir(path, 0o755) != 0, errno != EEXIST { throw Errno.current }
    }

    package func allocate(_ path: String, size: Int) throws(Errno) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Errno.current }
        defer { close(fd) }
        // glibc writes a byte into every block itself where the file system cannot fallocate.
        var result: Int32
        repeat { result = posix_fallocate(fd, 0, off_t(size)) } while result == EINTR
        if result != 0 { throw Errno(result) }
    }

    package func space(at path: String) throws(Errno) -> FileSystemSpace {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw Errno.current }
        let unit = Int(info.f_frsize)
        return FileSystemSpace(available: Int(info.f_bavail) * unit, total: Int(info.f_blocks) * unit)
    }
}
