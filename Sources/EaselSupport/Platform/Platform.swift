// The one place Easel chooses its C library.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A readable message for an `errno` value.
package func errnoDescription(_ code: Int32) -> String {
    guard let message = strerror(code) else { return "errno \(code)" }
    return String(cString: message)
}

/// The wall clock as the caches store it.
package enum WallClock {
    /// Seconds since 1970 as a `Double`, the unit the index stores.
    @inlinable
    package static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1_000_000_000
    }

    /// Whole seconds since 1970.
    package static func seconds() -> Int {
        var current = time_t()
        time(&current)
        return Int(current)
    }

    /// The UTC calendar fields of `seconds` since 1970 (weekday 0 = Sunday, month 0 = January).
    package static func utc(_ seconds: Int) -> (weekday: Int, day: Int, month: Int, year: Int, hour: Int, minute: Int, second: Int) {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        return (Int(parts.tm_wday), Int(parts.tm_mday), Int(parts.tm_mon), Int(parts.tm_year) + 1900,
                Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}

/// Total memory visible to this process: cgroup v2 `memory.max` when set, else physical memory.
package func processMemoryLimit(cgroupRoot: String = "/sys/fs/cgroup") -> UInt64 {
    let physical = UInt64(sysconf(Int32(_SC_PHYS_PAGES))) &* UInt64(sysconf(Int32(_SC_PAGESIZE)))
    if let text = try? readSmallFile(cgroupRoot + "/memory.max"),
       let limit = UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines)), limit > 0 {
        return physical > 0 ? min(limit, physical) : limit
    }
    return physical
}

/// Reads a small text file (procfs, sysfs) fully.
package func readSmallFile(_ path: String) throws -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw POSIXFailure(code: Errno.current.code) }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: 4096)
    var total = 0
    while total < bytes.count {
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
        if n <= 0 { break }
        total += n
    }
    return String(decoding: bytes[..<total], as: UTF8.self)
}

package struct POSIXFailure: Error { package let code: Int32 }

/// A failed system call: its `errno`, what was attempted, and on what.
package struct SystemCallFailure: Error, Sendable {
    package let code: Int32
    package let operation: String
    package let path: String
}

import Foundation

/// `open(2)`, under a name that `DiskCache.open(...)` does not shadow.
@inline(__always)
package func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    open(path, flags, mode)
}

/// Process-wide settings a server reads or changes.
package enum Platform {
    /// The soft limit on open file descriptors (`RLIMIT_NOFILE`).
    package static func openFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return Int(clamping: min(limit.rlim_cur, rlim_t(Int32.max)))
    }

    /// Raises the soft limit on open file descriptors to the hard limit (as servers do at
    /// start); returns the soft limit in force afterwards.
    @discardableResult
    package static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return openFileLimit()
    }
}
