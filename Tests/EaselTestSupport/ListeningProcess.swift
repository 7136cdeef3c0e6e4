import Foundation

/// A child process that prints `…127.0.0.1:PORT/` once it listens (as `easel serve` does):
/// started, its port read, and terminated (bounded, killed past it) when released.
public final class ListeningProcess: Sendable {
    public let process: Process
    public let port: Int
    /// The first line the process wrote to standard output (the one naming its address).
    public let firstLine: String
    /// Signalled once, by the process's termination handler.
    private let exited = DispatchSemaphore(value: 0)

    /// Blocking: waits for the line that names the port. Standard error goes to `standardError`
    /// when given (a file the test reads), else nowhere.
    /// `environment` is added to this process's own.
    public init(executable: URL, arguments: [String], standardError: FileHandle? = nil, environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        let output = ChildProcesses.pipe()
        process.standardOutput = output
        process.standardError = standardError ?? FileHandle.nullDevice
        process.terminationHandler = { [exited] _ in exited.signal() }
        try ChildProcesses.run(process)
        var text = ""
        // The first line names the address (plain, or one JSON object with --log-format json).
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression),
              let port = Int(text[range].split(separator: ":").last ?? "") else {
            process.terminate()
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no port in \(text)"])
        }
        self.port = port
        firstLine = String(text.prefix { $0 != "\n" })
    }

    /// Blocking: waits for the process to exit, at most `limit` (then kills it and says false).
    public func waitForExit(within limit: Duration) -> Bool {
        let nanoseconds = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        if exited.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success {
            exited.signal()  // for a later wait
            return true
        }
        // Foundation's termination handler can miss an exit (seen under ThreadSanitizer in CI: the
        // child a zombie, `waitUntilExit` spinning forever): the kernel is asked directly.
        let pid = process.processIdentifier
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exited.signal()  // for a later wait
            return true
        }
        kill(pid, SIGKILL)
        // A killed child exits at once; reaped here (not through Foundation's bookkeeping, which
        // may never notice). ECHILD: Foundation reaped it first.
        _ = waitpid(pid, &status, 0)
        return false
    }

    deinit {
        // (Only a running process: an exited one's pid may belong to another by now. One whose
        // exit was seen, by Foundation or by `waitForExit`, is not waited for again.)
        if process.isRunning, exited.wait(timeout: .now()) != .success {
            process.terminate()
            _ = waitForExit(within: .seconds(60))
        }
    }
}
