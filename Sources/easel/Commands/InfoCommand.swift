import ArgumentParser
import EaselCodecs
import Foundation

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Print format, size and EXIF facts of images, without decoding them.")

    @Argument(help: "Image files.") var files: [String]
    @Flag(help: "Print one JSON object per line.") var json = false
    @Flag(help: "Also decode a tiny preview (≤ 100 px, shrink-on-load) and print the dominant colour, BlurHash and ThumbHash.")
    var hash = false
    @Flag(help: "Also find faces (OpenCV's Haar cascades on a decode of at most 768 px) and print their boxes in the upright image's pixels.")
    var faces = false

    func run() throws {
        CommandRenderIsolation.start()
        var failed: [String] = []
        let budget = CommandMemoryBudget(bytes: CommandLimits.defaultMemoryBudget)
        for path in files {
            do {
                // (Mapped: a header read costs the pages it reads.)
                let file = try InputFile(path: path, limit: CommandLimits.maxInputBytes)
                let data = file.data
                // Facts of any size (a header that says 0×0 is still refused): only decoding
                // (`--hash`, `--faces`) is held to the command line's pixel limit.
                let info = try file.decoding { data in
                    try ImageDecoder.info(of: data, limits: DecodingLimits(maxPixels: .max, maxInputBytes: CommandLimits.maxInputBytes, maxFrames: .max))
                }
                var hashes: [String: String] = [:]
                if hash {
                    let side = 100
                    let decoded = try file.decoded(info: info, covering: Resize(width: side, height: side).minimumSourceSize(of: info), budget: budget)
                    let preview = try Resize(width: side, height: side).process(decoded)
                    let colour = Placeholder.dominantColor(preview)
                    hashes["dominantColor"] = String(format: "#%02x%02x%02x", colour.red, colour.green, colour.blue)
                    hashes["blurhash"] = try Placeholder.blurHash(preview)
                    hashes["thumbhash"] = try Placeholder.thumbHashBase64(preview)
                }
                var boxes: [FaceDetector.Box] = []
                if faces {
                    let need = FaceDetector.decodeNeed(sourceWidth: info.planningWidth, sourceHeight: info.planningHeight)
                    let decoded = try file.decoded(info: info, covering: need, budget: budget)
                    let fx = Double(info.uprightWidth) / Double(decoded.width), fy = Double(info.uprightHeight) / Double(decoded.height)
                    boxes = try FaceDetector.faces(in: decoded).map { box in
                        FaceDetector.Box(x: Int((Double(box.x) * fx).rounded()), y: Int((Double(box.y) * fy).rounded()),
                                         width: Int((Double(box.width) * fx).rounded()), height: Int((Double(box.height) * fy).rounded()))
                    }
                }
                print(json ? Self.json(path: path, info: info, bytes: data.count, hashes: hashes, faces: faces ? boxes : nil)
                      : Self.text(path: path, info: info, bytes: data.count)
                        + hashes.sorted { $0.key < $1.key }.map { ", \($0.key) \($0.value)" }.joined()
                        + (faces ? ", faces [" + boxes.map { "\($0.x),\($0.y) \($0.width)×\($0.height)" }.joined(separator: "; ") + "]" : ""))
            } catch {
                failed.append(path)
                FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
            }
        }
        if !failed.isEmpty { throw ExitCode(1) }
    }

    static func text(path: String, info: ImageInfo, bytes: Int) -> String {
        var parts = ["\(info.fileType) \(info.width)×\(info.height)", "\(bytes) bytes"]
        if info.isGrayscale { parts.append("grayscale") }
        if info.hasAlpha { parts.append("alpha") }
        if info.isProgressive { parts.append(info.fileType == .png ? "interlaced" : "progressive") }
        if info.bitDepth > 8 { parts.append("\(info.bitDepth)-bit") }
        if info.frameCount > 1 { parts.append("\(info.frameCount) \(info.fileType == .heic ? "images" : "frames")") }
        if !info.entrySizes.isEmpty { parts.append("also " + info.entrySizes.map { "\($0.width)×\($0.height)" }.joined(separator: ", ")) }
        if let video = info.video {
            parts.append("\(video.codec) video" + (video.duration.map { String(format: ", %.2f s", $0) } ?? "") + ", \(video.streams) stream\(video.streams == 1 ? "" : "s")")
        }
        switch info.colorProfile {
        case .none: break
        case .profile(let profile): parts.append("ICC profile \"\(printable(profile.description))\" (\(profile.colorSpace.rawValue.uppercased()))")
        case .damaged: parts.append("damaged ICC profile (ignored)")
        case .tooLarge(let size): parts.append("ICC profile of \(size) bytes (over the limit)")
        }
        if let turned = info.containerOrientation, turned != 1 {
            parts.append("orientation \(turned) from the container (upright \(info.uprightWidth)×\(info.uprightHeight))")
        }
        if info.containerOrientation == nil, let exif = info.exif {
            if exif.orientation != 1 { parts.append("orientation \(exif.orientation) (upright \(info.uprightWidth)×\(info.uprightHeight))") }
            if let make = exif.make { parts.append("make \(printable(make))") }
            if let model = exif.model { parts.append("model \(printable(model))") }
            if let date = exif.dateTaken { parts.append("taken \(printable(date))") }
            parts.append(exif.hasGPS ? "GPS" : "no GPS")
        }
        return "\(path): " + parts.joined(separator: ", ")
    }

    /// EXIF text with control characters (terminal escapes among them) replaced by "?".
    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
    }

    static func json(path: String, info: ImageInfo, bytes: Int, hashes: [String: String] = [:], faces: [FaceDetector.Box]? = nil) -> String {
        var object: [String: Any] = [
            "path": path, "format": info.fileType.rawValue, "width": info.width, "height": info.height, "bytes": bytes,
            "grayscale": info.isGrayscale, "alpha": info.hasAlpha, "progressive": info.isProgressive,
            "orientation": info.orientation, "uprightWidth": info.uprightWidth, "uprightHeight": info.uprightHeight,
        ]
        if info.bitDepth > 8 { object["bitDepth"] = info.bitDepth }
        if info.frameCount > 1 { object["frames"] = info.frameCount }
        switch info.colorProfile {
        case .none: break
        case .profile(let profile):
            object["icc"] = ["description": profile.description, "colorSpace": profile.colorSpace.rawValue, "bytes": profile.data.count] as [String: Any]
        case .damaged(let reason): object["icc"] = ["damaged": reason]
        case .tooLarge(let size): object["icc"] = ["tooLarge": size]
        }
        if let exif = info.exif {
            object["exif"] = ["make": exif.make ?? NSNull(), "model": exif.model ?? NSNull(),
                              "dateTaken": exif.dateTaken ?? NSNull(), "gps": exif.hasGPS] as [String: Any]
        }
        if let video = info.video {
            object["video"] = ["duration": video.duration ?? NSNull(), "codec": video.codec, "container": video.container,
                               "streams": video.streams, "pixelAspect": video.pixelAspect] as [String: Any]
        }
        object.merge(hashes) { $1 }
        if let faces { object["faces"] = faces.map { ["x": $0.x, "y": $0.y, "width": $0.width, "height": $0.height] } }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
