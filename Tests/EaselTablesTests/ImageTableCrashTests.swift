import EaselSupport
import EaselCodecs
import EaselStorage
@testable import EaselTables
import EaselTestSupport
import Foundation
import Testing

/// The format `EaselCrashHelper table` writes.
let crashFormat = ImageFormat(name: "crash", width: 256, height: 256, maximumCount: 40)

@Suite struct ImageTableCrashTests {
    /// A writer process is killed with SIGKILL while it stores entries, again and again on one
    /// table; after each kill every entry is either exactly what a write stored or missing.
    /// `EASEL_TABLE_CRASH_ROUNDS` sets the number of kills (`scripts/crash-test.sh` runs more).
    @Test func killedWritersLeaveValidEntriesOrNone() async throws {
        let rounds = ProcessInfo.processInfo.environment["EASEL_TABLE_CRASH_ROUNDS"].flatMap(Int.init) ?? 20
        let directory = try TemporaryDirectory()
        let (problems, interrupted, checked) = try await BlockingIOPool.shared.run {
            try tableCrashRounds(directory: directory.url, rounds: rounds, seed: 42)
        }
        #expect(problems.isEmpty, "\(problems)")
        #expect(checked > rounds, "entries were read back after the kills")
        #expect(interrupted > 0, "some kills landed between the start and the end of a write")
    }

    @Test func aTableOpenInAnotherProcessIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let input = ChildProcesses.pipe()
        let holder = try WriterProcess(arguments: ["table-hold", directory.path], input: input)
        try await BlockingIOPool.shared.run { holder.read(until: { $0.lines.contains("ready") }) }
        #expect(throws: ImageTableError.inUseByAnotherProcess(path: directory.child("crash.imagetable").path)) {
            _ = try ImageTable(format: crashFormat, directory: directory.url)
        }
        try input.fileHandleForWriting.close()
        let status = try await BlockingIOPool.shared.run { holder.finish() }
        #expect(status == 0)
        // Once the other process has closed it, the table opens.
        _ = try ImageTable(format: crashFormat, directory: directory.url)
    }
}

/// Kills `rounds` table writers, each after a random number of writes, and checks the table
/// after every kill. Returns the problems, how many kills interrupted a write, and how many
/// entries were checked in all.
func tableCrashRounds(directory: URL, rounds: Int, seed: UInt64) throws -> (problems: [String], interrupted: Int, checked: Int) {
    var random = SplitMix64(seed: seed)
    var problems: [String] = []
    var interrupted = 0, checked = 0
    for round in 0..<rounds {
        let stopAfter = Int(random.next() % 30) + 1
        let writer = try WriterProcess(arguments: ["table", directory.path, String(seed &+ UInt64(round))])
        writer.read(until: { $0.begun.count >= stopAfter })
        writer.kill()
        writer.read(until: { _ in false })
        if writer.begun.count > writer.done.count { interrupted += 1 }
        let table = try ImageTable(format: crashFormat, directory: directory)
        for id in table.entityIDs() {
            guard let image = table.image(for: id) else { continue }  // failed its checksum: missing
            checked += 1
            if !image.hasSamePixels(as: TablePattern.image(for: id, width: image.width, height: image.height)) {
                problems.append("round \(round): entry \(id) holds pixels no write stored")
            }
        }
        if let last = writer.done.last, table.image(for: TablePattern.entityID(UInt64(last.key)!)) == nil {
            problems.append("round \(round): the last completed write (entity \(last.key)) is missing")
        }
    }
    return (problems, interrupted, checked)
}
