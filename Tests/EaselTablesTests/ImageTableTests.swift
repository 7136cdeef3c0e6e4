import EaselSupport
import EaselCodecs
import EaselStorage
@testable import EaselTables
import EaselTestSupport
import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

func entity(_ number: UInt64) -> UUID { TablePattern.entityID(number) }

func pattern(_ number: UInt64, width: Int = 256, height: Int = 256, pixelFormat: Bitmap.PixelFormat = .rgba8) -> Bitmap {
    TablePattern.image(for: entity(number), width: width, height: height, pixelFormat: pixelFormat)
}

func thumbFormat(maximumCount: Int = 100, width: Int = 256, height: Int = 256, pixelFormat: Bitmap.PixelFormat = .rgba8,
                 fit: ResizeMode = .fit, version: Int = 0) -> ImageFormat {
    configured(ImageFormat(name: "thumb", width: width, height: height, fit: fit, maximumCount: maximumCount)) {
        $0.pixelFormat = pixelFormat
        $0.version = version
    }
}

/// Fails the first allocations after `allowed` succeed, with `code`.
final class FaultyAllocator: TableFileOperations, Sendable {
    private let remaining: Locked<Int>
    private let code: Int32
    init(allowed: Int, code: Int32 = ENOSPC) {
        remaining = Locked(allowed)
        self.code = code
    }
    func allow(_ count: Int) { remaining.withLock { $0 = count } }
    func allocate(descriptor: Int32, offset: Int, length: Int) -> Int32 {
        let allowed = remaining.withLock { remaining -> Bool in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
        return allowed ? SystemTableFileOperations().allocate(descriptor: descriptor, offset: offset, length: length) : code
    }
}

@Suite struct ImageTableTests {
    @Test func storedEntriesAreReadWithoutCopying() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(), directory: directory.url)
        try table.setImage(pattern(1), for: entity(1), sourceID: entity(1))
        let first = try #require(table.image(for: entity(1)))
        let second = try #require(table.image(for: entity(1)))
        #expect(first.isBorrowed)
        #expect(first.hasSamePixels(as: pattern(1)))
        let firstAddress = first.withUnsafeBytes { $0.baseAddress }
        let secondAddress = second.withUnsafeBytes { $0.baseAddress }
        #expect(firstAddress == secondAddress, "both reads point into the mapped table")
        #expect(UInt(bitPattern: firstAddress) % 64 == 0)
        #expect(table.image(for: entity(2)) == nil)
        #expect(table.count == 1)
    }

    @Test func smallerImagesKeepTheirSizeAndGrayFormatsWork() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(width: 100, height: 80, pixelFormat: .gray8), directory: directory.url)
        try table.setImage(pattern(3, width: 100, height: 37, pixelFormat: .gray8), for: entity(3), sourceID: entity(3))
        let image = try #require(table.image(for: entity(3)))
        #expect(image.width == 100 && image.height == 37 && image.pixelFormat == .gray8)
        #expect(image.hasSamePixels(as: pattern(3, width: 100, height: 37, pixelFormat: .gray8)))
        // RGBA given to a gray format is converted, as `ImageFormat.process` would.
        try table.setImage(pattern(4, width: 10, height: 10), for: entity(4), sourceID: entity(4))
        #expect(try #require(table.image(for: entity(4))).hasSamePixels(as: pattern(4, width: 10, height: 10).converted(to: .gray8)))
        #expect(throws: ImageTableError.imageDoesNotFit(width: 101, height: 10, format: "thumb")) {
            try table.setImage(pattern(5, width: 101, height: 10), for: entity(5), sourceID: entity(5))
        }
    }

    @Test func writingThroughABorrowedBitmapCopiesFirst() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(), directory: directory.url)
        try table.setImage(pattern(1), for: entity(1), sourceID: entity(1))
        var image = try #require(table.image(for: entity(1)))
        image.withUnsafeMutableBytes { $0[0] = ~$0[0] }
        #expect(!image.isBorrowed)
        #expect(try #require(table.image(for: entity(1))).hasSamePixels(as: pattern(1)))
    }

    @Test func theLeastRecentlyUsedEntryIsReplacedAtMaximumCount() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(maximumCount: 3, width: 16, height: 16), directory: directory.url)
        for number: UInt64 in 1...3 { try table.setImage(pattern(number, width: 16, height: 16), for: entity(number), sourceID: entity(number)) }
        _ = table.image(for: entity(1))  // 2 is now the least recently used
        try table.setImage(pattern(4, width: 16, height: 16), for: entity(4), sourceID: entity(4))
        #expect(table.entityIDs() == [entity(4), entity(1), entity(3)])
        _ = table.image(for: entity(3))
        try table.setImage(pattern(5, width: 16, height: 16), for: entity(5), sourceID: entity(5))
        #expect(table.entityIDs() == [entity(5), entity(3), entity(4)])
        #expect(table.image(for: entity(1)) == nil && table.image(for: entity(2)) == nil)
        for number: UInt64 in [3, 4, 5] {
            #expect(try #require(table.image(for: entity(number))).hasSamePixels(as: pattern(number, width: 16, height: 16)))
        }
    }

    @Test func aHeldImageIsNeverOverwritten() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(maximumCount: 2), directory: directory.url)
        try table.setImage(pattern(1), for: entity(1), sourceID: entity(1))
        let held = try #require(table.image(for: entity(1)))
        // Enough inserts to evict entry 1 many times over, plus a replacement of entity 1 itself.
        for number: UInt64 in 2...12 { try table.setImage(pattern(number), for: entity(number), sourceID: entity(number)) }
        try table.setImage(pattern(99), for: entity(1), sourceID: entity(1))
        #expect(held.hasSamePixels(as: pattern(1)), "the held pixels are unchanged")
        #expect(try #require(table.image(for: entity(1))).hasSamePixels(as: pattern(99)))
        // The replacement took the only unpinned slot (evicting entity 12); the held old entry
        // still occupies the other. With both pinned, nothing can be replaced.
        #expect(table.image(for: entity(12)) == nil)
        let replacement = try #require(table.image(for: entity(1)))
        #expect(throws: ImageTableError.allEntriesInUse(format: "thumb")) {
            try table.setImage(pattern(13), for: entity(13), sourceID: entity(13))
        }
        withExtendedLifetime((held, replacement)) {}
    }

    @Test func aHeldImageSurvivesRemovalAndResetAndItsSlotIsReusedAfterwards() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(maximumCount: 1), directory: directory.url)
        try table.setImage(pattern(1), for: entity(1), sourceID: entity(1))
        var held = table.image(for: entity(1))
        #expect(held != nil)
        table.removeImage(for: entity(1))
        #expect(!table.contains(entity(1)))
        #expect(throws: ImageTableError.allEntriesInUse(format: "thumb")) {
            try table.setImage(pattern(2), for: entity(2), sourceID: entity(2))
        }
        #expect(held!.hasSamePixels(as: pattern(1)))
        held = nil
        try table.setImage(pattern(2), for: entity(2), sourceID: entity(2))
        let second = try #require(table.image(for: entity(2)))
        table.reset()
        #expect(table.count == 0 && table.image(for: entity(2)) == nil)
        #expect(second.hasSamePixels(as: pattern(2)))
    }

    @Test func sourceIDsMustMatchWhenGiven() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(), directory: directory.url)
        try table.setImage(pattern(1), for: entity(1), sourceID: entity(100))
        #expect(table.image(for: entity(1), sourceID: entity(100)) != nil)
        #expect(table.image(for: entity(1), sourceID: entity(101)) == nil)
        #expect(table.contains(entity(1), sourceID: entity(100)) && !table.contains(entity(1), sourceID: entity(101)))
    }

    @Test func reopeningKeepsEntriesAndTheirLRUOrder() throws {
        let directory = try TemporaryDirectory()
        var order: [UUID] = []
        do {
            let table = try ImageTable(format: thumbFormat(maximumCount: 50, width: 64, height: 64), directory: directory.url)
            defer { table.close() }  // the lock goes now, not when deinit runs
            for number: UInt64 in 1...40 { try table.setImage(pattern(number, width: 64, height: number % 2 == 0 ? 64 : 17), for: entity(number), sourceID: entity(number)) }
            for number: UInt64 in [7, 3, 30] { _ = table.image(for: entity(number)) }
            table.removeImage(for: entity(5))
            order = table.entityIDs()
        }
        let table = try ImageTable(format: thumbFormat(maximumCount: 50, width: 64, height: 64), directory: directory.url)
        #expect(table.count == 39)
        #expect(table.entityIDs() == order)
        for number: UInt64 in 1...40 where number != 5 {
            let image = try #require(table.image(for: entity(number)))
            #expect(image.hasSamePixels(as: pattern(number, width: 64, height: number % 2 == 0 ? 64 : 17)))
        }
    }

    @Test func anotherProcessingOrSizeStartsEmptyWhileAnotherMaximumCountKeepsEntries() throws {
        let directory = try TemporaryDirectory()
        do {
            let table = try ImageTable(format: thumbFormat(maximumCount: 20, width: 32, height: 32), directory: directory.url)
            defer { table.close() }  // the lock goes now, not when deinit runs
            for number: UInt64 in 1...20 { try table.setImage(pattern(number, width: 32, height: 32), for: entity(number), sourceID: entity(number)) }
        }
        do {
            // More room: everything stays.
            let table = try ImageTable(format: thumbFormat(maximumCount: 40, width: 32, height: 32), directory: directory.url)
            defer { table.close() }  // the lock goes now, not when deinit runs
            #expect(table.count == 20)
        }
        do {
            // Less room: the slots past the new maximum go, the rest stay readable.
            let table = try ImageTable(format: thumbFormat(maximumCount: 5, width: 32, height: 32), directory: directory.url)
            defer { table.close() }  // the lock goes now, not when deinit runs
            #expect(table.count == 5)
            for id in table.entityIDs() { #expect(table.image(for: id) != nil) }
            try table.setImage(pattern(21, width: 32, height: 32), for: entity(21), sourceID: entity(21))
            #expect(table.count == 5)
        }
        do {
            let table = try ImageTable(format: thumbFormat(maximumCount: 5, width: 32, height: 32, version: 2), directory: directory.url)
            defer { table.close() }  // the lock goes now, not when deinit runs
            #expect(table.count == 0, "another format version made the old entries meaningless")
        }
        let table = try ImageTable(format: thumbFormat(maximumCount: 5, width: 32, height: 32, fit: .fill), directory: directory.url)
        #expect(table.count == 0)
    }

    @Test func aDamagedEntryReadsAsMissingAfterReopening() throws {
        let directory = try TemporaryDirectory()
        let format = thumbFormat(maximumCount: 10, width: 32, height: 32)
        let path: String
        do {
            let table = try ImageTable(format: format, directory: directory.url)
            defer { table.close() }  // the lock goes now, not when deinit runs
            for number: UInt64 in 1...3 { try table.setImage(pattern(number, width: 32, height: 32), for: entity(number), sourceID: entity(number)) }
            path = table.url.path
        }
        let geometry = TableGeometry(format: format)
        // Flip a pixel byte of slot 1 and a byte of slot 2's record (the record check covers it).
        try flipByte(at: geometry.pixelOffset(slot: 1) + 5, in: path)
        try flipByte(at: geometry.recordOffset(slot: 2) + 20, in: path)
        let table = try ImageTable(format: format, directory: directory.url)
        #expect(table.count == 2, "the torn record is gone at open")
        #expect(table.image(for: entity(2)) == nil, "the damaged pixels are caught by the checksum on first read")
        #expect(table.count == 1)
        #expect(try #require(table.image(for: entity(1))).hasSamePixels(as: pattern(1, width: 32, height: 32)))
    }

    @Test func aSecondInstanceOrProcessIsRefused() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(), directory: directory.url)
        #expect(throws: ImageTableError.inUseByAnotherProcess(path: table.url.path)) {
            _ = try ImageTable(format: thumbFormat(), directory: directory.url)
        }
        withExtendedLifetime(table) {}
    }

    @Test func theFileIsAllocatedNotSparse() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(maximumCount: 100), directory: directory.url)
        for number: UInt64 in 1...20 { try table.setImage(pattern(number, width: 8, height: 8), for: entity(number), sourceID: entity(number)) }
        var info = stat()
        #expect(stat(table.url.path, &info) == 0)
        #expect(info.st_size > 20 * 256 * 1024, "room for 20 full entries")
        #expect(Int(info.st_blocks) * 512 >= Int(info.st_size), "every byte has a disk block")
    }

    @Test func aTableThatCannotGrowReplacesOldEntriesOrThrows() throws {
        let directory = try TemporaryDirectory()
        let format = thumbFormat(maximumCount: 100)
        let allocator = FaultyAllocator(allowed: 2)  // the header and the first chunk
        let table = try ImageTable(format: format, directory: directory.url, fileOperations: allocator)
        let perChunk = UInt64(TableGeometry(format: format).entriesPerChunk)
        for number in 1...perChunk { try table.setImage(pattern(number), for: entity(number), sourceID: entity(number)) }
        // The disk is full: the least recently used entry makes room, as at maximumCount.
        try table.setImage(pattern(1000), for: entity(1000), sourceID: entity(1000))
        #expect(table.count == Int(perChunk))
        #expect(table.image(for: entity(1)) == nil)
        for number in 2...perChunk { #expect(try #require(table.image(for: entity(number))).hasSamePixels(as: pattern(number))) }
        // With every entry held, nothing can make room: the disk-full error comes through.
        let held = table.entityIDs().compactMap { table.image(for: $0) }
        #expect(throws: ImageTableError.diskFull(path: table.url.path)) {
            try table.setImage(pattern(1001), for: entity(1001), sourceID: entity(1001))
        }
        // Room again: the table grows.
        allocator.allow(1)
        try table.setImage(pattern(1001), for: entity(1001), sourceID: entity(1001))
        #expect(table.count == Int(perChunk) + 1)
        #expect(try #require(table.image(for: entity(1001))).hasSamePixels(as: pattern(1001)))
        withExtendedLifetime(held) {}

        // An empty table on a full disk has nothing to replace.
        let empty = try ImageTable(format: format, directory: try TemporaryDirectory().url, fileOperations: FaultyAllocator(allowed: 1))
        #expect(throws: ImageTableError.diskFull(path: empty.url.path)) {
            try empty.setImage(pattern(1), for: entity(1), sourceID: entity(1))
        }

        let other = try TemporaryDirectory()
        #expect(throws: ImageTableError.ioError(operation: "allocate", path: other.child("thumb.imagetable").path, errno: EIO)) {
            _ = try ImageTable(format: format, directory: other.url, fileOperations: FaultyAllocator(allowed: 0, code: EIO))
        }
    }

    @Test func recordsOfSlotsDroppedByALowerMaximumNeverComeBack() throws {
        let directory = try TemporaryDirectory()
        let small = { (count: Int) in thumbFormat(maximumCount: count, width: 16, height: 16) }
        do {
            let table = try ImageTable(format: small(20), directory: directory.url)
            defer { table.close() }  // the lock goes now, not when deinit runs
            for number: UInt64 in 1...20 { try table.setImage(pattern(number, width: 16, height: 16), for: entity(number), sourceID: entity(number)) }
        }
        do { try ImageTable(format: small(5), directory: directory.url).close() }
        do {
            let table = try ImageTable(format: small(40), directory: directory.url)
            defer { table.close() }  // the lock goes now, not when deinit runs
            #expect(table.count == 5)
            try table.setImage(pattern(50, width: 16, height: 16), for: entity(50), sourceID: entity(50))  // grows again
        }
        let table = try ImageTable(format: small(40), directory: directory.url)
        #expect(table.count == 6, "the dropped slots' old records stay dropped")
    }

    @Test func manyReadersAndWritersAtOnce() async throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(maximumCount: 24, width: 64, height: 64), directory: directory.url)
        let size: @Sendable (UInt64) -> (Int, Int) = { number in (64, 1 + Int(number % 64)) }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    var generator = SplitMix64(seed: UInt64(writer))
                    for _ in 0..<400 {
                        let number = generator.next() % 40
                        let (width, height) = size(number)
                        try table.setImage(pattern(number, width: width, height: height), for: entity(number), sourceID: entity(number))
                    }
                    return 0
                }
            }
            for reader in 0..<6 {
                group.addTask {
                    var generator = SplitMix64(seed: UInt64(100 + reader))
                    var seen = 0
                    var held: [Bitmap] = []
                    for _ in 0..<2000 {
                        let number = generator.next() % 40
                        guard let image = table.image(for: entity(number)) else { continue }
                        let (width, height) = size(number)
                        #expect(image.hasSamePixels(as: pattern(number, width: width, height: height)))
                        seen += 1
                        held.append(image)
                        if held.count > 2 { held.removeFirst() }
                    }
                    for image in held { #expect(image.isBorrowed) }
                    return seen
                }
            }
            var seen = 0
            for try await count in group { seen += count }
            #expect(seen > 0)
        }
        #expect(table.count <= 24)
    }
}

func flipByte(at offset: Int, in path: String) throws {
    let handle = try #require(FileHandle(forUpdatingAtPath: path))
    try handle.seek(toOffset: UInt64(offset))
    let byte = try #require(try handle.read(upToCount: 1)).first!
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: Data([~byte]))
    try handle.close()
}
