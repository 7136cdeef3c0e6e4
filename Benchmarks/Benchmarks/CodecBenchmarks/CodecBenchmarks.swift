// Codec benchmarks: the cold path of every thumbnail (decode, resize, encode) on a synthetic
// 1920×1080 photo-like image (smooth gradients plus noise, JPEG q85).
import Benchmark
import EaselCodecs
import Foundation

/// A deterministic photo-like image: gradients with per-pixel noise (so JPEG has work to do).
func syntheticPhoto(width: Int, height: Int) -> Bitmap {
    var bitmap = Bitmap(width: width, height: height, pixelFormat: .rgba8)
    let rowBytes = bitmap.rowBytes
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    bitmap.withUnsafeMutableBytes { bytes in
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let noise = Int(state >> 59) - 16
                let o = y * rowBytes + x * 4
                bytes[o] = UInt8(clamping: x * 255 / width + noise)
                bytes[o + 1] = UInt8(clamping: y * 255 / height + noise)
                bytes[o + 2] = UInt8(clamping: (x + y) * 127 / (width + height) + 64 + noise)
                bytes[o + 3] = 255
            }
        }
    }
    return bitmap
}

let photo = syntheticPhoto(width: 1920, height: 1080)
/// The photo through a JPEG: known to be opaque, as every decoded JPEG is.
let opaquePhoto = try! ImageDecoder.decode(try! ImageEncoder.encode(photo, as: .jpeg(quality: 90)))

/// A thumbnail as `easel thumbnail` makes one: shrink-on-load decode, `resize`, JPEG q80.
func thumbnail(_ jpeg: Data, _ resize: Resize) throws -> Data {
    let info = try ImageDecoder.info(of: jpeg)
    let needed = resize.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
    return try ImageEncoder.encode(try resize.process(try ImageDecoder.decode(jpeg, info: info, covering: needed)), as: .jpeg(quality: 80))
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        timeUnits: .microseconds,
        maxDuration: .seconds(5),
        maxIterations: 200
    )

    Benchmark("JPEG decode 1920x1080 full", configuration: configuration) { (benchmark: Benchmark, jpeg: Data) in
        for _ in benchmark.scaledIterations { blackHole(try ImageDecoder.decode(jpeg)) }
    } setup: {
        try ImageEncoder.encode(photo, as: .jpeg(quality: 85))
    }

    Benchmark("Thumbnail JPEG 1920x1080 to 256 JPEG q80", configuration: configuration) { (benchmark: Benchmark, jpeg: Data) in
        let resize = Resize(width: 256, height: 256, mode: .fit)
        for _ in benchmark.scaledIterations { blackHole(try thumbnail(jpeg, resize)) }
    } setup: {
        try ImageEncoder.encode(photo, as: .jpeg(quality: 85))
    }

    Benchmark("PNG decode 1920x1080", configuration: configuration) { (benchmark: Benchmark, png: Data) in
        for _ in benchmark.scaledIterations { blackHole(try ImageDecoder.decode(png)) }
    } setup: {
        try ImageEncoder.encode(photo, as: .png(compressionLevel: 6))
    }

    Benchmark("Lanczos resize 480x270 to 256x144", configuration: configuration) { benchmark in
        let small = try Resize(width: 480, height: 270, mode: .exact).process(photo)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try Resize(width: 256, height: 144, mode: .exact).process(small)) }
    }

    // The default (16-bit fixed point, SSE2) against the float path it replaced, on an opaque
    // photo (decoded from a JPEG, so known to be opaque, as every decoded JPEG is): a
    // thumbnail's resize and a large one.
    for arithmetic in [ResampleArithmetic.automatic, .float] {
        Benchmark("Lanczos \(arithmetic.rawValue) opaque 480x270 to 256x144", configuration: configuration) { benchmark in
            let small = opaquePhoto.resampled(width: 480, height: 270)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(small.resampled(width: 256, height: 144, arithmetic: arithmetic)) }
        }
        Benchmark("Lanczos \(arithmetic.rawValue) opaque 1920x1080 to 1280x720", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(opaquePhoto.resampled(width: 1280, height: 720, arithmetic: arithmetic)) }
        }
    }

    // Smart crop on what a 256×256 fill of a 1920×1080 JPEG decodes to with shrink-on-load
    // (1/4 scale: 480×270): where to put the 270×270 window.
    for strategy in [SmartCrop.Strategy.attention, .entropy] {
        Benchmark("Smart crop \(strategy.rawValue) 480x270, window 270x270", configuration: configuration) { benchmark in
            let decoded = try Resize(width: 480, height: 270, mode: .exact).process(photo)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try SmartCrop.region(in: decoded, width: 270, height: 270, strategy: strategy)) }
        }
    }

    // Blur and sharpen at the largest sigmas URLs may ask for, on the largest ad-hoc output
    // (2048×2048): O(pixels) whatever the sigma (three box passes past sigma 4), where an exact
    // kernel cost O(pixels × sigma) and kept a core busy for tens of seconds.
    let square = try! Resize(width: 2048, height: 2048, mode: .exact, upscale: true).process(opaquePhoto)
    for sigma in [2.0, 249] {
        Benchmark("Blur sigma \(Int(sigma)) 2048x2048", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try GaussianBlur(sigma: sigma).process(square)) }
        }
    }
    Benchmark("Sharpen sigma 100 2048x2048", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try Sharpen(sigma: 100).process(square)) }
    }

    // A whole 256×256 fill thumbnail, centred and smart: the smart crop's share of a thumbnail.
    for gravity in [Gravity.center, .smart(.attention)] {
        Benchmark("Thumbnail JPEG 1920x1080 to 256x256 fill g=\(gravity.identifier)", configuration: configuration) { (benchmark: Benchmark, jpeg: Data) in
            let resize = Resize(width: 256, height: 256, mode: .fill, gravity: gravity)
            for _ in benchmark.scaledIterations { blackHole(try thumbnail(jpeg, resize)) }
        } setup: {
            try ImageEncoder.encode(photo, as: .jpeg(quality: 85))
        }
    }
}
