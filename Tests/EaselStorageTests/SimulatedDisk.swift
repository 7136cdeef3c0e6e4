import EaselSupport
import CSQLite
import EaselStorage
import Foundation

/// A small file system simulated over a real directory: every file under `root` counts against
/// `capacity`, and a write that would grow past it fails the way a full disk does (ENOSPC from
/// `FaultyFileOperations`, SQLITE_FULL from SQLite through `QuotaVFS`), so the index's own
/// write-ahead log and database file run out of space exactly as on a real full disk.
final class SimulatedDisk: Sendable {
    let root: String
    let capacity: Int
    let id: Int

    private static let registry = Locked<(next: Int, disks: [Int: SimulatedDisk])>((1, [:]))

    init(root: String, capacity: Int) {
        QuotaVFS.install()
        self.root = URL(fileURLWithPath: root).resolvingSymlinksInPath().path
        self.capacity = capacity
        id = Self.registry.withLock { registry in
            defer { registry.next += 1 }
            return registry.next
        }
        Self.registry.withLock { $0.disks[id] = self }
    }

    /// Stops counting: files opened later, or already open, write freely.
    func detach() { Self.registry.withLock { _ = $0.disks.removeValue(forKey: id) } }

    /// The disk whose root holds `path`, if any.
    static func containing(_ path: String) -> SimulatedDisk? {
        registry.withLock { registry in registry.disks.values.first { path.hasPrefix($0.root + "/") } }
    }

    static func withID(_ id: Int) -> SimulatedDisk? { registry.withLock { $0.disks[id] } }

    /// Bytes of every regular file below `root`.
    var used: Int { Self.bytes(below: root) }

    var available: Int { max(0, capacity - used) }

    /// True when `growth` more bytes fit.
    func allows(_ growth: Int) -> Bool { growth <= 0 || used + growth <= capacity }

    private static func bytes(below directory: String) -> Int {
        guard let stream = opendir(directory) else { return 0 }
        defer { closedir(stream) }
        var total = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            let path = directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: total += bytes(below: path)
            case S_IFREG: total += Int(info.st_size)
            default: break
            }
        }
        return total
    }
}

/// A SQLite VFS, made the process's default, that hands every call to the system's default VFS,
/// except that a write growing a file of a `SimulatedDisk` past its capacity returns SQLITE_FULL.
/// Files outside every simulated disk are untouched, so other tests running meanwhile see plain
/// SQLite.
///
/// Each open file is a header (`sqlite3_file` pointing at `methods`, and the disk's id) followed
/// by the default VFS's own file object, to which every method is forwarded.
enum QuotaVFS {
    private struct Header {
        var base: sqlite3_file
        var diskID: Int
    }

    private static let headerSize = MemoryLayout<Header>.stride

    /// The VFS this one forwards to, found before this one became the default.
    nonisolated(unsafe) private static let underlying = sqlite3_vfs_find(nil)!
    nonisolated(unsafe) private static let methods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(to: makeMethods())
        return methods
    }()

    private static let installation: Void = {
        let real = underlying
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: real.pointee)
        vfs.pointee.zName = UnsafePointer(strdup("easel-simulated-disk"))
        vfs.pointee.pNext = nil
        vfs.pointee.szOsFile = Int32(headerSize) + real.pointee.szOsFile
        vfs.pointee.xOpen = { _, name, file, flags, outFlags in
            let header = UnsafeMutableRawPointer(file!).assumingMemoryBound(to: Header.self)
            header.pointee.diskID = 0
            let rc = QuotaVFS.underlying.pointee.xOpen!(QuotaVFS.underlying, name, QuotaVFS.inner(file), flags, outFlags)
            guard rc == SQLITE_OK, QuotaVFS.inner(file).pointee.pMethods != nil else {
                header.pointee.base.pMethods = nil
                return rc == SQLITE_OK ? SQLITE_CANTOPEN : rc
            }
            header.pointee.diskID = name.flatMap { SimulatedDisk.containing(String(cString: $0))?.id } ?? 0
            header.pointee.base.pMethods = UnsafePointer(QuotaVFS.methods)
            return SQLITE_OK
        }
        vfs.pointee.xDelete = { _, name, syncDir in QuotaVFS.underlying.pointee.xDelete!(QuotaVFS.underlying, name, syncDir) }
        vfs.pointee.xAccess = { _, name, flags, result in QuotaVFS.underlying.pointee.xAccess!(QuotaVFS.underlying, name, flags, result) }
        vfs.pointee.xFullPathname = { _, name, count, out in
            QuotaVFS.underlying.pointee.xFullPathname!(QuotaVFS.underlying, name, count, out)
        }
        precondition(sqlite3_vfs_register(vfs, 1) == SQLITE_OK)
    }()

    /// Makes this VFS the default, once per process.
    static func install() { _ = installation }

    /// The default VFS's file object inside one of ours.
    private static func inner(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file!) + headerSize).assumingMemoryBound(to: sqlite3_file.self)
    }

    private static func innerMethods(_ file: UnsafeMutablePointer<sqlite3_file>?) -> sqlite3_io_methods {
        inner(file).pointee.pMethods.pointee
    }

    private static func disk(_ file: UnsafeMutablePointer<sqlite3_file>?) -> SimulatedDisk? {
        let id = UnsafeMutableRawPointer(file!).assumingMemoryBound(to: Header.self).pointee.diskID
        return id == 0 ? nil : SimulatedDisk.withID(id)
    }

    private static func makeMethods() -> sqlite3_io_methods {
        var m = sqlite3_io_methods()
        m.iVersion = 3
        m.xClose = { file in QuotaVFS.innerMethods(file).xClose!(QuotaVFS.inner(file)) }
        m.xRead = { file, buffer, amount, offset in QuotaVFS.innerMethods(file).xRead!(QuotaVFS.inner(file), buffer, amount, offset) }
        m.xWrite = { file, buffer, amount, offset in
            if let disk = QuotaVFS.disk(file) {
                var size: sqlite3_int64 = 0
                _ = QuotaVFS.innerMethods(file).xFileSize!(QuotaVFS.inner(file), &size)
                if !disk.allows(Int(offset) + Int(amount) - Int(size)) { return SQLITE_FULL }
            }
            return QuotaVFS.innerMethods(file).xWrite!(QuotaVFS.inner(file), buffer, amount, offset)
        }
        m.xTruncate = { file, size in QuotaVFS.innerMethods(file).xTruncate!(QuotaVFS.inner(file), size) }
        m.xSync = { file, flags in QuotaVFS.innerMethods(file).xSync!(QuotaVFS.inner(file), flags) }
        m.xFileSize = { file, size in QuotaVFS.innerMethods(file).xFileSize!(QuotaVFS.inner(file), size) }
        m.xLock = { file, level in QuotaVFS.innerMethods(file).xLock!(QuotaVFS.inner(file), level) }
        m.xUnlock = { file, level in QuotaVFS.innerMethods(file).xUnlock!(QuotaVFS.inner(file), level) }
        m.xCheckReservedLock = { file, result in QuotaVFS.innerMethods(file).xCheckReservedLock!(QuotaVFS.inner(file), result) }
        m.xFileControl = { file, operation, argument in
            // A size hint would make a sparse file, which this simple accounting would count as used.
            if operation == SQLITE_FCNTL_SIZE_HINT, QuotaVFS.disk(file) != nil { return SQLITE_OK }
            return QuotaVFS.innerMethods(file).xFileControl!(QuotaVFS.inner(file), operation, argument)
        }
        m.xSectorSize = { file in QuotaVFS.innerMethods(file).xSectorSize!(QuotaVFS.inner(file)) }
        m.xDeviceCharacteristics = { file in QuotaVFS.innerMethods(file).xDeviceCharacteristics!(QuotaVFS.inner(file)) }
        m.xShmMap = { file, page, size, extend, pointer in
            QuotaVFS.innerMethods(file).xShmMap!(QuotaVFS.inner(file), page, size, extend, pointer)
        }
        m.xShmLock = { file, offset, count, flags in QuotaVFS.innerMethods(file).xShmLock!(QuotaVFS.inner(file), offset, count, flags) }
        m.xShmBarrier = { file in QuotaVFS.innerMethods(file).xShmBarrier!(QuotaVFS.inner(file)) }
        m.xShmUnmap = { file, delete in QuotaVFS.innerMethods(file).xShmUnmap!(QuotaVFS.inner(file), delete) }
        m.xFetch = { file, offset, amount, pointer in
            QuotaVFS.innerMethods(file).xFetch!(QuotaVFS.inner(file), offset, amount, pointer)
        }
        m.xUnfetch = { file, offset, pointer in QuotaVFS.innerMethods(file).xUnfetch!(QuotaVFS.inner(file), offset, pointer) }
        return m
    }
}
