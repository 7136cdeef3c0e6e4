// Writes entries so that tests can kill this process mid-write (crash safety) or run several
// copies against one directory (multi-process safety).
//
// usage: EaselCrashHelper DIRECTORY SEED [--count N] [--keys PREFIX:COUNT] [--byte-limit BYTES]
//                         [--inline-limit BYTES] [--max-length BYTES]
// Before each set it prints "begin <key> <length>" and after it "done <key> <length>", unbuffered,
// so the parent knows which sets completed. Values depend only on key and length
// (`CrashPattern`), so a reader can check it got exactly what a completed set wrote.
// Exits 0 after N sets (default: never), 1 if a set throws.
import EaselStorage
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, let seed = UInt64(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: EaselCrashHelper DIRECTORY SEED [options]\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[0])
var options: [String: String] = [:]
var index = 2
while index + 1 < arguments.count {
    options[arguments[index]] = arguments[index + 1]
    index += 2
}
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
