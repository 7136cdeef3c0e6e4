import ArgumentParser
import Easel
import EaselPipeline
import Foundation

/// Options shared by the commands that run the pipeline.
struct PipelineOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "Cache directory. Default: $XDG_CACHE_HOME/easel/pipeline (or ~/.cache/easel/pipeline).")
    var cacheDir: String?

    var cacheDirectory: URL {
        cacheDir.map { URL(fileURLWithPath: $0) } ?? DiskCache.defaultRootDirectory.appendingPathComponent("pipeline")
    }

    /// A pipeline with the default formats, HTTP and file sources (any local path: the user
    /// running the command names it).
    func makePipeline(downloads: Int = 6) throws -> ImagePipeline {
        var configuration = ImagePipeline.Configuration(
            cacheDirectory: cacheDirectory, fetchers: [HTTPFetcher(), FileFetcher(root: URL(fileURLWithPath: "/"))])
        configuration.maximumConcurrentDownloads = downloads
        return try ImagePipeline(configuration: configuration)
    }

    /// A URL for an http(s) or file URL string, or a local path.
    static func source(_ text: String) -> URL {
        if let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https", "file"].contains(scheme) { return url }
        return URL(fileURLWithPath: text).standardizedFileURL
    }
}

struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load one image through the pipeline and say which tier answered and how long it took.",
        discussion: "Tiers: memory, table, diskVariant, diskOriginal, network. Named formats: \(ImageFormat.defaults.map(\.name).joined(separator: ", ")).")

    @Argument(help: "An http(s) URL, a file URL or a path.") var source: String
    @Option(help: "A named format.") var format: String?
    @Option(help: "An ad-hoc size, WIDTHxHEIGHT (instead of --format).", transform: ThumbnailCommand.parseSize)
    var size: ThumbnailCommand.Size?
    @Option(help: "With --size. contain: fit inside; cover (or fill): fill the box and crop the centre; stretch: exactly the box, distorted.")
    var fit: ThumbnailCommand.Fit = .contain
    @Option(name: [.customShort("o"), .long], help: "Write the image here (.jpg, .png or .webp).") var output: String?
    @Flag(help: "Skip the caches and fetch from the origin.") var reload = false
    @Option(help: "The page of a PDF or TIFF, or the frame of an animated GIF or WebP, to load (0, the first, by default).")
    var page = 0
    @OptionGroup var options: PipelineOptions

    func validate() throws {
        guard page >= 0 else { throw ValidationError("--page is 0 or more (0: the first)") }
        if format != nil, size != nil { throw ValidationError("use --format or --size, not both") }
        if let format, ImageFormat.defaults.first(where: { $0.name == format }) == nil {
            throw ValidationError("no format named \(format) (\(ImageFormat.defaults.map(\.name).joined(separator: ", ")))")
        }
    }

    func run() async throws {
        CommandRenderIsolation.start()
        let pipeline = try options.makePipeline()
        let processing: ImageRequest.Processing
        if let format {
            processing = .format(format)
        } else if let size {
            processing = .processors([Resize(width: size.width, height: size.height, mode: fit.mode)])
        } else {
            processing = .original
        }
        var request = ImageRequest(url: PipelineOptions.source(source), processing: processing, cachePolicy: reload ? .reload : .useCache)
        request.page = page
        let start = ContinuousClock.now
        do {
            let response = try await pipeline.image(for: request)
            let ms = (ContinuousClock.now - start).seconds * 1000
            print("\(source): \(response.image.width)×\(response.image.height) from \(response.tier.rawValue) in \(String(format: "%.2f", ms)) ms")
            if let output { try write(response.image, to: output) }
        } catch {
            await pipeline.close()
            FileHandle.standardError.write(Data("\(source): \(error)\n".utf8))
            throw ExitCode(1)
        }
        await pipeline.close()
    }

    private func write(_ image: Bitmap, to path: String) throws {
        let written = FormatRegistry.entries.filter { $0.capabilities.contains(.encode) }
        guard let entry = FormatRegistry.forExtension(URL(fileURLWithPath: path).pathExtension), entry.capabilities.contains(.encode),
              let encoding = ImageEncoder.Options(entry.type) else {
            throw ValidationError("-o needs a file name ending in ." + written.map(\.fileExtension).joined(separator: ", ."))
        }
        let flattened = encoding.fileType == .jpeg && !image.isKnownOpaque ? try Flatten().process(image) : image
        try ImageEncoder.encode(flattened, as: encoding).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}

struct WarmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "warm",
        abstract: "Prefetch every image of a list into the caches, with a progress bar.",
        discussion: "LIST-FILE has one URL or path per line; blank lines and lines starting with # are skipped. Exits 1 if any image failed, after listing them.")

    @Argument(help: "The list file.") var listFile: String
    @Option(help: "A named format.") var format: String
    @Option(help: "Images loaded at once.") var concurrency: Int = 8
    @OptionGroup var options: PipelineOptions

    func validate() throws {
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        if ImageFormat.defaults.first(where: { $0.name == format }) == nil {
            throw ValidationError("no format named \(format) (\(ImageFormat.defaults.map(\.name).joined(separator: ", ")))")
        }
    }

    func run() async throws {
        CommandRenderIsolation.start()
        let text: String
        do { text = try String(contentsOfFile: listFile, encoding: .utf8) } catch {
            throw ValidationError("cannot read \(listFile): \(error.localizedDescription)")
        }
        let sources = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        let pipeline = try options.makePipeline(downloads: concurrency)
        let progress = ProgressBar(total: sources.count)
        let format = self.format
        let failures = await withTaskGroup(of: (String, PipelineError?).self) { group -> [(String, PipelineError)] in
            var next = 0
            var failures: [(String, PipelineError)] = []
            func add() {
                guard next < sources.count else { return }
                let source = sources[next]
                next += 1
                group.addTask {
                    let request = ImageRequest(url: PipelineOptions.source(source), format: format, priority: .low)
                    do throws(PipelineError) {
                        _ = try await pipeline.image(for: request)
                        return (source, nil)
                    } catch {
                        return (source, error)
                    }
                }
            }
            for _ in 0..<concurrency { add() }
            for await (source, error) in group {
                if let error { failures.append((source, error)) }
                progress.advance(failed: error != nil)
                add()
            }
            return failures
        }
        progress.finish()
        await pipeline.close()
        print(progress.summary)
        if !failures.isEmpty {
            FileHandle.standardError.write(Data("\(failures.count) failed:\n".utf8))
            for (source, error) in failures { FileHandle.standardError.write(Data("  \(source): \(error)\n".utf8)) }
            throw ExitCode(1)
        }
    }
}

/// A progress line on standard error: count, rate and ETA, redrawn in place on a terminal (at
/// most 10 times a second), and a plain line every 10 % otherwise.
final class ProgressBar: @unchecked Sendable {
    // @unchecked: used only from the task that runs the command (`advance` and `finish` are
    // called from the task group's consuming loop, never concurrently).
    let total: Int
    private(set) var done = 0
    private(set) var failed = 0
    private let start = ContinuousClock.now
    private var lastDraw = ContinuousClock.now - .seconds(1)
    private var lastDecile = 0
    private let isTerminal = isatty(STDERR_FILENO) == 1

    init(total: Int) { self.total = total }

    var elapsed: Double { (ContinuousClock.now - start).seconds }

    func advance(failed: Bool) {
        done += 1
        if failed { self.failed += 1 }
        if isTerminal {
            guard ContinuousClock.now - lastDraw >= .milliseconds(100) || done == total else { return }
            lastDraw = .now
            FileHandle.standardError.write(Data(("\r" + line(width: 30)).utf8))
        } else if total > 0, done * 10 / total > lastDecile {
            lastDecile = done * 10 / total
            FileHandle.standardError.write(Data((line(width: 20) + "\n").utf8))
        }
    }

    func line(width: Int) -> String {
        let filled = total == 0 ? width : done * width / total
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let eta = rate > 0 ? Double(total - done) / rate : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        return "[\(bar)] \(done)/\(total) \(String(format: "%.1f", rate))/s ETA \(String(format: "%.0f", eta))s" + (failed > 0 ? " (\(failed) failed)" : "")
    }

    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    var summary: String {
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        return "warmed \(done - failed) of \(total) in \(String(format: "%.1f", elapsed)) s (\(String(format: "%.1f", rate))/s)"
            + (failed > 0 ? ", \(failed) failed" : "")
    }
}
