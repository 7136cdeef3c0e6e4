import EaselSupport

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

/// The real file system.
package struct PosixFileOperations: FileOperations {
    package init() {}

    package func createFile(at path: String, writing chunks: [UnsafeRawBufferPointer], sync: Bool) throws(Errno) {
        let fd = try SystemCalls.open(path, .createNew)
        var failure: Errno?
        do {
            for chunk in chunks { try SystemCalls.writeAll(fd, chunk) }
            if sync { try SystemCalls.sync(fd) }
        } catch {
            failure = error
        }
        if !SystemCalls.close(fd), failure == nil { failure = Errno.current }
        if let failure {
            try? SystemCalls.unlink(path)
            throw failure
        }
    }

    package func rename(_ source: String, to destination: String) throws(Errno) { try SystemCalls.rename(source, to: destination) }

    package func unlink(_ path: String) throws(Errno) { try SystemCalls.unlink(path) }

    package func openForReading(_ path: String) throws(Errno) -> Int32 { try SystemCalls.open(path, .read) }

    package func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(Errno) -> Int {
        try SystemCalls.read(descriptor, into: buffer, at: offset)
    }

    package func makeDirectory(_ path: String) throws(Errno) { try SystemCalls.makeDirectory(path) }

    package func allocate(_ path: String, size: Int) throws(Errno) {
        let fd = try SystemCalls.open(path, .write)
        defer { SystemCalls.close(fd) }
        // glibc writes a byte into every block itself where the file system cannot fallocate.
        try SystemCalls.allocate(fd, offset: 0, length: size)
    }

    package func space(at path: String) throws(Errno) -> FileSystemSpace { try SystemCalls.space(at: path) }
}
