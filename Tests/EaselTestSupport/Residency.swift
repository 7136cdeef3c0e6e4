import Foundation

/// The resident bytes of the mapping that starts at `start` (from `/proc/self/smaps`); nil when
/// no mapping starts there.
public func residentBytes(ofMappingAt start: UnsafeRawPointer) -> Int? {
    guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return nil }
    defer { try? handle.close() }
    // (Read to its end: /proc's files say they are empty.)
    let smaps = String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    let prefix = String(UInt(bitPattern: start), radix: 16) + "-"
    let lines = smaps.split(separator: "\n")
    guard let header = lines.firstIndex(where: { $0.hasPrefix(prefix) }),
          let rss = lines[(header + 1)...].first(where: { $0.hasPrefix("Rss:") }) else { return nil }
    let fields = rss.split(separator: " ", omittingEmptySubsequences: true)
    return fields.count > 1 ? Int(fields[1]).map { $0 * 1024 } : nil
}
