// Image table benchmarks: zero-copy retrieval of a present 256×256 RGBA entry, side by side with
// reading and decoding the same thumbnail as a JPEG from the disk cache; opening a table of
// 10,000 entries; and the cost of inserting next to the cost of making the entry.
import Benchmark
import BenchmarkSupport
import EaselCodecs
import EaselStorage
import EaselTables
import Foundation

let thumb = ImageFormat(name: "thumb", width: 256, height: 256, fit: .fill, maximumCount: 10_000)

func id(_ number: Int) -> UUID {
    var bytes = [UInt8](repeating: 0, count: 16)
    withUnsafeBytes(of: UInt64(number + 1).littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
    return bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
}

/// The 256×256 thumbnail of a sample photo, as pixels and as a q80 JPEG.
func sampleThumbnail() throws -> (bitmap: Bitmap, jpeg: Data, source: Data) {
    let source = try Data(contentsOf: samplesDirectory.appendingPathComponent("retina-fundus.jpg"))
    let bitmap = try thumb.process(try ImageDecoder.decode(source))
    return (bitmap, try ImageEncoder.encode(bitmap, as: .jpeg(quality: 80)), source)
}

struct RetrievalState: Sendable {
    let scratch: Scratch
    let table: ImageTable
    let ids: [UUID]
}

struct DiskState: Sendable {
    let scratch: Scratch
    let cache: DiskCache
    let keys: [String]
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
        maxIterations: 1_000
    )

    // 64 present entries read in turn; each read returns a Bitmap over the mapped entry (pinned)
    // and releases it again when the bitmap goes.
    Benchmark("ImageTable retrieval 256x256 RGBA (present)", configuration: micro) { (benchmark: Benchmark, state: RetrievalState) in
        var index = 0
        for _ in benchmark.scaledIterations {
            index = (index + 1) & 63
            blackHole(state.table.image(for: state.ids[index]))
        }
    } setup: {
        let scratch = Scratch()
        let table = try ImageTable(format: thumb, directory: scratch.url)
        let (bitmap, _, _) = try sampleThumbnail()
        let ids = (0..<64).map(id)
        for entity in ids { try table.setImage(bitmap, for: entity, sourceID: entity) }
        return RetrievalState(scratch: scratch, table: table, ids: ids)
    }

    // The same 64 thumbnails as q80 JPEGs in the disk cache: read and decode each.
    Benchmark("DiskCache get + JPEG decode 256x256 (same thumbnail)", configuration: slow) { (benchmark: Benchmark, state: DiskState) in
        var index = 0
        for _ in benchmark.scaledIterations {
            index = (index + 1) & 63
            let data = try state.cache.data(forKey: state.keys[index])!
            blackHole(try ImageDecoder.decode(data))
        }
    } setup: {
        let scratch = Scratch()
        let cache = try DiskCache(directory: scratch.url)
        let (_, jpeg, _) = try sampleThumbnail()
        let keys = (0..<64).map { "thumb/\(id($0).uuidString)" }
        for key in keys { try cache.set(jpeg, forKey: key) }
        return DiskState(scratch: scratch, cache: cache, keys: keys)
    }

    Benchmark("ImageTable open 10,000 entries 256x256", configuration: slow) { (benchmark: Benchmark, scratch: Scratch) in
        for _ in benchmark.scaledIterations {
            let table = try ImageTable(format: thumb, directory: scratch.url)
            precondition(table.count == 10_000)
            blackHole(table)
        }
    } setup: {
        let scratch = Scratch()
        let table = try ImageTable(format: thumb, directory: scratch.url)
        let (bitmap, _, _) = try sampleThumbnail()
        for number in 0..<10_000 { try table.setImage(bitmap, for: id(number), sourceID: id(number)) }
        return scratch
    }

    // Making an entry from the 1411x1411 sample JPEG (decode with shrink-on-load, Lanczos fill to
    // 256x256), then the same plus storing it in a table that is full (every insert replaces
    // the least recently used entry, as in steady state).
    Benchmark("Make thumb entry from JPEG (decode + process)", configuration: slow) { (benchmark: Benchmark, source: Data) in
        for _ in benchmark.scaledIterations { blackHole(try makeEntry(source)) }
    } setup: {
        try sampleThumbnail().source
    }

    Benchmark("Make thumb entry from JPEG + insert into table", configuration: slow) { (benchmark: Benchmark, state: RetrievalState) in
        let source = try sampleThumbnail().source
        var number = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            number += 1
            try state.table.setImage(try makeEntry(source), for: id(number), sourceID: id(number))
        }
    } setup: {
        try fullTable(firstID: 1_000_000)
    }

    Benchmark("ImageTable insert 256x256 RGBA (table full, replaces LRU)", configuration: micro) { (benchmark: Benchmark, state: RetrievalState) in
        let bitmap = try sampleThumbnail().bitmap
        var number = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            number += 1
            try state.table.setImage(bitmap, for: id(number & 127), sourceID: id(0))
        }
    } setup: {
        try fullTable(firstID: 0)
    }
}

/// A table of 64 entries that is full, so that every insert replaces its LRU entry.
func fullTable(firstID: Int) throws -> RetrievalState {
    let scratch = Scratch()
    let format = ImageFormat(name: "thumb", width: 256, height: 256, fit: .fill, maximumCount: 64)
    let table = try ImageTable(format: format, directory: scratch.url)
    let bitmap = try sampleThumbnail().bitmap
    for number in 0..<64 { try table.setImage(bitmap, for: id(firstID + number), sourceID: id(0)) }
    return RetrievalState(scratch: scratch, table: table, ids: [])
}

/// Decode with shrink-on-load, then the format's processing: what a table insert stores.
func makeEntry(_ source: Data) throws -> Bitmap {
    let info = try ImageDecoder.info(of: source)
    let needed = thumb.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
    return try thumb.process(try ImageDecoder.decode(source, info: info, covering: needed))
}
