#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The system calls of the disk cache, the image tables and pixel buffers, as small Swift
// functions: with `Platform.swift`, `Locked.swift` and `FileLock.swift`, the only code that
// imports the C library.

/// An `errno` value.
package struct Errno: Error, Equatable, Sendable {
    package let code: Int32
    package init(_ code: Int32) { self.code = code }
    /// The calling thread's `errno` now.
    package static var current: Errno { Errno(errno) }
    /// The `errno` carried by `error`, or EIO for anything else.
    package static func code(of error: any Error) -> Int32 { (error as? Errno)?.code ?? EIO }

    package static let noSuchFile = Errno(ENOENT)
    package static let noSpace = Errno(ENOSPC)
    package static let quotaExceeded = Errno(EDQUOT)
    package static let accessDenied = Errno(EACCES)
    package static let notPermitted = Errno(EPERM)
    package static let readOnlyFileSystem = Errno(EROFS)
    package static let interrupted = Errno(EINTR)
    package static let exists = Errno(EEXIST)
    package static let tooManyOpenFiles = Errno(EMFILE)
    package static let wouldBlock = Errno(EWOULDBLOCK)
    package static let noMemory = Errno(ENOMEM)
    package static let io = Errno(EIO)
    package static let fileTooLarge = Errno(EFBIG)
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

/// Files, descriptors and mappings. Every call retries on EINTR where that is meaningful and
/// reports failure as `Errno`.
package enum SystemCalls {
    /// Sets the environment variable `name` of this process (for libraries that read only the
    /// process's environment); false when the C library refused it.
    @discardableResult
    package static func setEnvironment(_ name: String, _ value: String) -> Bool { setenv(name, value, 1) == 0 }

    package enum OpenMode {
        case read
        case readWrite(create: Bool)
        /// Write-only, creating the file, which must not exist.
        case createNew
        /// Write-only, creating the file if needed.
        case write
    }

    package static func open(_ path: String, _ mode: OpenMode) throws(Errno) -> Int32 {
        let flags: Int32 = switch mode {
        case .read: O_RDONLY
        case .readWrite(let create): O_RDWR | (create ? O_CREAT : 0)
        case .createNew: O_WRONLY | O_CREAT | O_EXCL
        case .write: O_WRONLY | O_CREAT
        }
        let fd = systemOpen(path, flags | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Errno.current }
        return fd
    }

    @discardableResult
    package static func close(_ descriptor: Int32) -> Bool { cClose(descriptor) == 0 }

    /// Writes all of `buffer`.
    package static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) throws(Errno) {
        guard var pointer = buffer.baseAddress else { return }
        var remaining = buffer.count
        while remaining > 0 {
            let written = cWrite(descriptor, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            pointer += written
            remaining -= written
        }
    }

    /// Reads up to `buffer.count` bytes at `offset` (fewer only at end of file).
    package static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(Errno) -> Int {
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

    /// Writes all of `buffer` at `offset`.
    package static func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int) throws(Errno) {
        var total = 0
        while total < buffer.count {
            let n = pwrite(descriptor, buffer.baseAddress! + total, buffer.count - total, off_t(offset + total))
            if n < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            total += n
        }
    }

    package static func sync(_ descriptor: Int32) throws(Errno) {
        guard fsync(descriptor) == 0 else { throw Errno.current }
    }

    package static func rename(_ source: String, to destination: String) throws(Errno) {
        guard cRename(source, destination) == 0 else { throw Errno.current }
    }

    package static func unlink(_ path: String) throws(Errno) {
        guard cUnlink(path) == 0 else { throw Errno.current }
    }

    /// Creates a directory; an existing one is not an error.
    package static func makeDirectory(_ path: String) throws(Errno) {
        if mkdir(path, 0o755) != 0, errno != EEXIST { throw Errno.current }
    }

    /// Gives the file real blocks from `offset` for `length` bytes (never sparse).
    package static func allocate(_ descriptor: Int32, offset: Int, length: Int) throws(Errno) {
        var result: Int32
        repeat { result = posix_fallocate(descriptor, off_t(offset), off_t(length)) } while result == EINTR
        if result != 0 { throw Errno(result) }
    }

    package static func truncate(_ descriptor: Int32, to size: Int) throws(Errno) {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw Errno.current }
    }

    /// The size of an open file.
    package static func size(of descriptor: Int32) throws(Errno) -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Errno.current }
        return Int(info.st_size)
    }

    /// Device and inode of an open file, or of a path: equal when they are the same file.
    package static func identity(of descriptor: Int32) -> FileIdentity? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    package static func identity(ofPath path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    package static func space(at path: String) throws(Errno) -> FileSystemSpace {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw Errno.current }
        let unit = Int(info.f_frsize)
        return FileSystemSpace(available: Int(info.f_bavail) * unit, total: Int(info.f_blocks) * unit)
    }

    /// `flock`: exclusive or shared, waiting or not; false when not waiting and it is held.
    package static func lock(_ descriptor: Int32, exclusive: Bool, wait: Bool) throws(Errno) -> Bool {
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
        while flock(descriptor, operation) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK, !wait { return false }
            throw Errno.current
        }
        return true
    }

    package static func unlock(_ descriptor: Int32) { _ = flock(descriptor, LOCK_UN) }

    package static var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

    /// A shared, read-write mapping of a file.
    package static func mapShared(_ descriptor: Int32, length: Int) throws(Errno) -> UnsafeMutableRawPointer {
        guard let mapping = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapping != MAP_FAILED else {
            throw Errno.current
        }
        return mapping
    }

    /// Zero-filled private memory, faulted in at once (page-aligned); nil when none is left.
    package static func mapAnonymous(length: Int) -> UnsafeMutableRawPointer? {
        guard let memory = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0),
              memory != MAP_FAILED else { return nil }
        return memory
    }

    package static func unmap(_ pointer: UnsafeMutableRawPointer, length: Int) { _ = munmap(pointer, length) }

    /// Writes a mapping's dirty pages back: at once (`wait`) or scheduled.
    package static func flushMapping(_ pointer: UnsafeMutableRawPointer, length: Int, wait: Bool) throws(Errno) {
        guard msync(pointer, length, wait ? MS_SYNC : MS_ASYNC) == 0 else { throw Errno.current }
    }

    /// `alignment`-aligned heap memory, zeroed; nil when none is left.
    package static func allocateAligned(_ byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer? {
        var memory: UnsafeMutableRawPointer?
        guard posix_memalign(&memory, alignment, max(byteCount, 1)) == 0, let memory else { return nil }
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        return memory
    }

    package static func freeAligned(_ pointer: UnsafeMutableRawPointer) { free(pointer) }

    /// Whether two byte ranges are equal (`memcmp`).
    package static func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool { memcmp(a, b, count) == 0 }

    /// Lets another thread run.
    package static func yieldThread() { _ = sched_yield() }
}

/// Which file an open descriptor or a path is.
package struct FileIdentity: Equatable, Sendable {
    package let device: UInt64
    package let inode: UInt64
}

// The C functions under names the wrappers above do not shadow.
private func cClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func cWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, pointer, count) }
private func cRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func cUnlink(_ path: String) -> Int32 { unlink(path) }

/// One pointer per thread (`pthread_key_t`): what `WorkCancellation` keeps the current job's
/// flag in. The slot holds no reference: whoever sets a pointer keeps its object alive.
package final class ThreadSlot: Sendable {
    private let key: pthread_key_t

    package init() {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        self.key = key
    }

    /// This thread's pointer (nil until set).
    package var value: UnsafeMutableRawPointer? {
        get { pthread_getspecific(key) }
        set { pthread_setspecific(key, newValue) }
    }
}

#if os(Linux)
/// What `easel serve` sets and reads on its listening socket at shutdown (Linux), so that no
/// connection the kernel has already completed is reset when the listener closes: first new
/// connections are refused at the door (pure SYNs dropped; handshakes already under way finish),
/// then the accept queue is drained by the server's own accepting, then the listener closes.
package enum ListenerSocket {
    package static let socketLevel = Int(SOL_SOCKET)
    package static let tcpLevel = Int(IPPROTO_TCP)
    /// `SO_ATTACH_FILTER` (asm-generic, the value on every Linux architecture Swift runs on).
    package static let attachFilter: Int32 = 26
    package static let tcpInfo = Int32(TCP_INFO)

    /// `struct sock_fprog`: the number of instructions and their address.
    package struct FilterProgram: Sendable {
        let length: UInt16
        let instructions: UInt
    }

    /// A classic BPF program run on each packet for the listener, from its TCP header: a pure
    /// SYN (SYN without ACK) is dropped — the client retries, then finds the port closed —
    /// every other packet passes, so handshakes already under way complete.
    package static let dropNewConnections: FilterProgram = {
        // struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }
        let program: [(UInt16, UInt8, UInt8, UInt32)] = [
            (0x30, 0, 0, 13),          // ldb [13]: the TCP flags
            (0x54, 0, 0, 0x12),        // and #(SYN | ACK)
            (0x15, 0, 1, 0x02),        // jeq #SYN: the next instruction, else skip it
            (0x06, 0, 0, 0),           // ret #0: drop
            (0x06, 0, 0, 0xFFFF_FFFF), // ret #-1: keep the whole packet
        ]
        // Allocated once for the life of the process (the kernel copies it at each use).
        let memory = UnsafeMutableRawPointer.allocate(byteCount: program.count * 8, alignment: 8)
        for (index, instruction) in program.enumerated() {
            memory.storeBytes(of: instruction.0, toByteOffset: index * 8, as: UInt16.self)
            memory.storeBytes(of: instruction.1, toByteOffset: index * 8 + 2, as: UInt8.self)
            memory.storeBytes(of: instruction.2, toByteOffset: index * 8 + 3, as: UInt8.self)
            memory.storeBytes(of: instruction.3, toByteOffset: index * 8 + 4, as: UInt32.self)
        }
        return FilterProgram(length: UInt16(program.count), instructions: UInt(bitPattern: memory))
    }()

    /// The start of `struct tcp_info`: for a listening socket, `tcpi_unacked` (the seventh
    /// 32-bit word: 8 bytes of small fields, then rto, ato, snd_mss, rcv_mss, unacked) is the
    /// length of its accept queue.
    package struct InfoPrefix: Sendable {
        var words: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0)
        package var acceptQueueLength: Int { Int(words.6) }
        package init() {}
    }
}
#endif
