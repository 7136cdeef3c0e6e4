import EaselSupport
import ArgumentParser
import CMalloc
import Dispatch
import Easel
import EaselCodecs
import EaselPipeline
import EaselServer
import Foundation
import Synchronization

struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Make thumbnails: decode (shrinking JPEGs while decoding), resize with Lanczos-3, encode.",
        discussion: "Writes tn_<name>.<format> next to each input, or into --output-dir. Prints one line per file; exits 1 if any failed, naming them.")

    /// One name per idea, as in every URL style: `fill` covers the box and crops (it is
    /// `cover`), `stretch` distorts to it. (`fill` meant stretch here before.)
    enum Fit: String, ExpressibleByArgument, CaseIterable {
        case contain, cover, fill, stretch
        var mode: ResizeMode {
            switch self {
            case .contain: .fit
            case .cover, .fill: .fill
            case .stretch: .exact
            }
        }
        static let help: ArgumentHelp = "contain: fit inside; cover (or fill): fill the box and crop the centre; stretch: exactly the box, distorted."
    }

    @Argument(help: "Input images.") var inputs: [String]
    @Option(help: "Target box, WIDTHxHEIGHT.", transform: Self.parseSize) var size: Size = Size(width: 256, height: 256)
    @Option(help: Fit.help) var fit: Fit = .contain
    @Option(help: "Output format.") var format: ImageEncoding.Format = .jpeg
    @Option(help: "JPEG, WebP or AVIF quality, 1–100 (AVIF's scale is its own: 60 there looks like JPEG's 80).") var quality: Int?
    @Option(help: "JPEG chroma: 420 (half-resolution colour, the default) or 444 (full).") var chroma: Chroma = .c420
    @Option(help: "JPEG progressive: auto (over 256×256 pixels), on or off.") var progressive: Progressive = .auto
    @Flag(name: .customLong("first-frame"), help: "Of an animated GIF or WebP, keep only the first frame (animations stay animated otherwise, with --format webp or gif).")
    var firstFrame = false
    @Option(help: "The page of a PDF or TIFF, or the frame of an animated GIF or WebP (as a still), to make the thumbnail from; 0, the first, by default.")
    var page = 0
    @Option(name: .customLong("at"), help: "Of a video (MP4, MOV, WebM, MKV), the second of the frame to make the thumbnail from; 1, by default (the first frame of a shorter video).")
    var second: Double = VideoPosition.default.second
    @Flag(name: .customLong("keyframe"), help: "Of a video, the key frame at or before --at (faster: nothing after it is decoded).")
    var keyframe = false
    @Flag(name: .customLong("keep-copyright"), help: "Keep the source's EXIF Artist and Copyright (JPEG, PNG and WebP outputs); outputs carry no other metadata.")
    var keepCopyright = false
    @Flag(name: .customLong("keep-profile"), help: "Keep the source's ICC profile (embedded in JPEG and PNG outputs) instead of converting to sRGB.")
    var keepProfile = false
    @Option(name: .customLong("imgproxy"),
            help: "imgproxy processing options, as in an /imgproxy/ URL (e.g. 'rs:fill:300:200/g:sm/q:90'): each file made as `easel serve` makes that URL. Replaces --size and --fit; its format and quality, when it names them, win over --format and --quality.")
    var imgproxyOptions: String?
    @Option(name: .customLong("thumbor"),
            help: "thumbor options, as in a /thumbor/ URL (e.g. '300x200/smart/filters:grayscale()'): each file made as `easel serve` makes that URL, as --imgproxy.")
    var thumborOptions: String?

    enum Chroma: String, ExpressibleByArgument, CaseIterable {
        case c420 = "420", c444 = "444"
    }

    enum Progressive: String, ExpressibleByArgument, CaseIterable { case auto, on, off }
    @Option(name: .customLong("output-dir"), help: "Directory for the thumbnails.") var outputDir: String?
    @Option(help: "Files processed at once.") var jobs: Int = ProcessInfo.processInfo.activeProcessorCount
    @Option(name: .customLong("memory-budget"),
            help: "Bytes the files being made at once may take together, by each one's estimate from its header (e.g. 512MB, 2GB); a file that does not fit waits, one past it alone is refused. Default: a quarter of the machine's memory.",
            transform: Self.parseBudget)
    var memoryBudget: Int = CommandLimits.defaultMemoryBudget

    static func parseBudget(_ text: String) throws -> Int {
        guard let bytes = ServerConfiguration.byteCount(text), bytes > 0 else { throw ValidationError("not a byte count: \(text) (use e.g. 512MB)") }
        return bytes
    }

    struct Size: Sendable {
        var width: Int
        var height: Int
    }

    static func parseSize(_ text: String) throws -> Size {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0, width <= 16_384, height <= 16_384 else {
            throw ValidationError("not a size: \(text) (use e.g. 256x256)")
        }
        return Size(width: width, height: height)
    }

    func validate() throws {
        if let quality { guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1–100") } }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard page >= 0 else { throw ValidationError("--page is 0 or more (0: the first)") }
        guard second >= 0, second <= VideoPosition.maxSecond else { throw ValidationError("--at is 0–\(Int(VideoPosition.maxSecond)) seconds") }
        guard format != .svg else { throw ValidationError("--format svg: a thumbnail is pixels (the server serves SVG sources as SVG with f=svg)") }
        guard imgproxyOptions == nil || thumborOptions == nil else { throw ValidationError("--imgproxy or --thumbor, not both") }
        if imgproxyOptions != nil || thumborOptions != nil {
            // What the style's options say instead (pg:, vts:) is theirs to say; these would be ignored.
            let ignored = [("--page", page != 0), ("--at", second != VideoPosition.default.second), ("--keyframe", keyframe),
                           ("--keep-profile", keepProfile), ("--chroma", chroma != .c420), ("--progressive", progressive != .auto),
                           ("--first-frame", firstFrame)].filter(\.1).map(\.0)
            guard ignored.isEmpty else {
                throw ValidationError("\(ignored.joined(separator: ", ")) with --imgproxy or --thumbor: the style's own options say it (e.g. pg:, vts:)")
            }
        }
        _ = try plannedThumbnail()
    }

    /// The plan of `--imgproxy` or `--thumbor`, checked as the server checks it; nil without.
    func plannedThumbnail() throws -> PlannedThumbnail? {
        let parsed: PlanParsing.Parsed
        do {
            if let imgproxyOptions { parsed = try PlanParsing.imgproxy(imgproxyOptions) } else if let thumborOptions {
                parsed = try PlanParsing.thumbor(thumborOptions)
            } else {
                return nil
            }
        } catch {
            throw ValidationError("\(imgproxyOptions != nil ? "--imgproxy" : "--thumbor"): \(error)")
        }
        return try PlannedThumbnail(parsed, format: format, quality: quality, keepCopyright: keepCopyright)
    }

    func run() throws {
        CommandRenderIsolation.start()
        easel_tune_malloc_for_batch()
        // And pixel buffers up to the same 32 MiB from those arenas, not mapped per image.
        Bitmap.keepPixelBuffersInArenas(upTo: 32 << 20)
        if let outputDir { try FileManager.default.createDirectory(atPath: outputDir, withIntermediateDirectories: true) }
        let resize = Resize(width: size.width, height: size.height, mode: fit.mode)
        let progression: Bool? = switch progressive {
        case .auto: nil
        case .on: true
        case .off: false
        }
        let encoding: ImageEncoder.Options = switch format {
        case .jpeg: .jpeg(quality: quality ?? 80, progressive: progression, chroma: chroma == .c444 ? .full444 : .subsampled420)
        case .png: .png()
        case .webp: .webp(quality: quality ?? 80)
        case .avif: .avif(quality: quality ?? 60)
        case .jxl: .jxl(quality: quality ?? 82)
        case .gif: .gif
        case .ico: .ico
        case .bmp: .bmp
        case .heic: .heic(quality: quality ?? 60)
        case .svg: .png()  // refused by `validate()`: a thumbnail is pixels
        }
        let budget = CommandMemoryBudget(bytes: memoryBudget)
        let making = Making(resize: resize, encoding: encoding, keepProfile: keepProfile, animate: !firstFrame,
                            keepCopyright: keepCopyright, page: page, video: VideoPosition(second: second, keyframeOnly: keyframe), budget: budget)
        let planned = try plannedThumbnail()
        let workers = min(jobs, inputs.count)
        let results = ThumbnailResults(count: inputs.count, workers: workers)
        let next = NextIndex()
        let inputs = self.inputs
        let outputFormat = planned?.format ?? format
        let outputs = Self.outputPaths(for: inputs, outputDir: outputDir, fileExtension: outputFormat.fileExtension)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            while let index = next.take(below: inputs.count) {
                let input = inputs[index]
                let output: String
                switch outputs[index] {
                case .success(let path): output = path
                case .failure(let reason):
                    results.set(index, "\(input): \(reason.message)", failed: true, worker: worker)
                    continue
                }
                let started = DispatchTime.now().uptimeNanoseconds
                do {
                    let size = if let planned {
                        try planned.make(input: input, output: output, budget: budget)
                    } else {
                        try Self.thumbnail(input: input, output: output, making: making)
                    }
                    let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
                    results.set(index, "\(input) -> \(output) (\(size.width)×\(size.height), \(String(format: "%.1f", ms)) ms)", failed: false, worker: worker)
                } catch {
                    results.set(index, "\(input): \(error)", failed: true, worker: worker)
                }
            }
        }
        for line in results.lines { print(line) }
        let failures = results.failures.map { inputs[$0] }
        if !failures.isEmpty {
            FileHandle.standardError.write(Data("\(failures.count) of \(inputs.count) failed: \(failures.joined(separator: ", "))\n".utf8))
            throw ExitCode(1)
        }
    }

    struct OutputRefused: Error {
        let message: String
    }

    /// `tn_<name>.<ext>` for each input, next to it or in `outputDir`. Two different inputs
    /// that would write one file, or an output that is also an input, are refused rather than
    /// raced. (One input listed twice is fine: writes are atomic, and both write the same.)
    static func outputPaths(for inputs: [String], outputDir: String?, fileExtension: String) -> [Result<String, OutputRefused>] {
        let standardInputs = Set(inputs.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        var firstOwner: [String: String] = [:]
        return inputs.map { input in
            let url = URL(fileURLWithPath: input)
            let source = url.standardizedFileURL.path
            let name = "tn_" + url.deletingPathExtension().lastPathComponent + "." + fileExtension
            let output = URL(fileURLWithPath: (outputDir ?? url.deletingLastPathComponent().path) + "/" + name).standardizedFileURL.path
            if standardInputs.contains(output) {
                return .failure(OutputRefused(message: "its thumbnail \(output) would overwrite an input"))
            }
            if let owner = firstOwner[output], owner != source {
                return .failure(OutputRefused(message: "its thumbnail \(output) would overwrite the one of \(owner)"))
            }
            firstOwner[output] = source
            return .success(output)
        }
    }

    /// What the flags ask of every thumbnail of a run (without `--imgproxy`/`--thumbor`).
    struct Making: Sendable {
        var resize: Resize
        var encoding: ImageEncoder.Options
        /// Keep an embedded RGB profile in JPEG and PNG outputs instead of converting to sRGB.
        var keepProfile = false
        /// An animation to WebP or GIF keeps every frame.
        var animate = true
        var keepCopyright = false
        var page = 0
        var video = VideoPosition.default
        /// Shared by the files made at once.
        var budget = CommandMemoryBudget(bytes: CommandLimits.defaultMemoryBudget)
    }

    /// One thumbnail: decode covering what the resize needs, resize, flatten for JPEG, encode,
    /// write atomically (a temporary file renamed into place).
    /// Colour: converted to sRGB from an embedded profile, unless `keepProfile` (then the
    /// profile goes into JPEG and PNG outputs; WebP and AVIF outputs are always sRGB).
    static func thumbnail(input: String, output: String, making: Making) throws -> (width: Int, height: Int) {
        let file = try InputFile(path: input, limit: CommandLimits.maxInputBytes)
        // Written only once the file is known not to have changed while it was read.
        let made = try file.decoding { data in try thumbnail(file, data, making: making) }
        try made.bytes.write(to: URL(fileURLWithPath: output), options: .atomic)
        return (made.width, made.height)
    }

    private static func thumbnail(_ file: InputFile, _ data: Data, making: Making) throws -> (bytes: Data, width: Int, height: Int) {
        let (resize, encoding, page, limits) = (making.resize, making.encoding, making.page, CommandLimits.decoding)
        let info = try ImageDecoder.info(of: data, limits: limits, page: page, video: making.video)
        // An animation to WebP or GIF keeps every frame, each resized and encoded as it is read;
        // one over the frame or animation-pixel limits is made from its first frame, as before.
        let animationEncoder: (any AnimationEncoder)? = switch encoding {
        case .webp(let quality, let lossless): AnimatedWebPEncoder(quality: quality, lossless: lossless)
        case .gif: AnimatedGIFEncoder()
        default: nil
        }
        if making.animate, info.page == 0, info.isAnimated, let encoder = animationEncoder {
            var size = (width: 0, height: 0)
            let needed = CommandLimits.peakBytes(of: file, info: info, decodedSize: (info.uprightWidth, info.uprightHeight), animated: true)
            do {
                let bytes = try making.budget.withReservation(needed) {
                    try AnimationReader.frames(of: data, info: info, limits: limits) { frame in
                        var resized = frame
                        resized.image = try resize.process(frame.image)
                        size = (resized.image.width, resized.image.height)
                        try encoder.add(resized)
                    }
                    return try encoder.finish()
                }
                return (bytes, size.width, size.height)
            } catch CodecError.tooManyFrames, CodecError.tooManyAnimationPixels {}
        }
        let needed = resize.minimumSourceSize(of: info)
        // (Only an RGB profile describes the RGB pixels written: gray and CMYK sources are
        // always converted.)
        let keep = making.keepProfile && (encoding.fileType == .jpeg || encoding.fileType == .png)
            && info.colorProfile.profile?.colorSpace == .rgb
        let decodedSize = ImageDecoder.decodedSize(of: info, covering: needed)
        let peak = CommandLimits.peakBytes(of: file, info: info, decodedSize: decodedSize, animated: false)
        return try making.budget.withReservation(peak) {
            var bitmap = try ImageDecoder.decode(data, info: info, covering: needed, color: keep ? .keepSourceProfile : .convertToSRGB, limits: limits)
            bitmap = try resize.process(bitmap)
            if encoding.fileType == .jpeg, !bitmap.isKnownOpaque { bitmap = try Flatten().process(bitmap) }
            let bytes = try ImageEncoder.encode(bitmap, as: encoding, iccProfile: keep ? info.colorProfile.profile?.data : nil,
                                                rights: making.keepCopyright ? RightsMetadata(info.exif) : nil)
            return (bytes, bitmap.width, bitmap.height)
        }
    }
}

/// The next input for a worker to take: one atomic add per image, no lock shared by the workers.
final class NextIndex: Sendable {
    private let value = Atomic<Int>(0)
    func take(below count: Int) -> Int? {
        let index = value.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < count ? index : nil
    }
}

/// Result lines in input order. Each worker writes only its own list (its lock is never
/// contended), so no lock is shared across workers per image; the lists are merged at the end.
final class ThumbnailResults: Sendable {
    private let perWorker: [Locked<[(index: Int, line: String, failed: Bool)]>]
    private let count: Int
    init(count: Int, workers: Int) {
        self.count = count
        perWorker = (0..<max(1, workers)).map { _ in Locked([]) }
    }
    func set(_ index: Int, _ line: String, failed: Bool, worker: Int) {
        perWorker[worker].withLock { $0.append((index, line, failed)) }
    }
    private var all: [(index: Int, line: String, failed: Bool)] { perWorker.flatMap { list in list.withLock { $0 } } }
    var lines: [String] {
        var lines = Array(repeating: "", count: count)
        for entry in all { lines[entry.index] = entry.line }
        return lines
    }
    var failures: [Int] { all.filter(\.failed).map(\.index).sorted() }
}

/// The one output-format type (the pipeline's, every URL style's and the server's) names the
/// CLI's `--format` too.
/// `--format` takes every name `FormatRegistry` gives an output format (`jpg`, `heif`…).
extension ImageEncoding.Format: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
}
