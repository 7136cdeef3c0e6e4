// The Swift side of peers/pipeline-throughput.sh: cold pipeline throughput. Each pass opens a
// fresh pipeline over a fresh cache directory and requests one 256x256 "fit" thumbnail of
// every file (stored in an image table), with CONCURRENCY decodes at a time (and four times as
// many requests in flight, so reads overlap decodes); prints images per second over all passes.
//
// usage: PipelineThroughput ORIGIN PASSES CONCURRENCY FILE...
//   ORIGIN is "file" (FileFetcher on the files' directory) or an http://127.0.0.1:PORT base URL
//   serving the files by name.
import EaselPipeline
import EaselTables
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 4, let passes = Int(arguments[1]), let concurrency = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: PipelineThroughput ORIGIN PASSES CONCURRENCY FILE...\n".utf8))
    exit(2)
}
let origin = arguments[0]
let files = arguments.dropFirst(3).map { URL(fileURLWithPath: $0).standardizedFileURL }
let root = files[0].deletingLastPathComponent()
let urls = files.map { origin == "file" ? $0 : URL(string: origin)!.appendingPathComponent($0.lastPathComponent) }
let format = ImageFormat(name: "thumb", family: "thumb", width: 256, height: 256, fit: .fit, maximumCount: 10_000)

let start = ContinuousClock.now
var failures = 0
for _ in 0..<passes {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("easel-throughput-\(UUID().uuidString)")
    var configuration = ImagePipeline.Configuration(formats: [format], cacheDirectory: directory,
                                                    fetchers: [FileFetcher(root: root), HTTPFetcher()], downloadRate: nil)
    configuration.maximumConcurrentDownloads = 4 * concurrency
    configuration.maximumConcurrentDecodes = concurrency
    let pipeline = try ImagePipeline(configuration: configuration)
    failures += await withTaskGroup(of: Bool.self) { group in
        var next = 0
        var failed = 0
        func add() {
            guard next < urls.count else { return }
            let url = urls[next]
            next += 1
            group.addTask {
                do { _ = try await pipeline.image(for: ImageRequest(url: url, format: "thumb")); return true } catch {
                    FileHandle.standardError.write(Data("\(url): \(error)\n".utf8))
                    return false
                }
            }
        }
        // Requests in flight: enough to keep CONCURRENCY decodes busy while others read.
        for _ in 0..<(4 * concurrency) { add() }
        for await ok in group {
            if !ok { failed += 1 }
            add()
        }
        return failed
    }
    await pipeline.shutdown()
    try? FileManager.default.removeItem(at: directory)
}
let elapsed = ContinuousClock.now - start
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let count = passes * urls.count
print(String(format: "pipeline %d images in %.3f s: %.1f images/s (%d failed)", count, seconds, Double(count) / seconds, failures))
exit(failures == 0 ? 0 : 1)
