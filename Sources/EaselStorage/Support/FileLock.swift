#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// An advisory `flock` on a file, held through its own open file description so that two
/// holders in one process are as independent as two in different processes.
final class FileLock {
    let descriptor: Int32
    let path: String

    /// Opens (creating if asked) the file to lock; `flock` needs no write access.
    init(path: String, create: Bool = true, writable: Bool = true) throws(DiskCacheError) {
        self.path = path
        let fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | (create ? O_CREAT : 0), 0o644)
        guard fd >= 0 else { throw DiskCacheError.posix(errno, operation: "open lock", path: path) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Waits for the lock.
    func lock(exclusive: Bool) throws(DiskCacheError) {
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno != EINTR { throw DiskCacheError.posix(errno, operation: "flock", path: path) }
        }
    }

    /// Takes the lock only if nobody holds a conflicting one.
    func tryLock(exclusive: Bool) -> Bool {
        flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0
    }

    func unlock() { flock(descriptor, LOCK_UN) }
}
