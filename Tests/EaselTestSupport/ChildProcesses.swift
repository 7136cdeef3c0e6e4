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
/// they are made (a child still gets its own end: `Process` duplicates it onto 0, 1 or 2, which
/// clears the mark on the copy), and making pipes and starting children take one lock, so no
/// child starts between a pipe's creation and its marking.
public enum ChildProcesses {
    private static let lock = NSLock()

    /// A pipe for a child's standard input, output or error.
    public static func pipe() -> Pipe {
        lock.lock()
        defer { lock.unlock() }
        let pipe = Pipe()
        for descriptor in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        return pipe
    }

    /// Starts `process` (`Process.run()`).
    public static func run(_ process: Process) throws {
        lock.lock()
        defer { lock.unlock() }
        try process.run()
    }
}
