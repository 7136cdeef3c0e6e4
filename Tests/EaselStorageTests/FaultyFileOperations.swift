import EaselSupport
import EaselStorage
import Foundation

/// Real file operations, except that the next calls of chosen kinds fail with a chosen `errno`:
/// the way to produce a full disk or an I/O error on demand. On a `SimulatedDisk`, files that
/// would not fit fail with ENOSPC and `space(at:)` reports the simulated capacity.
final class FaultyFileOperations: FileOperations {
    enum Operation: Hashable, Sendable { case create, rename, unlink, open, read, mkdir, allocate }

    private let real = PosixFileOperations()
    private let faults = Locked<[Operation: Int32]>([:])
    private let disk: SimulatedDisk?

    init(disk: SimulatedDisk? = nil) { self.disk = disk }

    func fail(_ operation: Operation, with code: Int32) { faults.withLock { $0[operation] = code } }
    func heal() { faults.withLock { $0.removeAll() } }

    private func check(_ operation: Operation) throws(Errno) {
        if let code = faults.withLock({ $0[operation] }) { throw Errno(code) }
    }

    func createFile(at path: String, writing chunks: [UnsafeRawBufferPointer], sync: Bool) throws(Errno) {
        try check(.create)
        if let disk, !disk.allows(chunks.reduce(0) { $0 + $1.count }) { throw Errno(ENOSPC) }
        try real.createFile(at: path, writing: chunks, sync: sync)
    }

    func rename(_ source: String, to destination: String) throws(Errno) {
        try check(.rename)
        try real.rename(source, to: destination)
    }

    func unlink(_ path: String) throws(Errno) {
        try check(.unlink)
        try real.unlink(path)
    }

    func openForReading(_ path: String) throws(Errno) -> Int32 {
        try check(.open)
        return try real.openForReading(path)
    }

    func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(Errno) -> Int {
        try check(.read)
        return try real.read(descriptor, into: buffer, at: offset)
    }

    func makeDirectory(_ path: String) throws(Errno) {
        try check(.mkdir)
        try real.makeDirectory(path)
    }

    func allocate(_ path: String, size: Int) throws(Errno) {
        try check(.allocate)
        if let disk {
            var info = stat()
            let current = stat(path, &info) == 0 ? Int(info.st_size) : 0
            if !disk.allows(size - current) { throw Errno(ENOSPC) }
        }
        try real.allocate(path, size: size)
    }

    func space(at path: String) throws(Errno) -> FileSystemSpace {
        guard let disk else { return try real.space(at: path) }
        return FileSystemSpace(available: disk.available, total: disk.capacity)
    }
}
