import EaselSupport

/// Identifies a registered observer (of a cache's evictions or events) so it can be removed.
public typealias ObserverToken = EaselSupport.ObserverToken

extension DiskCacheError {
    /// A failed system call of the support module, as the case callers can act on.
    init(_ failure: SystemCallFailure) {
        self = .posix(failure.code, operation: failure.operation, path: failure.path)
    }
}

extension FileLock {
    /// Opens a lock file, failing with a `DiskCacheError`.
    static func opening(_ path: String, create: Bool = true, writable: Bool = true) throws(DiskCacheError) -> FileLock {
        do { return try FileLock(path: path, create: create, writable: writable) } catch { throw DiskCacheError(error) }
    }

    /// Waits for the lock, failing with a `DiskCacheError`.
    func acquire(exclusive: Bool) throws(DiskCacheError) {
        do { try lock(exclusive: exclusive) } catch { throw DiskCacheError(error) }
    }
}
