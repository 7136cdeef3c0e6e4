#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// An advisory `flock` on a file, held through its own open file description so that two
/// holders in one process are as independent as two in different processes.
package final class FileLock {
    package let descriptor: Int32
    package let path: String

    /// Opens (creating if asked) the file to lock; `flock` needs no write access.
    package init(path: String, create: Bool = true, writable: Bool = true) throws(SystemCallFailure) {
        self.path = path
        let fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | (create ? O_CREAT : 0), 0o644)
        guard fd >= 0 else { throw SystemCallFailure(code: errno, operation: "open lock", path: path) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Waits for the lock.
    package func lock(exclusive: Bool) throws(SystemCallFailure) {
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno != EINTR { throw SystemCallFailure(code: errno, operation: "flock", path: path) }
        }
    }

    /// Takes the lock only if nobody holds a conflicting one.
    package func tryLock(exclusive: Bool) -> Bool {
        flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0
    }

    package func unlock() { flock(descriptor, LOCK_UN) }
}
