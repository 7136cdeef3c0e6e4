import EaselSupport
import Foundation

/// Runs `EaselCrashHelper` (built next to the tests) and reads its "begin"/"done" lines.
///
/// `@unchecked Sendable`: each instance is driven by one thread at a time — created and read
/// on one pool thread, or drained on one dispatch thread and inspected only after that thread's
/// `DispatchGroup` has been waited on, which orders the accesses.
public final class WriterProcess: @unchecked Sendable {
    public let process = Process()
    private let output = ChildProcesses.pipe()
    private var buffer = Data()
    public private(set) var begun: [(key: String, length: Int)] = []
    public private(set) var done: [(key: String, length: Int)] = []
    /// Every line read so far.
    public private(set) var lines: [String] = []

    /// Writes disk cache entries into `directory`.
    public convenience init(directory: URL, seed: UInt64, options: [String] = []) throws {
        try self.init(arguments: [directory.path, String(seed)] + options)
    }

    /// Runs the helper with `arguments` (see its usage).
    public init(arguments: [String], input: Pipe? = nil) throws {
        process.executableURL = builtProduct("EaselCrashHelper")
        process.arguments = arguments
        process.standardOutput = output
        if let input { process.standardInput = input }
        try ChildProcesses.run(process)
    }

    /// Reads lines until `stop` says so or the process closes its output. Blocks: call it from
    /// a thread of its own (`BlockingIOPool`), never from the cooperative pool.
    public func read(until stop: (WriterProcess) -> Bool) {
        let handle = output.fileHandleForReading
        while !stop(self) {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                lines.append(line)
                let parts = line.split(separator: " ")
                guard parts.count == 3, let length = Int(parts[2]) else { continue }
                if parts[0] == "begin" { begun.append((String(parts[1]), length)) }
                if parts[0] == "done" { done.append((String(parts[1]), length)) }
            }
        }
    }

    public func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Reads everything until the process exits and returns its status.
    public func finish() -> Int32 {
        read(until: { _ in false })
        process.waitUntilExit()
        return process.terminationStatus
    }
}

