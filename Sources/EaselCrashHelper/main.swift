// Writes entries so that tests can kill this process mid-write (crash safety) or run several
// copies against one directory (multi-process safety).
//
// usage: EaselCrashHelper DIRECTORY SEED [--count N] [--keys PREFIX:COUNT] [--byte-limit BYTES]
//                         [--inline-limit BYTES] [--max-length BYTES]
// Before each set it prints "begin <key> <length>" and after it "done <key> <length>", unbuffered,
// so the parent knows which sets completed. Values depend only on key and length
// (`CrashPattern`), so a reader can check it got exactly what a completed set wrote.
// Exits 0 after N sets (default: never), 1 if a set throws.
//
// usage: EaselCrashHelper table DIRECTORY SEED [--count N] [--entities COUNT]
//   Stores image table entries instead (format "crash", 256×256 RGBA, at most 40 entries); each
//   entry's pixels are `TablePattern.image(for:)` of its entity, so a reader can check them.
// usage: EaselCrashHelper table-hold DIRECTORY
//   Opens the same table, prints "ready", and keeps it open until its standard input closes.
// usage: EaselCrashHelper table-verify DIRECTORY
//   Reads every entry of that table and prints "verified N" (exit 0), or the first entry whose
//   pixels are not what a write stored (exit 1).
//
// usage: EaselCrashHelper disk-fill DIRECTORY SEED [--count N] [--max-length BYTES] [--no-default-limit]
//   Sets small (inline) values with no byte limit until a set throws `diskFull` (prints "full
//   after N sets", exit 0) or N sets succeeded (prints "stored N", exit 0); any other error: exit 1.
//   `--no-default-limit` turns off the limit derived from the free space, so the disk can fill.
// usage: EaselCrashHelper disk-free DIRECTORY OPERATION [ARGUMENT]
//   Opens the cache afresh and runs OPERATION: `trim-size BYTES`, `trim-date BYTES`, `remove`
//   (the oldest entry), `remove-all`; then compacts the index and sets one new value. Prints
//   "entries BEFORE -> AFTER" and exits 0, or prints the failure and exits 1.
import EaselSupport
import EaselStorage
import EaselTables
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
if let mode = arguments.first, mode.hasPrefix("table") {
    runTableMode(arguments)
}
if let mode = arguments.first, mode.hasPrefix("disk-") {
    runDiskSpaceMode(arguments)
}
guard arguments.count >= 2, let seed = UInt64(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: EaselCrashHelper DIRECTORY SEED [options]\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[0])
/// `--name value` pairs from `arguments[start...]`.
func parseOptions(_ arguments: [String], from start: Int) -> [String: String] {
    var options: [String: String] = [:]
    var index = start
    while index + 1 < arguments.count {
        options[arguments[index]] = arguments[index + 1]
        index += 2
    }
    return options
}

let options = parseOptions(arguments, from: 2)
let count = options["--count"].flatMap(Int.init) ?? Int.max
let keySpec = (options["--keys"] ?? "key:64").split(separator: ":")
let keyPrefix = String(keySpec.first ?? "key")
let keyCount = UInt64(keySpec.last.flatMap { Int($0) } ?? 64)
let byteLimit = options["--byte-limit"].flatMap(Int.init) ?? 8 << 20
let inlineLimit = options["--inline-limit"].flatMap(Int.init) ?? 32 * 1024
let maxLength = UInt64(options["--max-length"].flatMap(Int.init) ?? 200_000)

/// Unbuffered, so the parent sees every line written before a kill.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let cache = try DiskCache(directory: directory, configuration: .init(byteLimit: byteLimit, inlineLimit: inlineLimit))
var generator = SplitMix64(seed: seed)
for _ in 0..<count {
    let key = "\(keyPrefix)-\(generator.next() % keyCount)"
    let length = Int(generator.next() % (maxLength + 1))
    say("begin \(key) \(length)")
    do {
        try cache.set(CrashPattern.value(key: key, length: length), forKey: key)
    } catch {
        FileHandle.standardError.write(Data("set failed: \(error)\n".utf8))
        exit(1)
    }
    say("done \(key) \(length)")
}

/// The format the table modes use (tests open the same one).
func crashFormat() -> ImageFormat { ImageFormat(name: "crash", width: 256, height: 256, maximumCount: 40) }

func runTableMode(_ arguments: [String]) -> Never {
    let directory = URL(fileURLWithPath: arguments[1])
    let table: ImageTable
    do {
        table = try ImageTable(format: crashFormat(), directory: directory)
    } catch {
        FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
        exit(1)
    }
    if arguments[0] == "table-hold" {
        say("ready")
        _ = FileHandle.standardInput.readDataToEndOfFile()
        exit(0)
    }
    if arguments[0] == "table-verify" {
        var verified = 0
        for id in table.entityIDs() {
            guard let image = table.image(for: id) else { continue }
            guard image.hasSamePixels(as: TablePattern.image(for: id, width: image.width, height: image.height)) else {
                say("damaged \(id)")
                exit(1)
            }
            verified += 1
        }
        say("verified \(verified)")
        exit(0)
    }
    let options = parseOptions(arguments, from: 3)
    let count = options["--count"].flatMap(Int.init) ?? Int.max
    let entities = UInt64(options["--entities"].flatMap(Int.init) ?? 60)
    var generator = SplitMix64(seed: UInt64(arguments[2]) ?? 1)
    for _ in 0..<count {
        let number = generator.next() % entities
        let entity = TablePattern.entityID(number)
        let width = 1 + Int(generator.next() % 256), height = 1 + Int(generator.next() % 256)
        let image = TablePattern.image(for: entity, width: width, height: height)
        say("begin \(number) \(width)")
        do {
            try table.setImage(image, for: entity, sourceID: entity)
        } catch {
            FileHandle.standardError.write(Data("set failed: \(error)\n".utf8))
            exit(1)
        }
        say("done \(number) \(width)")
    }
    exit(0)
}

/// The `disk-fill` and `disk-free` modes: a cache filling its file system, and the calls that free it.
func runDiskSpaceMode(_ arguments: [String]) -> Never {
    guard arguments.count >= 3 else {
        FileHandle.standardError.write(Data("usage: EaselCrashHelper disk-fill DIRECTORY SEED [options]\n".utf8))
        exit(2)
    }
    let directory = URL(fileURLWithPath: arguments[1])
    let flags = Set(arguments.dropFirst(3))
    var configuration = DiskCache.Configuration(byteLimit: 0)
    if flags.contains("--no-default-limit") || arguments[0] == "disk-free" { configuration.freeSpaceFraction = 0 }
    func fail(_ message: String) -> Never {
        say(message)
        exit(1)
    }
    let cache: DiskCache
    do { cache = try DiskCache(directory: directory, configuration: configuration) } catch { fail("open failed: \(error)") }

    if arguments[0] == "disk-fill" {
        let options = parseOptions(arguments.filter { $0 != "--no-default-limit" }, from: 3)
        let count = options["--count"].flatMap(Int.init) ?? Int.max
        let maxLength = UInt64(options["--max-length"].flatMap(Int.init) ?? 4_096)
        var generator = SplitMix64(seed: UInt64(arguments[2]) ?? 1)
        for number in 0..<count {
            let key = "fill-\(generator.next())"
            let length = 1 + Int(generator.next() % maxLength)
            do {
                try cache.set(CrashPattern.value(key: key, length: length), forKey: key)
            } catch DiskCacheError.diskFull {
                say("full after \(number) sets; \(cache.count) entries, \(cache.byteCount) bytes")
                exit(0)
            } catch {
                fail("set failed: \(error)")
            }
        }
        say("stored \(count) sets; \(cache.count) entries, \(cache.byteCount) bytes")
        exit(0)
    }

    let before = cache.count
    do {
        switch arguments[2] {
        case "trim-size": try cache.trim(toSize: arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0)
        case "trim-date": try cache.trim(toSizeByDate: arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0)
        case "remove":
            guard let oldest = try cache.entries().min(by: { $0.accessedAt < $1.accessedAt }) else { fail("no entry to remove") }
            try cache.removeValue(forKey: oldest.key)
            if try cache.contains(oldest.key) { fail("\(oldest.key) still present") }
        case "remove-all": try cache.removeAll()
        default: fail("unknown operation \(arguments[2])")
        }
    } catch {
        fail("\(arguments[2]) failed: \(error)")
    }
    let after = cache.count
    do { try cache.compact() } catch { say("compact: \(error)") }
    let key = "after-\(arguments[2])"
    do {
        try cache.set(CrashPattern.value(key: key, length: 1_000), forKey: key)
        guard try cache.data(forKey: key) == CrashPattern.value(key: key, length: 1_000) else { fail("read back a wrong value") }
    } catch {
        fail("set after \(arguments[2]) failed: \(error)")
    }
    say("entries \(before) -> \(after)")
    exit(0)
}
