// Pipeline benchmarks: hit latency per tier (memory, image table, disk variant), each next to
// calling that tier directly, so the pipeline's own overhead shows as the difference.
import Benchmark
import BenchmarkSupport
import EaselCodecs
import EaselPipeline
import EaselStorage
import EaselTables
import Foundation

let source = samplesDirectory.appendingPathComponent("retina-fundus.jpg")

let formats = [
    ImageFormat(name: "thumb", family: "thumb", width: 256, height: 256, fit: .fill, maximumCount: 100),
    ImageFormat(name: "large", family: "large", width: 256, height: 256, fit: .fill, maximumCount: 100, storage: .diskCache),
]

/// A pipeline over a fresh directory (removed with it), reading the sample files.
final class Bench: Sendable {
    let scratch = Scratch()
    let pipeline: ImagePipeline

    init(memoryCostLimit: Int = 64 << 20) throws {
        var configuration = ImagePipeline.Configuration(formats: formats, cacheDirectory: scratch.url,
                                                        fetchers: [FileFetcher(root: samplesDirectory)], downloadRate: nil)
        configuration.memoryCostLimit = memoryCostLimit
        pipeline = try ImagePipeline(configuration: configuration)
    }
}

let benchmarks: @Sendable () -> Void = {
    let micro = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 10_000
    )
    let slow = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        maxDuration: .seconds(5),
        maxIterations: 2_000
    )
    let memoryRequest = ImageRequest(url: source, processing: .processors([Resize(width: 256, height: 256, mode: .fill)]))

    Benchmark("Pipeline memory hit", configuration: micro) { (benchmark: Benchmark, bench: Bench) in
        for _ in benchmark.scaledIterations { blackHole(try await bench.pipeline.image(for: memoryRequest)) }
    } setup: {
        let bench = try Bench()
        _ = try await bench.pipeline.image(for: memoryRequest)
        return bench
    }

    // The tier alone: a MemoryCache holding the same image under the same kind of key.
    Benchmark("MemoryCache get (the same image, directly)", configuration: micro) { (benchmark: Benchmark, cache: MemoryCache<String, Bitmap>) in
        let key = "processors:" + [Resize(width: 256, height: 256, mode: .fill)].identifier + "|" + memoryRequest.sourceKey!
        for _ in benchmark.scaledIterations { blackHole(cache.value(forKey: key)) }
    } setup: {
        let bench = try Bench()
        let image = try await bench.pipeline.image(for: memoryRequest).image
        let cache = MemoryCache<String, Bitmap>(configuration: .init(costLimit: 64 << 20))
        cache.set(image, forKey: "processors:" + [Resize(width: 256, height: 256, mode: .fill)].identifier + "|" + memoryRequest.sourceKey!,
                  cost: image.rowBytes * image.height)
        return cache
    }

    let tableRequest = ImageRequest(url: source, format: "thumb")
    Benchmark("Pipeline table hit 256x256", configuration: micro) { (benchmark: Benchmark, bench: Bench) in
        for _ in benchmark.scaledIterations { blackHole(try await bench.pipeline.image(for: tableRequest)) }
    } setup: {
        let bench = try Bench()
        _ = try await bench.pipeline.image(for: tableRequest)
        return bench
    }

    Benchmark("ImageTable retrieval (the same entry, directly)", configuration: micro) { (benchmark: Benchmark, bench: Bench) in
        let table = bench.pipeline.table(forFormat: "thumb")!
        let id = table.entityIDs()[0]
        for _ in benchmark.scaledIterations { blackHole(table.image(for: id)) }
    } setup: {
        let bench = try Bench()
        _ = try await bench.pipeline.image(for: tableRequest)
        return bench
    }

    // A memory cache too small to keep anything: every request reads the variant from disk.
    let variantRequest = ImageRequest(url: source, format: "large")
    Benchmark("Pipeline disk variant hit 256x256 (JPEG q90)", configuration: slow) { (benchmark: Benchmark, bench: Bench) in
        for _ in benchmark.scaledIterations { blackHole(try await bench.pipeline.image(for: variantRequest)) }
    } setup: {
        let bench = try Bench(memoryCostLimit: 1)
        _ = try await bench.pipeline.image(for: variantRequest)
        return bench
    }

    // The tier alone: a DiskCache holding the same variant bytes (JPEG q90).
    Benchmark("DiskCache get + JPEG decode (the same variant, directly)", configuration: slow) { (benchmark: Benchmark, state: DirectDisk) in
        for _ in benchmark.scaledIterations { blackHole(try ImageDecoder.decode(try state.cache.data(forKey: "variant")!)) }
    } setup: {
        let bench = try Bench(memoryCostLimit: 1)
        let image = try await bench.pipeline.image(for: variantRequest).image
        let scratch = Scratch()
        let cache = try DiskCache(directory: scratch.url)
        try await cache.set(try ImageEncoder.encode(image, as: .jpeg(quality: 90)), forKey: "variant")
        return DirectDisk(scratch: scratch, cache: cache)
    }
}

/// A disk cache in a scratch directory.
struct DirectDisk: Sendable {
    let scratch: Scratch
    let cache: DiskCache
}
