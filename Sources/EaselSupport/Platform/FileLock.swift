/// An advisory `flock` on a file, held through its own open file description so that two
/// holders in one process are as independent as two in different processes.
package final class FileLock {
    package let descriptor: Int32
    package let path: String

    /// Opens the file to lock (a writable lock creates it when asked); `flock` needs no write access.
    package init(path: String, create: Bool = true, writable: Bool = true) throws(SystemCallFailure) {
        self.path = path
        do throws(Errno) {
            descriptor = try SystemCalls.open(path, writable ? .readWrite(create: create) : .read)
        } catch {
            throw SystemCallFailure(code: error.code, operation: "open lock", path: path)
        }
    }

    deinit { SystemCalls.close(descriptor) }

    /// Waits for the lock.
    package func lock(exclusive: Bool) throws(SystemCallFailure) {
        do throws(Errno) {
            _ = try SystemCalls.lock(descriptor, exclusive: exclusive, wait: true)
        } catch {
            throw SystemCallFailure(code: error.code, operation: "flock", path: path)
        }
    }

    /// Takes the lock only if nobody holds a conflicting one.
    package func tryLock(exclusive: Bool) -> Bool {
        (try? SystemCalls.lock(descriptor, exclusive: exclusive, wait: false)) == true
    }

    package func unlock() { SystemCalls.unlock(descriptor) }
}
