import EaselSupport
import Foundation
import Logging

/// With JSON logs, what C libraries write straight to standard error (libjxl's failures,
/// fontconfig's warnings, a crash's last words) must not break the stream into non-JSON lines.
///
/// `start` sends this process's standard error through a pipe to a relay process (`easel
/// log-relay`, `relay()`), which writes every line that is already one JSON object as it is and
/// wraps any other in one; the server's own lines, JSON already, go straight to the original
/// standard error (`JSONLogHandler`) (`label` "stderr", `level` "warning", the line as `message`). A
/// separate process, not a thread: when the server crashes, the relay still reads what it wrote
/// last, writes it and exits at the end of the pipe. `finish` closes the pipe and waits for the
/// relay, so that a server that exits has every line written.
public enum StandardErrorRelay {
    private static let relayProcess = Locked<Int32?>(nil)

    /// Starts the relay with `executable` (`arguments` make it a relay). False when it could not
    /// be started (standard error is then left as it was).
    @discardableResult
    public static func start(executable: String = "/proc/self/exe", arguments: [String] = ["log-relay"]) -> Bool {
        do {
            let pipe = try ChildProcess.pipe()
            // Kept open for the process's life: the JSON handler writes its own lines there.
            let original = ProcessLimits.copyOfStandardError()
            guard original >= 0 else { return false }
            let pid: Int32
            do {
                pid = try ChildProcess.spawn(executable: executable, arguments: arguments, input: pipe.read, output: original, error: original)
            } catch {
                _ = SystemCalls.close(pipe.read)
                _ = SystemCalls.close(pipe.write)
                _ = SystemCalls.close(original)
                return false
            }
            _ = SystemCalls.close(pipe.read)
            JSONLogHandler.write(to: original)
            ProcessLimits.replaceStandardError(with: pipe.write)
            relayProcess.withLock { $0 = pid }
            return true
        } catch {
            return false
        }
    }

    /// Closes this process's end of the relay's pipe and waits (5 s at most) for the relay to
    /// write what is left and exit.
    public static func finish() {
        guard let pid = relayProcess.withLock({ state -> Int32? in defer { state = nil }; return state }) else { return }
        ProcessLimits.silenceStandardError()
        _ = ChildProcess.waitForExit(pid, milliseconds: 5000)
    }

    /// The relay's loop: lines from standard input to standard output, each one JSON object;
    /// returns at the end of its input.
    public static func relay() {
        // It ends with its input, after the server (a Ctrl-C or a SIGTERM to the process group
        // must not end it before the server's last lines).
        ProcessLimits.ignoreTerminationSignals()
        let input = FileHandle.standardInput, output = FileHandle.standardOutput
        var pending = Data()
        while true {
            let chunk = input.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            var start = pending.startIndex, lines = ""
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                lines += wrapped(pending[start..<newline]) + "\n"
                start = pending.index(after: newline)
            }
            if !lines.isEmpty { try? output.write(contentsOf: Data(lines.utf8)) }
            pending.removeSubrange(pending.startIndex..<start)
            // A line longer than 64 KiB is written in pieces rather than held.
            if pending.count > 64 << 10 {
                try? output.write(contentsOf: Data((wrapped(pending) + "\n").utf8))
                pending.removeAll()
            }
        }
        if !pending.isEmpty { try? output.write(contentsOf: Data((wrapped(pending) + "\n").utf8)) }
    }

    /// A line as one JSON object: itself when it already is one, else wrapped.
    static func wrapped(_ line: Data) -> String {
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        if text.hasPrefix("{"), text.hasSuffix("}"), (try? JSONSerialization.jsonObject(with: Data(text.utf8))) is [String: Any] {
            return text
        }
        let json = Locked("")
        let handler = JSONLogHandler(label: "stderr") { line in json.withLock { $0 = line } }
        handler.log(event: LogEvent(level: .warning, message: "\(text)", metadata: nil, source: "stderr", file: #fileID, function: #function, line: #line))
        let line = json.withLock { $0 }
        return line.hasSuffix("\n") ? String(line.dropLast()) : line
    }
}
