#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value owned by a lock: the only way to reach it is `withLock`.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with raw futex system calls that
/// ThreadSanitizer cannot see, so a TSan run reports races on every mutex-protected access, even
/// in a trivially correct program (two threads appending to a `Mutex<[Int]>` are reported).
/// `pthread_mutex_t` is intercepted by TSan, which keeps our `--sanitize=thread` runs meaningful;
/// uncontended, both cost one atomic operation to lock and one to unlock.
///
/// `@unchecked Sendable` is sound because `value` is only read or written inside `withLock`,
/// between `pthread_mutex_lock` and `pthread_mutex_unlock` on the mutex this instance owns; the
/// mutex lives in its own allocation, so it never moves while in use. That allocation is one
/// cache line of its own, so two locks taken by different cores never share a line (the memory
/// cache's shards are locks side by side).
@usableFromInline
package final class Locked<Value>: @unchecked Sendable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutableRawPointer.allocate(byteCount: Self.lineSize, alignment: Self.lineSize)
            .bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        #if canImport(Glibc)
        // Adaptive: a thread that finds the lock taken spins briefly before sleeping. Every
        // critical section here is short, and sleeping costs a futex wait and wake — in a VM an
        // inter-processor interrupt, tens of microseconds — which made rare collisions of two
        // threads on one memory cache shard cost more than all the hits around them.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        #else
        pthread_mutex_init(mutex, nil)
        #endif
    }

    /// A cache line (128 bytes covers the adjacent-line prefetch of x86 and Apple's 128-byte lines).
    private static var lineSize: Int { max(128, MemoryLayout<pthread_mutex_t>.stride) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not reentrant: `body` must not call
    /// `withLock` on the same instance.
    @inlinable
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with exclusive access if the lock is free right now; nil (without waiting)
    /// when another thread holds it.
    @inlinable
    package func withLockIfAvailable<R>(_ body: (inout Value) throws -> R) rethrows -> R? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
