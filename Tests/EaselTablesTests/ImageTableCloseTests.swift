import EaselCodecs
import EaselStorage
@testable import EaselTables
import EaselTestSupport
import Foundation
import Testing

@Suite struct ImageTableCloseTests {
    @Test func closingReleasesTheFileLockBeforeReturningAndKeepsHeldImages() throws {
        let directory = try TemporaryDirectory()
        let table = try ImageTable(format: thumbFormat(), directory: directory.url)
        try table.setImage(pattern(1), for: entity(1), sourceID: entity(1))
        let held = try #require(table.image(for: entity(1)))
        #expect(throws: ImageTableError.inUseByAnotherProcess(path: table.url.path)) {
            _ = try ImageTable(format: thumbFormat(), directory: directory.url)
        }
        table.close()
        // Reopened at once while the first instance (and a bitmap borrowing its mapping) lives on.
        let reopened = try ImageTable(format: thumbFormat(), directory: directory.url)
        #expect(reopened.image(for: entity(1))?.hasSamePixels(as: pattern(1)) == true)
        #expect(held.hasSamePixels(as: pattern(1)), "a bitmap handed out before closing stays readable")
        #expect(table.isClosed && table.image(for: entity(1)) == nil)
        #expect(throws: ImageTableError.closed(path: table.url.path)) { try table.setImage(pattern(2), for: entity(2), sourceID: entity(2)) }
        #expect(throws: ImageTableError.closed(path: table.url.path)) { try table.flush() }
        table.close()  // again: nothing happens
        try reopened.setImage(pattern(2), for: entity(2), sourceID: entity(2))
        #expect(reopened.count == 2)
    }

    @Test func closingACacheReleasesEveryTable() throws {
        let directory = try TemporaryDirectory()
        let small = ImageFormat(name: "small", width: 64, height: 64, maximumCount: 10)
        let cache = try ImageTableCache(directory: directory.url, formats: [thumbFormat(), small])
        cache.close()
        let again = try ImageTableCache(directory: directory.url, formats: [thumbFormat(), small])
        #expect(again.table(forFormat: "thumb")?.isClosed == false)
        #expect(cache.table(forFormat: "small")?.isClosed == true)
    }
}
