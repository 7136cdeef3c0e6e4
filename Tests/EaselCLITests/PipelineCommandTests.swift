import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

@Suite("easel fetch and easel warm", .timeLimit(.minutes(1)))
struct PipelineCommandTests {
    @Test func fetchSaysWhichTierAnsweredAndWritesTheImage() async throws {
        let directory = try TemporaryDirectory()
        let cache = directory.child("cache").path
        let source = sampleURL("chelsea-cat.jpg").path
        let output = directory.child("cat.png").path
        let first = try await runEasel(["fetch", source, "--format", "thumb", "--cache-dir", cache, "-o", output])
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.contains("256×170 from file in"), "\(first.output)")
        #expect(try ImageDecoder.info(of: Data(contentsOf: URL(fileURLWithPath: output))).width == 256)
        let second = try await runEasel(["fetch", source, "--format", "thumb", "--cache-dir", cache])
        #expect(second.output.contains("from table in"), "\(second.output)")
        // Local originals are not copied into the cache: a new processing reads the file again.
        let adHoc = try await runEasel(["fetch", source, "--size", "100x100", "--fit", "cover", "--cache-dir", cache])
        #expect(adHoc.output.contains("100×100 from file in"), "\(adHoc.output)")
        let adHocAgain = try await runEasel(["fetch", source, "--size", "100x100", "--fit", "cover", "--cache-dir", cache])
        #expect(adHocAgain.output.contains("100×100 from diskVariant in"), "\(adHocAgain.output)")
        let reload = try await runEasel(["fetch", source, "--size", "100x100", "--fit", "cover", "--reload", "--cache-dir", cache])
        #expect(reload.output.contains("from file"), "\(reload.output)")

        let missing = try await runEasel(["fetch", directory.child("none.jpg").path, "--cache-dir", cache])
        #expect(missing.status == 1 && missing.error.contains("no such file"))
        let badFormat = try await runEasel(["fetch", source, "--format", "huge"])
        #expect(badFormat.status != 0 && badFormat.error.contains("no format named huge"))
    }

    @Test func warmLoadsAListAndSummarisesFailures() async throws {
        let directory = try TemporaryDirectory()
        let list = directory.child("list.txt")
        let names = ["astronaut.jpg", "chelsea-cat.jpg", "coffee-cup.jpg", "coffee-cup-cutout.png"]
        let lines = ["# samples", ""] + names.map { sampleURL($0).path } + [directory.child("missing.jpg").path]
        try lines.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        let cache = directory.child("cache").path
        let result = try await runEasel(["warm", list.path, "--format", "small", "--concurrency", "2", "--cache-dir", cache])
        #expect(result.status == 1)
        #expect(result.output.contains("warmed 4 of 5"), "\(result.output)")
        #expect(result.error.contains("5/5"), "progress reaches the end: \(result.error)")
        #expect(result.error.contains("1 failed:") && result.error.contains("missing.jpg: no such file"), "\(result.error)")
        // Warm: every image now comes from its table.
        for name in names {
            let fetch = try await runEasel(["fetch", sampleURL(name).path, "--format", "small", "--cache-dir", cache])
            #expect(fetch.output.contains("from table"), "\(fetch.output)")
        }
    }
}
