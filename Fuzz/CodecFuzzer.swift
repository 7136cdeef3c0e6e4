// libFuzzer entry point over the whole read path: sniff, header info, decode and resize.
// Built by scripts/fuzz-codecs.sh together with EaselCodecs' sources and C shims, under
// AddressSanitizer. Every input must end in an image or a CodecError: a crash, a sanitizer
// report or a leak is a bug.
import CPNG
import Foundation

/// Small limits keep each run cheap; the code paths are the same as with the defaults.
let fuzzLimits: DecodingLimits = {
    var limits = DecodingLimits(maxPixels: 4_000_000, maxInputBytes: 1 << 20, maxFrames: 16, maxAnimationPixels: 8_000_000)
    limits.maxProgressiveScans = 50
    limits.maxProfileBytes = 1 << 20
    return limits
}()

/// `EASEL_FUZZ_TARGET=geometry`: headers only, each planned into every named format's geometry
/// (the path a 0×0 HEIC once crashed the server through), with no pixel limit so that extreme
/// sides reach the planner.
let geometryOnly = ProcessInfo.processInfo.environment["EASEL_FUZZ_TARGET"] == "geometry"

/// The server's default formats and the other resize modes, as the pipeline plans them.
let plannedResizes: [Resize] = [
    Resize(width: 256, height: 256, mode: .fit), Resize(width: 512, height: 512, mode: .fit),
    Resize(width: 256, height: 256, mode: .fill), Resize(width: 300, height: 100, mode: .fillDown),
    Resize(width: 100, height: 300, mode: .auto), Resize(width: 64, height: 9, mode: .exact),
    Resize(width: 1, height: 1, mode: .fill, upscale: true), Resize(width: 8192, height: 8192, mode: .fit, upscale: true),
]

func planGeometry(_ data: Data) {
    let unlimited = DecodingLimits(maxPixels: .max, maxInputBytes: 1 << 20, maxFrames: .max, maxAnimationPixels: .max)
    guard let info = try? ImageDecoder.info(of: data, limits: unlimited) else { return }
    if info.width < 1 || info.height < 1 { fatalError("info accepted a side of 0: \(info.width)×\(info.height)") }
    for resize in plannedResizes {
        let minimum = resize.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
        let scaled = resize.scaledSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
        if minimum.width < 1 || minimum.height < 1 || scaled.width < 1 || scaled.height < 1 {
            fatalError("\(resize.identifier) of \(info.uprightWidth)×\(info.uprightHeight) planned a side of 0")
        }
        _ = resize.effectiveMode(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let data = Data(bytes: start, count: count)
    if geometryOnly {
        planGeometry(data)
        return 0
    }
    let type = try? ImageFileType.sniff(data)
    // SVG served as SVG: the cleaner (libxml2 through the shim) on whatever is sniffed as SVG.
    if type == .svg { _ = try? SVGSanitizer.sanitize(data, limits: fuzzLimits) }
    // The ICC parser on raw bytes (Little CMS through the shim), and as embedded below.
    _ = ICCProfile(data: data)
    guard let info = try? ImageDecoder.info(of: data, limits: fuzzLimits) else { return 0 }
    _ = info.uprightWidth
    guard let bitmap = try? ImageDecoder.decode(data, covering: (32, 32), limits: fuzzLimits) else { return 0 }
    _ = try? Resize(width: 16, height: 16, mode: .fill).process(bitmap)
    // Resizes that do not enlarge, on a bitmap decoded shrunk to what they need (its extent may
    // be a fraction of a pixel): never a side of 0.
    for resize in [Resize(width: 64, height: 64, mode: .fit), Resize(width: 64, height: 64, mode: .exact, upscale: false),
                   Resize(width: 64, height: 9, mode: .fillDown)] {
        let needed = resize.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
        guard let shrunk = try? ImageDecoder.decode(data, covering: needed, limits: fuzzLimits),
              let resized = try? resize.process(shrunk) else { continue }
        if resized.width < 1 || resized.height < 1 { fatalError("\(resize.identifier) made \(resized.width)×\(resized.height)") }
    }
    // The DC-only path of progressive JPEGs at 1/8: stripping never crashes, and whenever the
    // stripped and the full decode both succeed they agree to the byte (differential check).
    if info.fileType == .jpeg, info.isProgressive {
        _ = JPEGCodec.dcOnlyStream(data)
        for format in [Bitmap.PixelFormat.rgba8, .gray8] {
            let fast = try? JPEGCodec.decode(data, info: info, covering: (1, 1), pixelFormat: format, limits: fuzzLimits).0
            let full = try? JPEGCodec.decode(data, info: info, covering: (1, 1), pixelFormat: format, limits: fuzzLimits, dcOnlyScans: false).0
            if (fast == nil) != (full == nil) { fatalError("the DC-only and the full decode disagree on success") }
            if let fast, let full, !fast.hasSamePixels(as: full) { fatalError("DC-only decode differs from the full decode") }
        }
    }
    // The PNG fast path (ISA-L inflate, SSE unfiltering), whole and shrunk on load, against
    // libspng alone: the same success, and the same pixels to the byte (a differential check).
    // The one difference allowed: a stream zlib refuses for an incomplete Huffman code (libspng's
    // "IDAT stream error"), which ISA-L reads (easel_png.c says why).
    if info.fileType == .png, info.width * info.height <= 1 << 20 {
        func agree(_ fast: Result<Bitmap, any Error>, _ reference: Result<Bitmap, any Error>, _ what: String) {
            switch (fast, reference) {
            case (.success(let a), .success(let b)): if !a.hasSamePixels(as: b) { fatalError("the PNG fast path differs from libspng (\(what))") }
            case (.failure, .failure): break
            case (.success, .failure(let error)): if !"\(error)".contains("IDAT stream error") { fatalError("the PNG fast path decodes what libspng refuses (\(what)): \(error)") }
            case (.failure(let error), .success): fatalError("the PNG fast path refuses what libspng decodes (\(what)): \(error)")
            }
        }
        for format in [Bitmap.PixelFormat.rgba8, .gray8] {
            agree(Result { try PNGCodec.decode(data, info: info, pixelFormat: format, fastPath: true) },
                  Result { try PNGCodec.decode(data, info: info, pixelFormat: format, fastPath: false) }, "\(format)")
        }
        if info.width >= 2, info.height >= 2 {
            let half = (width: (info.width + 1) / 2, height: (info.height + 1) / 2)
            agree(Result { try PNGCodec.decode(data, info: info, covering: half, pixelFormat: .rgba8, fastPath: true) },
                  Result { try PNGCodec.decode(data, info: info, covering: half, pixelFormat: .rgba8, fastPath: false) }, "shrunk by 2")
        }
    }
    // A later page (TIFF, PDF) or frame (GIF, WebP), read as a still.
    if info.frameCount > 1, let second = try? ImageDecoder.info(of: data, limits: fuzzLimits, page: 1) {
        _ = try? ImageDecoder.decode(data, info: second, covering: (32, 32), limits: fuzzLimits)
    }
    if info.isAnimated {
        _ = try? AnimationReader.frames(of: data, info: info, limits: fuzzLimits) { frame in
            _ = try Resize(width: 8, height: 8, mode: .fit).process(frame.image)
        }
    }
    return 0
}

/// Writes a few valid seed files (one per format) into $EASEL_FUZZ_SEEDS, if set.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> CInt {
    guard let directory = ProcessInfo.processInfo.environment["EASEL_FUZZ_SEEDS"] else { return 0 }
    var bitmap = Bitmap(width: 24, height: 16, pixelFormat: .rgba8)
    let rowBytes = bitmap.rowBytes
    bitmap.withUnsafeMutableBytes { bytes in
        for y in 0..<16 { for x in 0..<24 {
            let o = y * rowBytes + x * 4
            bytes[o] = UInt8(x * 10); bytes[o + 1] = UInt8(y * 15); bytes[o + 2] = 99; bytes[o + 3] = UInt8(255 - x)
        } }
    }
    let seeds: [(String, ImageEncoder.Options)] = [
        ("seed.jpg", .jpeg(quality: 80)), ("seed-progressive.jpg", .jpeg(quality: 60, progressive: true)),
        ("seed.png", .png()), ("seed.webp", .webp(quality: 70)), ("seed-lossless.webp", .webp(lossless: true)),
        ("seed.avif", .avif(quality: 40, speed: 10)), ("seed.bmp", .bmp), ("seed.ico", .ico),
        ("seed.jxl", .jxl(quality: 80, effort: 1)), ("seed-lossless.jxl", .jxl(quality: 100, effort: 1)),
    ]
    for (name, options) in seeds {
        try? ImageEncoder.encode(bitmap, as: options).write(to: URL(fileURLWithPath: directory + "/" + name))
    }
    // PNGs the fast path takes as they are: RGB (from an opaque bitmap) and gray (RGBA is seed.png);
    // a 24-bit BMP, the same bitmap as an icon's BMP entry (height doubled, an AND mask), and an
    // 8-bit RLE BMP.
    if let jpeg = try? ImageEncoder.encode(bitmap, as: .jpeg(quality: 90)), let opaque = try? ImageDecoder.decode(jpeg) {
        let bmp = BMPCodec.encode(opaque)
        try? bmp.write(to: URL(fileURLWithPath: directory + "/seed-24.bmp"))
        var dib = [UInt8](bmp.dropFirst(14))
        dib[8] = UInt8(opaque.height * 2)
        dib += [UInt8](repeating: 0x0F, count: 4 * opaque.height)
        var icon: [UInt8] = [0, 0, 1, 0, 1, 0, UInt8(opaque.width), UInt8(opaque.height), 0, 0, 1, 0, 24, 0]
        icon += withUnsafeBytes(of: UInt32(dib.count).littleEndian, Array.init) + withUnsafeBytes(of: UInt32(22).littleEndian, Array.init)
        try? Data(icon + dib).write(to: URL(fileURLWithPath: directory + "/seed-bmp-entry.ico"))
        var rle: [UInt8] = Array("BM".utf8) + [UInt8](repeating: 0, count: 12)
        rle += [40, 0, 0, 0, 8, 0, 0, 0, 4, 0, 0, 0, 1, 0, 8, 0, 1, 0, 0, 0] + [UInt8](repeating: 0, count: 12) + [3, 0, 0, 0, 0, 0, 0, 0]
        rle += [255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0]
        rle[10] = UInt8(rle.count)
        rle += [4, 0, 0, 3, 1, 2, 0, 0, 0, 0, 0, 2, 1, 1, 3, 2, 0, 1]
        try? Data(rle).write(to: URL(fileURLWithPath: directory + "/seed-rle8.bmp"))
        try? ImageEncoder.encode(opaque, as: .png()).write(to: URL(fileURLWithPath: directory + "/seed-rgb.png"))
        try? ImageEncoder.encode(opaque.converted(to: .gray8), as: .png()).write(to: URL(fileURLWithPath: directory + "/seed-gray.png"))
    }
    // Progressive JPEGs big enough to decode at 1/8 (the DC-only path): 4:2:0, 4:4:4 and gray.
    if let large = try? Resize(width: 96, height: 64, mode: .exact, upscale: true).process(bitmap) {
        try? JPEGCodec.encode(large, quality: 75, progressive: true).write(to: URL(fileURLWithPath: directory + "/seed-progressive-420.jpg"))
        try? JPEGCodec.encode(large, quality: 75, progressive: true, fullChroma: true)
            .write(to: URL(fileURLWithPath: directory + "/seed-progressive-444.jpg"))
        try? JPEGCodec.encode(large.converted(to: .gray8), quality: 75, progressive: true)
            .write(to: URL(fileURLWithPath: directory + "/seed-progressive-gray.jpg"))
    }
    // Embedded profiles: Display P3 in a JPEG and a PNG, a CMYK JPEG with a CMYK profile.
    if let p3 = ICCProfile.displayP3 {
        try? ImageEncoder.encode(bitmap, as: .jpeg(quality: 70), iccProfile: p3.data).write(to: URL(fileURLWithPath: directory + "/seed-p3.jpg"))
        try? ImageEncoder.encode(bitmap, as: .png(), iccProfile: p3.data).write(to: URL(fileURLWithPath: directory + "/seed-p3.png"))
        try? p3.data.write(to: URL(fileURLWithPath: directory + "/seed.icc"))
    }
    if let cmyk = ICCProfile.testCMYK(gamma: 1.5) {
        try? JPEGCodec.encodeCMYK(width: 16, height: 8, quality: 70, iccProfile: cmyk.data) { x, y in (UInt8(x * 16), UInt8(y * 30), 40, 10) }
            .write(to: URL(fileURLWithPath: directory + "/seed-cmyk.jpg"))
    }
    // Animations: a three-frame GIF and the same as animated WebP.
    let frames = (0..<3).map { i in (0..<(12 * 8)).map { UInt8(($0 + i) % 3) } }
    if let gif = try? GIFCodec.encodeAnimation(width: 12, height: 8, frames: frames, palette: [255, 0, 0, 0, 255, 0, 0, 0, 255],
                                               delays: [5, 6, 7]) {
        try? gif.write(to: URL(fileURLWithPath: directory + "/seed-animated.gif"))
        if let info = try? ImageDecoder.info(of: gif) {
            var decoded: [AnimationFrame] = []
            _ = try? AnimationReader.frames(of: gif, info: info) { decoded.append($0) }
            try? AnimationWriter.webp(decoded).write(to: URL(fileURLWithPath: directory + "/seed-animated.webp"))
        }
    }
    // A 2×1 GIF89a with a two-colour table (LZW data written by hand).
    let gif: [UInt8] = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 2, 0, 1, 0, 0x80, 0, 0, 255, 0, 0, 0, 0, 255,
                        0x2C, 0, 0, 0, 0, 2, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0, 0x3B]
    try? Data(gif).write(to: URL(fileURLWithPath: directory + "/seed.gif"))
    return 0
}
