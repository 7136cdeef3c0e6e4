import EaselSupport
import ArgumentParser
import Easel
import Foundation

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain a disk cache directory.",
        subcommands: [Stats.self, Trim.self, Clear.self]
    )

    struct Location: ParsableArguments {
        @Option(name: .long, help: "The cache directory (the one holding index.sqlite).")
        var dir: String

        init() {}
        init(dir: String) { self.dir = dir }

        func open() throws -> DiskCache {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("no cache directory at \(dir)")
            }
            return try DiskCache(directory: URL(fileURLWithPath: dir))
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print entry count, bytes and dates of a cache, or of every cache under the default root.")
        @Option(name: .long, help: "The cache directory. Default: every cache under $XDG_CACHE_HOME/easel (or ~/.cache/easel).")
        var dir: String?
        @Flag(help: "Print JSON instead of text.") var json = false

        func run() async throws {
            let directories: [String]
            if let dir {
                directories = [dir]
            } else {
                let root = DiskCache.defaultRootDirectory.path
                let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
                directories = names.sorted().map { root + "/" + $0 }
                    .filter { FileManager.default.fileExists(atPath: $0 + "/index.sqlite") }
                if directories.isEmpty, !json {
                    print("no caches yet under \(root)")
                    return
                }
            }
            var reports: [[String: Any]] = []
            for directory in directories {
                let cache = try Location(dir: directory).open()
                let report = try await Self.report(cache)
                if json { reports.append(report) } else { Self.printText(report) }
            }
            if json {
                let object: Any = dir == nil ? reports : reports[0]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            }
        }

        static func report(_ cache: DiskCache) async throws -> [String: Any] {
            let stats = try await cache.statistics()
            return [
                "directory": cache.directory.path, "entries": stats.entryCount, "bytes": stats.valueBytes,
                "inlineEntries": stats.inlineEntryCount, "fileEntries": stats.entryCount - stats.inlineEntryCount,
                "expiringEntries": stats.entriesWithExpiry, "indexFileBytes": stats.indexFileBytes,
                "oldestAccess": stats.oldestAccess.map { $0.timeIntervalSince1970 } ?? NSNull(),
                "newestAccess": stats.newestAccess.map { $0.timeIntervalSince1970 } ?? NSNull(),
            ]
        }

        static func printText(_ report: [String: Any]) {
            func date(_ key: String) -> String {
                (report[key] as? Double).map { "\(Date(timeIntervalSince1970: $0))" } ?? "-"
            }
            let entries = report["entries"] as? Int ?? 0, bytes = report["bytes"] as? Int ?? 0
            print("directory:  \(report["directory"] ?? "")")
            print("entries:    \(entries) (\(report["inlineEntries"] ?? 0) inline, \(report["fileEntries"] ?? 0) in files, "
                + "\(report["expiringEntries"] ?? 0) with expiry)")
            print("bytes:      \(bytes) (\(ByteSize.format(bytes))) in values; index file \(ByteSize.format(report["indexFileBytes"] as? Int ?? 0))")
            print("oldest use: \(date("oldestAccess"))")
            print("newest use: \(date("newestAccess"))")
        }
    }

    struct Trim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove expired entries, then entries unused for a while, then least recently used ones down to a size.")
        @OptionGroup var location: Location
        @Option(name: .customLong("to-size"), help: "Keep at most this many bytes (e.g. 500M, 2G, 1048576).",
                transform: ByteSize.parse)
        var toSize: Int?
        @Option(name: .customLong("older-than"), help: "Remove entries unused for this long (e.g. 30m, 12h, 7d).",
                transform: DurationText.parse)
        var olderThan: TimeInterval?

        func run() async throws {
            let cache = try location.open()
            let before = (count: cache.count, bytes: cache.byteCount)
            try await cache.removeExpired()
            if let olderThan { try await cache.trim(toDate: Date().addingTimeInterval(-olderThan)) }
            if let toSize { try await cache.trim(toSizeByDate: toSize) }
            let after = (count: cache.count, bytes: cache.byteCount)
            print("removed \(before.count - after.count) entries, \(ByteSize.format(before.bytes - after.bytes)); "
                + "\(after.count) entries, \(ByteSize.format(after.bytes)) remain")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = try location.open()
            let count = cache.count
            try await cache.removeAll()
            print("removed \(count) entries")
        }
    }
}

enum ByteSize {
    static func parse(_ text: String) throws -> Int {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = text.uppercased()
        if digits.hasSuffix("B") { digits.removeLast() }
        var multiplier = 1
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits.removeLast()
        }
        guard let number = Double(digits), number >= 0, number * Double(multiplier) < Double(Int.max) else {
            throw ValidationError("not a size: \(text) (use e.g. 500M, 2G or a number of bytes)")
        }
        return Int(checked: number * Double(multiplier))
    }

    static func format(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes), unit = 0
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}

enum DurationText {
    static func parse(_ text: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let last = text.last, let unit = units[last], let number = Double(text.dropLast()), number >= 0 else {
            if let seconds = Double(text), seconds >= 0 { return seconds }
            throw ValidationError("not a duration: \(text) (use e.g. 30m, 12h, 7d)")
        }
        return number * unit
    }
}
