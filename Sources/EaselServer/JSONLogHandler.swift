import EaselSupport
import Foundation
import Logging

/// A swift-log handler writing one JSON object a line to standard error: `time` (ISO 8601, UTC,
/// milliseconds), `level`, `label`, `message`, then the metadata (the logger's, the call's), with
/// the call's winning a clash; `error` when the call passed one. Metadata given as `Int`,
/// `Double` or `Bool` (`.stringConvertible`) is written as a JSON number or boolean. The fields
/// after `message` come in name order; `source` (the module) ends the line. Strings are escaped as JSON requires; nested metadata becomes
/// nested objects and arrays. `easel serve --log-format json` bootstraps it.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    /// Metadata every line gets from the context it is written in (`RequestID.metadataProvider`).
    public var metadataProvider: Logger.MetadataProvider?
    let label: String
    let write: @Sendable (String) -> Void

    /// Lines to standard error, each written whole (a lock keeps lines from interleaving).
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        // A write that fails (a full disk, a closed pipe) loses the line, never the server.
        self.init(label: label, metadataProvider: metadataProvider) { line in
            Self.standardError.withLock { handle in try? handle.write(contentsOf: Data(line.utf8)) }
        }
    }

    /// Lines to `write` (tests).
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    /// Where lines go: standard error, or the descriptor `StandardErrorRelay` kept of it (so that
    /// the server's own lines, already JSON, do not pass through the relay).
    private static let standardError = Locked(FileHandle.standardError)

    /// Lines go to `descriptor` from now on (not closed by the handler).
    static func write(to descriptor: Int32) {
        standardError.withLock { $0 = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = "{\"time\":"
        Self.append(string: Self.timestamp(WallClock.now()), to: &line)
        line += ",\"level\":"
        Self.append(string: event.level.rawValue, to: &line)
        line += ",\"label\":"
        Self.append(string: label, to: &line)
        line += ",\"message\":"
        Self.append(string: "\(event.message)", to: &line)
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { merged.merge(provided) { _, context in context } }
        if let call = event.metadata { merged.merge(call) { _, call in call } }
        for key in merged.keys.sorted() where !["time", "level", "label", "message"].contains(key) {
            line += ","
            Self.append(string: key, to: &line)
            line += ":"
            Self.append(value: merged[key]!, to: &line)
        }
        if merged["error"] == nil, let error = event.error {
            line += ",\"error\":"
            Self.append(string: "\(error)", to: &line)
        }
        if merged["source"] == nil, !event.source.isEmpty {
            line += ",\"source\":"
            Self.append(string: event.source, to: &line)
        }
        line += "}\n"
        write(line)
    }

    static func append(value: Logger.Metadata.Value, to line: inout String) {
        switch value {
        case .string(let text): append(string: text, to: &line)
        case .stringConvertible(let value):
            // Numbers and booleans given as such stay JSON numbers and booleans.
            if value is Bool || value is any BinaryInteger || (value as? Double)?.isFinite == true {
                line += value.description
            } else {
                append(string: value.description, to: &line)
            }
        case .array(let values):
            line += "["
            for (index, element) in values.enumerated() {
                if index > 0 { line += "," }
                append(value: element, to: &line)
            }
            line += "]"
        case .dictionary(let dictionary):
            line += "{"
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { line += "," }
                append(string: key, to: &line)
                line += ":"
                append(value: dictionary[key]!, to: &line)
            }
            line += "}"
        }
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped (RFC 8259).
    static func append(string text: String, to line: inout String) {
        line += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }

    /// `2026-11-27T13:30:00.123Z` for `seconds` since 1970 (the calendar fields from
    /// `WallClock.utc`, the platform layer's).
    static func timestamp(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let milliseconds = min(999, Int((seconds - Double(whole)) * 1000))
        let t = WallClock.utc(whole)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = milliseconds < 10 ? "00\(milliseconds)" : (milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)")
        return "\(t.year)-\(two(t.month + 1))-\(two(t.day))T\(two(t.hour)):\(two(t.minute)):\(two(t.second)).\(millis)Z"
    }
}
