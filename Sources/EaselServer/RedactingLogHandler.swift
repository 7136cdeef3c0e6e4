import Foundation
import Logging

/// Wraps every log handler of `easel serve` so that no line holds a secret, whoever logs it (Easel,
/// swift-otel, any dependency): the values of `Authorization`, `Proxy-Authorization`, `Cookie`,
/// `Set-Cookie`, `X-Amz-*` and `X-Easel-Admin-Token` are replaced wherever they appear written as
/// `name: value` or `name=value` (a header list a library prints, a query string), the configured
/// secrets (admin token, signing keys and salts) wherever they appear at all, and every message
/// and metadata value is capped in length (a 30 KB `tracestate` is not a log line).
public struct RedactingLogHandler: LogHandler {
    /// The handler that writes the cleaned lines.
    public var inner: any LogHandler
    /// Literal secrets replaced wherever they appear (at least 8 characters each).
    public let secrets: [String]

    /// Longest message, and longest metadata value, written.
    public static let maxMessageLength = 4096, maxValueLength = 1024

    /// Metadata keys whose values are never written (swift-otel's: the carrier it failed to read
    /// is every header of the request; its configuration lines print environment values).
    public static let withheldKeys: Set<String> = ["carrier", "environment_value", "previous_value", "new_value", "headers"]

    /// Wraps `inner`; `secrets` are replaced wherever they appear (shorter than 8 characters: ignored).
    public init(_ inner: any LogHandler, secrets: [String] = []) {
        self.inner = inner
        self.secrets = secrets.filter { $0.count >= 8 }.sorted { $0.count > $1.count }
    }

    /// The logger's own metadata, kept here (not in `inner`) so that it is cleaned with the call's.
    public var metadata: Logger.Metadata = [:]

    /// The inner handler's level.
    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    /// The inner handler's metadata provider (its metadata, such as the request ID, is not secret).
    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    /// One key of the logger's own metadata.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` through `inner`, its message and metadata cleaned.
    public func log(event: LogEvent) {
        var event = event
        event.message = "\(scrub("\(event.message)", limit: Self.maxMessageLength))"
        let merged = event.metadata.map { metadata.merging($0) { _, call in call } } ?? metadata
        event.metadata = merged.isEmpty ? nil : merged.reduce(into: [:]) { $0[$1.key] = clean($1.key, $1.value) }
        if let error = event.error {
            event.error = nil
            event.metadata = (event.metadata ?? [:]).merging(["error": .string(scrub("\(error)", limit: Self.maxValueLength))]) { call, _ in call }
        }
        inner.log(event: event)
    }

    func clean(_ key: String, _ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        if Self.withheldKeys.contains(key.lowercased()) || Self.isSecretName(key) { return "[withheld]" }
        switch value {
        case .string(let text): return .string(scrub(text, limit: Self.maxValueLength))
        case .stringConvertible(let convertible):
            if convertible is Int || convertible is Double || convertible is Bool { return value }
            return .string(scrub("\(convertible)", limit: Self.maxValueLength))
        case .array(let values): return .array(values.prefix(64).map { clean("", $0) })
        case .dictionary(let values): return .dictionary(values.reduce(into: [:]) { $0[$1.key] = clean($1.key, $1.value) })
        }
    }

    /// `text` with every secret value replaced, cut to `limit` characters.
    func scrub(_ text: String, limit: Int) -> String {
        // Redacted first, then cut: a secret across the cut must not leave its first part.
        var text = text
        for secret in secrets where text.contains(secret) { text = text.replacingOccurrences(of: secret, with: "[redacted]") }
        text = Self.redactingNamedValues(text)
        return text.count > limit ? String(text.prefix(limit)) + "…(\(text.count - limit) more)" : text
    }

    /// Whether a header or field name holds a secret.
    static func isSecretName(_ name: String) -> Bool {
        let name = name.lowercased()
        return ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-easel-admin-token"].contains(name)
            || name.hasPrefix("x-amz-")
    }

    /// Replaces the value after every secret name followed by `:` or `=` (optionally quoted and
    /// spaced), up to the end of the value (a quote, a comma, `;`, `&`, `)`, `]` or a line break).
    static func redactingNamedValues(_ text: String) -> String {
        let lower = text.lowercased()
        guard ["authorization", "cookie", "x-amz-", "x-easel-admin-token"].contains(where: { lower.contains($0) }) else { return text }
        var result = ""
        let characters = Array(text)
        let lowered = Array(lower)
        var index = 0
        let names = ["proxy-authorization", "authorization", "set-cookie", "cookie", "x-easel-admin-token", "x-amz-"]
        while index < characters.count {
            guard let name = names.first(where: { matches($0, in: lowered, at: index) }) else {
                result.append(characters[index])
                index += 1
                continue
            }
            var cursor = index + name.count
            // x-amz-…: the rest of the name.
            while name == "x-amz-", cursor < characters.count, characters[cursor].isLetter || characters[cursor] == "-" { cursor += 1 }
            result += String(characters[index..<cursor])
            var separator = cursor
            while separator < characters.count, [" ", "\"", "'"].contains(characters[separator]) { separator += 1 }
            guard separator < characters.count, characters[separator] == ":" || characters[separator] == "=" else {
                index = cursor
                continue
            }
            var start = separator + 1
            while start < characters.count, [" ", "\"", "'"].contains(characters[start]) { start += 1 }
            var end = start
            while end < characters.count, !["\"", "'", ",", ";", "&", ")", "]", "\n", "\r"].contains(characters[end]) { end += 1 }
            result += String(characters[cursor..<start]) + "[redacted]"
            index = end
        }
        return result
    }

    private static func matches(_ name: String, in text: [Character], at index: Int) -> Bool {
        guard index + name.count <= text.count else { return false }
        if index > 0, text[index - 1].isLetter || text[index - 1] == "-" { return false }
        return String(text[index..<(index + name.count)]) == name
    }
}
