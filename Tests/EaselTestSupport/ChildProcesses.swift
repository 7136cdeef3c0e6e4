import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The tests' child processes, started so that no child keeps another test's pipe open.
///
/// Tests run in parallel in one process, and `Pipe()` makes descriptors that every child spawned
/// meanwhile inherits: a long-lived child (the S3 test server, an `easel serve`) started while
/// another test's pipe was open kept its write end, and that test's `readDataToEndOfFile` never
/// saw the end although its own child had exited. Here both ends are marked close-on-exec as
/// soon as they are made (a child still gets its own end: `Process` duplicates it onto 0, 1 or
/// 2, which clears the mark on the copy). What is left is the moment between `pipe()` and the
/// marking. No lock closes it: a lock held across `Process.run()` stalled every other test
/// whenever a spawn was slow (under ThreadSanitizer a fork takes seconds), because tests wait for
/// it on the concurrency pool's few threads.
public enum ChildProcesses {
    /// A pipe for a child's standard input, output or error.
    public static func pipe() -> Pipe {
        let pipe = Pipe()
        for descriptor in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        return pipe
    }

    /// Starts `process` (`Process.run()`): every test's children start here.
    public static func run(_ process: Process) throws {
        try process.run()
    }
}

/// The resident memory of the process `pid` from `/proc/PID/status`: now (`VmRSS:`, the
/// default) or at its peak (`VmHWM:`), in bytes; nil when it cannot be read.
public func residentBytes(of pid: Int32, field: String = "VmRSS:") -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
          let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
    return kilobytes * 1024
}
