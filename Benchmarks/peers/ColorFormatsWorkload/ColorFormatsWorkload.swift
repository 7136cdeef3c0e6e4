import EaselCodecs
import Foundation

/// The Swift side of peers/color-and-formats.sh and peers/formats-in.sh, in process, one
/// thread, release build.
///
///     ColorFormatsWorkload prepare SAMPLE.jpg... OUTDIR   camera-size sRGB and Display P3 JPEGs (2560 wide)
///     ColorFormatsWorkload icc REPS FILE...               256 px thumbnails of P3 JPEGs, converted vs not
///     ColorFormatsWorkload avif QUALITY SPEED REPS FILE.png...   AVIF encodes of 256 px thumbnails
///     ColorFormatsWorkload decode REPS FILE...            decodes (HEIC, AVIF, TIFF, JPEG XL…) at full size
///     ColorFormatsWorkload render SIZE REPS FILE...       decodes covering SIZE×SIZE (SVG and PDF: rendered there)
///     ColorFormatsWorkload jxl QUALITY EFFORT REPS FILE.png...   JPEG XL encodes of 256 px thumbnails
///     ColorFormatsWorkload filters REPS FILE.jpg...       256 px JPEG thumbnails, plain and with each
///                                                         thumbor/imgproxy filter after the resize
///
/// Prints one JSON object.
@main
struct ColorFormatsWorkload {
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func emit(_ object: [String: Any]) {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }

    static func thumbnail(_ data: Data, color: ColorHandling) throws -> Data {
        let info = try ImageDecoder.info(of: data)
        let resize = Resize(width: 256, height: 256, mode: .fit)
        let needed = resize.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
        let bitmap = try resize.process(try ImageDecoder.decode(data, info: info, covering: needed, color: color))
        return try ImageEncoder.encode(bitmap, as: .jpeg(quality: 80))
    }

    static func main() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard !arguments.isEmpty else { FileHandle.standardError.write(Data("usage: see the source\n".utf8)); exit(2) }
        let mode = arguments.removeFirst()
        switch mode {
        case "prepare":
            let output = arguments.removeLast()
            let p3 = ICCProfile.displayP3!
            for path in arguments {
                let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
                let source = try ImageDecoder.decode(try Data(contentsOf: URL(fileURLWithPath: path)))
                let large = try Resize(width: 2560, height: 2560 * source.height / source.width, mode: .exact).process(source)
                try ImageEncoder.encode(large, as: .jpeg(quality: 90)).write(to: URL(fileURLWithPath: "\(output)/\(name)-srgb.jpg"))
                let wide = ColorConversion.convert(large, from: nil, to: p3)!
                try ImageEncoder.encode(wide, as: .jpeg(quality: 90), iccProfile: p3.data).write(to: URL(fileURLWithPath: "\(output)/\(name)-p3.jpg"))
                let thumb = try Resize(width: 256, height: 256, mode: .fit).process(large)
                try ImageEncoder.encode(thumb, as: .png()).write(to: URL(fileURLWithPath: "\(output)/\(name)-256.png"))
            }
            emit(["prepared": arguments.count])
        case "icc":
            let reps = Int(arguments.removeFirst())!
            let files = try arguments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            var converted: [Double] = [], kept: [Double] = []
            for _ in 0..<reps {
                for data in files {
                    // Interleaved, so both see the same machine state.
                    converted.append(try seconds { _ = try thumbnail(data, color: .convertToSRGB) })
                    kept.append(try seconds { _ = try thumbnail(data, color: .keepSourceProfile) })
                }
            }
            let total = (converted.reduce(0, +), kept.reduce(0, +))
            emit(["thumbnails": converted.count, "convertedMedianMs": median(converted) * 1000, "unconvertedMedianMs": median(kept) * 1000,
                  "convertedTotalS": total.0, "unconvertedTotalS": total.1, "overheadPercent": (total.0 / total.1 - 1) * 100])
        case "avif":
            let quality = Int(arguments.removeFirst())!, speed = Int(arguments.removeFirst())!, reps = Int(arguments.removeFirst())!
            let bitmaps = try arguments.map { try ImageDecoder.decode(try Data(contentsOf: URL(fileURLWithPath: $0))) }
            var times: [Double] = []
            var bytes = 0
            var outputs: [String] = []
            for rep in 0..<reps {
                for (index, bitmap) in bitmaps.enumerated() {
                    var data = Data()
                    times.append(try seconds { data = try ImageEncoder.encode(bitmap, as: .avif(quality: quality, speed: speed)) })
                    if rep == 0 {
                        bytes += data.count
                        let path = arguments[index] + ".easel.avif"
                        try data.write(to: URL(fileURLWithPath: path))
                        outputs.append(path)
                    }
                }
            }
            emit(["encodes": times.count, "medianMs": median(times) * 1000, "totalS": times.reduce(0, +), "bytes": bytes, "outputs": outputs])
        case "decode":
            let reps = Int(arguments.removeFirst())!
            let files = try arguments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            var times: [Double] = []
            for _ in 0..<reps { for data in files { times.append(try seconds { _ = try ImageDecoder.decode(data) }) } }
            emit(["decodes": times.count, "medianMs": median(times) * 1000, "totalS": times.reduce(0, +)])
        case "jxl":
            // Each PNG encoded as JPEG XL at QUALITY and EFFORT, REPS times; the first pass's
            // files are written next to the inputs (.easel.jxl).
            let quality = Int(arguments.removeFirst())!, effort = Int(arguments.removeFirst())!, reps = Int(arguments.removeFirst())!
            let bitmaps = try arguments.map { try ImageDecoder.decode(try Data(contentsOf: URL(fileURLWithPath: $0))) }
            var times: [Double] = []
            var bytes = 0
            for rep in 0..<reps {
                for (index, bitmap) in bitmaps.enumerated() {
                    var data = Data()
                    times.append(try seconds { data = try ImageEncoder.encode(bitmap, as: .jxl(quality: quality, effort: effort)) })
                    if rep == 0 {
                        bytes += data.count
                        try data.write(to: URL(fileURLWithPath: arguments[index] + ".easel.jxl"))
                    }
                }
            }
            emit(["encodes": times.count, "medianMs": median(times) * 1000, "totalS": times.reduce(0, +), "bytes": bytes])
        case "filters":
            // A whole thumbnail (decode shrunk on load, resize to 256, the filter, JPEG at 80)
            // with each filter, against the same without: what each adds.
            let reps = Int(arguments.removeFirst())!
            let files = try arguments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            let curve = try ChannelCurves.curve(all: [(0, 0), (64, 80), (192, 200), (255, 255)], red: [(0, 20), (255, 235)],
                                                green: [(0, 0), (128, 140), (255, 255)], blue: [(0, 0), (255, 255)])
            let filters: [(String, (any ImageProcessor)?)] = [
                ("none", nil), ("brightness(10)", ChannelCurves.brightness(10)), ("contrast(10)", ChannelCurves.contrast(10)),
                ("rgb(10,-10,20)", ChannelCurves.rgb(red: 10, green: -10, blue: 20)),
                ("colorize(50,0,100,ff0000)", ChannelCurves.colorize(red: 50, green: 0, blue: 100, fill: (255, 0, 0))),
                ("curve(4 lists)", curve), ("saturation(1.5)", try Saturation(change: 1.5)), ("equalize()", Equalize()),
                ("noise(20)", try Noise(amount: 20)), ("convolution(3x3)", try Convolution(weights: [1, 2, 1, 2, 4, 2, 1, 2, 1], columns: 3, normalize: true)),
                ("convolution(11x11)", try Convolution(weights: [Double](repeating: 1, count: 121), columns: 11, normalize: true)),
                ("rotate(90)", try QuarterTurn(degrees: 90)), ("proportion(0.5)", try Scale(factor: 0.5)),
                ("pixelate(8)", try Pixelate(size: 8)), ("padding(10)", try Border(top: 10, right: 10, bottom: 10, left: 10)),
                ("fit-in full", FitIn(width: 256, height: 256, adaptive: true, full: true)),
            ]
            var results: [[String: Any]] = []
            for (name, filter) in filters {
                var times: [Double] = []
                for _ in 0..<reps {
                    for data in files {
                        times.append(try seconds {
                            let info = try ImageDecoder.info(of: data)
                            let resize = Resize(width: 256, height: 256, mode: .fit)
                            let needed = resize.minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)
                            var bitmap = try resize.process(try ImageDecoder.decode(data, info: info, covering: needed))
                            if let filter { bitmap = try filter.process(bitmap) }
                            _ = try ImageEncoder.encode(bitmap, as: .jpeg(quality: 80))
                        })
                    }
                }
                results.append(["filter": name, "medianMs": median(times) * 1000, "totalS": times.reduce(0, +)])
            }
            emit(["thumbnails": files.count * reps, "results": results])
        case "render":
            // Each file decoded covering SIZE×SIZE (an SVG is rendered there), REPS times.
            let size = Int(arguments.removeFirst())!, reps = Int(arguments.removeFirst())!
            let files = try arguments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            var times: [Double] = []
            for _ in 0..<reps {
                for data in files { times.append(try seconds { _ = try ImageDecoder.decode(data, covering: (size, size)) }) }
            }
            emit(["decodes": times.count, "medianMs": median(times) * 1000, "totalS": times.reduce(0, +)])
        default:
            FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
            exit(2)
        }
    }
}
