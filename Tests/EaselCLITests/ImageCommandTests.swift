import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

@Suite("easel info and easel thumbnail", .timeLimit(.minutes(1)))
struct ImageCommandTests {
    /// A directory with a JPEG, a PNG with alpha, and a file that is not an image.
    func makeInputs() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("easel-img-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var photo = Bitmap(width: 640, height: 480, pixelFormat: .rgba8)
        let rowBytes = photo.rowBytes
        photo.withUnsafeMutableBytes { bytes in
            for y in 0..<480 { for x in 0..<640 {
                let o = y * rowBytes + x * 4
                bytes[o] = UInt8(x % 256); bytes[o + 1] = UInt8(y % 256); bytes[o + 2] = 128; bytes[o + 3] = 255
            } }
        }
        try ImageEncoder.encode(photo, as: .jpeg(quality: 85, progressive: true)).write(to: directory.appendingPathComponent("photo.jpg"))
        var logo = Bitmap(width: 100, height: 300, pixelFormat: .rgba8) // fully transparent
        logo.withUnsafeMutableBytes { $0[3] = 255 }
        try ImageEncoder.encode(logo, as: .png()).write(to: directory.appendingPathComponent("logo.png"))
        try Data("not an image".utf8).write(to: directory.appendingPathComponent("notes.jpg"))
        return directory
    }

    /// A header that says 0 pixels "has no pixels" (not "exceeds the limit"); a header past the
    /// decoding limit is still described; a GIF's frames are counted without overflow.
    @Test func infoSaysAZeroPixelHeaderHasNoPixels() async throws {
        let directory = try makeInputs()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A HEIC (Debian's heif-enc) whose every `ispe` says 0×0: libheif reports that size, so
        // only Easel's check stands between it and the geometry (libspng, libjpeg and giflib
        // refuse such PNG, JPEG and GIF headers themselves, as corrupt).
        let source = directory.appendingPathComponent("in.png"), heic = directory.appendingPathComponent("empty.heic")
        try ImageEncoder.encode(Bitmap(width: 16, height: 12, pixelFormat: .rgba8), as: .png()).write(to: source)
        let encoder = Process()
        encoder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        encoder.arguments = ["heif-enc", "-o", heic.path, source.path]
        encoder.standardOutput = FileHandle.nullDevice
        encoder.standardError = FileHandle.nullDevice
        try ChildProcesses.run(encoder)
        encoder.waitUntilExit()
        try #require(encoder.terminationStatus == 0, "heif-enc failed")
        var bytes = [UInt8](try Data(contentsOf: heic))
        for index in 0..<(bytes.count - 16) where bytes[index..<index + 4] == [0x69, 0x73, 0x70, 0x65] {  // "ispe"
            for offset in 8..<16 { bytes[index + offset] = 0 }
        }
        try Data(bytes).write(to: heic)
        var huge = try ImageEncoder.encode(Bitmap(width: 4, height: 3, pixelFormat: .rgba8), as: .jpeg())
        let sof = try #require((0..<(huge.count - 1)).first { huge[$0] == 0xFF && huge[$0 + 1] == 0xC0 })
        huge[sof + 5] = 0xFF; huge[sof + 6] = 0xDC; huge[sof + 7] = 0xFF; huge[sof + 8] = 0xDC  // 65500×65500
        try huge.write(to: directory.appendingPathComponent("huge.jpg"))
        // A 1×1 GIF89a.
        try Data([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF,
                  0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0, 0x3B]).write(to: directory.appendingPathComponent("dot.gif"))
        let result = try await runEasel(["info", heic.path,
                                         directory.appendingPathComponent("huge.jpg").path, directory.appendingPathComponent("dot.gif").path])
        #expect(result.status == 1)
        #expect(result.error.contains("empty.heic: image has no pixels"), "\(result.error)")
        #expect(!result.error.contains("exceeds the limit"))
        #expect(result.output.contains("huge.jpg: JPEG 65500×65500"), "\(result.output)")
        #expect(result.output.contains("dot.gif: GIF 1×1"), "\(result.output)")
        // Thumbnailing the empty one says the same, and nothing is written.
        let thumbnail = try await runEasel(["thumbnail", heic.path])
        #expect(thumbnail.status == 1 && thumbnail.output.contains("has no pixels"), "\(thumbnail.output)")
    }

    @Test func infoDescribesEachFileAndNamesFailures() async throws {
        let directory = try makeInputs()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await runEasel(["info", directory.appendingPathComponent("photo.jpg").path,
                                         directory.appendingPathComponent("logo.png").path,
                                         directory.appendingPathComponent("notes.jpg").path])
        #expect(result.status == 1)
        #expect(result.output.contains("photo.jpg: JPEG 640×480") && result.output.contains("progressive"))
        #expect(result.output.contains("logo.png: PNG 100×300") && result.output.contains("alpha"))
        #expect(result.error.contains("notes.jpg: not a known image format"))
        let json = try await runEasel(["info", "--json", directory.appendingPathComponent("photo.jpg").path])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(object?["width"] as? Int == 640 && object?["format"] as? String == "JPEG")
    }

    @Test func infoHashPrintsThePlaceholdersOfATinyDecode() async throws {
        let directory = try makeInputs()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("photo.jpg").path
        let json = try await runEasel(["info", "--json", "--hash", path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        // The same pixels as the library's preview: decoded to cover 100 px, then fitted.
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let info = try ImageDecoder.info(of: data)
        let preview = try Resize(width: 100, height: 100).process(try ImageDecoder.decode(data, covering: Resize(width: 100, height: 100)
            .minimumSourceSize(sourceWidth: info.uprightWidth, sourceHeight: info.uprightHeight)))
        #expect(object["blurhash"] as? String == (try Placeholder.blurHash(preview)))
        #expect(object["thumbhash"] as? String == (try Placeholder.thumbHashBase64(preview)))
        #expect((object["dominantColor"] as? String)?.hasPrefix("#") == true)
        let text = try await runEasel(["info", "--hash", path])
        #expect(text.status == 0 && text.output.contains("blurhash ") && text.output.contains("thumbhash "))
    }

    @Test func signPrintsURLsInTheThreeStyles() async throws {
        let native = try await runEasel(["sign", "native", "/images/w=10,h=10/a.jpg", "--key", "00ff", "--salt", "", "--expires-at", "4000000000"])
        #expect(native.status == 0 && native.output.hasPrefix("/images/w=10,h=10/a.jpg?exp=4000000000&s="))
        // thumbor's own example key and path, signed as libthumbor signs (checked against it in make compat-test).
        let thumbor = try await runEasel(["sign", "thumbor", "300x200/smart/a.jpg", "--key", "MY_SECURE_KEY"])
        #expect(thumbor.output.trimmingCharacters(in: .whitespacesAndNewlines) == "/thumbor/-pbN-LgPydve6xPqcsf6gGKHYvM=/300x200/smart/a.jpg")
        let imgproxy = try await runEasel(["sign", "imgproxy", "rs:fit:10:10/plain/local:///a.jpg", "--key", "zz", "--salt", "00"])
        #expect(imgproxy.status != 0 && imgproxy.error.contains("hex"))
    }

    @Test func thumbnailWritesOneFilePerInputAndFailsForBadOnes() async throws {
        let directory = try makeInputs()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let inputs = ["photo.jpg", "logo.png", "notes.jpg"].map { directory.appendingPathComponent($0).path }
        let result = try await runEasel(["thumbnail"] + inputs + ["--size", "128x128", "--output-dir", out.path, "--jobs", "2"])
        #expect(result.status == 1)
        #expect(result.output.contains("(128×96,")) // 640 × 480 fitted into 128 × 128
        #expect(result.output.contains("(43×128,")) // 100 × 300
        #expect(result.error.contains("1 of 3 failed") && result.error.contains("notes.jpg"))
        let photo = try ImageDecoder.info(of: Data(contentsOf: out.appendingPathComponent("tn_photo.jpg")))
        #expect(photo.fileType == .jpeg && photo.width == 128 && photo.height == 96)
        let logo = try ImageDecoder.decode(Data(contentsOf: out.appendingPathComponent("tn_logo.jpg")))
        #expect(logo.pixel(x: 20, y: 60) == [255, 255, 255, 255] || logo.pixel(x: 20, y: 60)[0] >= 250) // flattened on white
    }

    @Test func coverCropsToTheExactBox() async throws {
        let directory = try makeInputs()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await runEasel(["thumbnail", directory.appendingPathComponent("photo.jpg").path,
                                         "--size", "100x100", "--fit", "cover", "--format", "png"])
        #expect(result.status == 0)
        let info = try ImageDecoder.info(of: Data(contentsOf: directory.appendingPathComponent("tn_photo.png")))
        #expect(info.width == 100 && info.height == 100 && info.fileType == .png)
    }

    /// One name per idea: `fill` is `cover` (as in every URL style), `stretch` distorts.
    @Test func fillCoversAsEverywhereAndStretchDistorts() async throws {
        let directory = try makeInputs()
        defer { try? FileManager.default.removeItem(at: directory) }
        var outputs: [String: Data] = [:]
        for fit in ["cover", "fill", "stretch"] {
            let out = directory.appendingPathComponent(fit)
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let result = try await runEasel(["thumbnail", directory.appendingPathComponent("photo.jpg").path, "--size", "100x100",
                                             "--fit", fit, "--format", "png", "--output-dir", out.path])
            #expect(result.status == 0, "\(fit): \(result.error)")
            outputs[fit] = try Data(contentsOf: out.appendingPathComponent("tn_photo.png"))
            let info = try ImageDecoder.info(of: try #require(outputs[fit]))
            #expect(info.width == 100 && info.height == 100, "\(fit)")
        }
        #expect(outputs["fill"] == outputs["cover"])
        #expect(outputs["stretch"] != outputs["cover"])
    }

    @Test func webpOutput() async throws {
        let directory = try makeInputs()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await runEasel(["thumbnail", directory.appendingPathComponent("logo.png").path, "--format", "webp", "--size", "64x64"])
        #expect(result.status == 0)
        let info = try ImageDecoder.info(of: Data(contentsOf: directory.appendingPathComponent("tn_logo.webp")))
        #expect(info.fileType == .webp && info.height == 64 && info.hasAlpha)
    }

    @Test func colourProfilesModernFormatsAndAnimations() async throws {
        let directory = try makeInputs()
        defer { try? FileManager.default.removeItem(at: directory) }
        let p3 = try #require(ICCProfile.displayP3)
        let photo = try ImageDecoder.decode(Data(contentsOf: directory.appendingPathComponent("photo.jpg")))
        try ImageEncoder.encode(photo, as: .jpeg(quality: 90), iccProfile: p3.data).write(to: directory.appendingPathComponent("p3.jpg"))
        let info = try await runEasel(["info", directory.appendingPathComponent("p3.jpg").path])
        #expect(info.output.contains("ICC profile \"Display P3\" (RGB)"))
        // Converted to sRGB by default (no profile in the output); kept when asked.
        let out = directory.appendingPathComponent("out")
        #expect(try await runEasel(["thumbnail", directory.appendingPathComponent("p3.jpg").path, "--output-dir", out.path]).status == 0)
        #expect(try ImageDecoder.info(of: Data(contentsOf: out.appendingPathComponent("tn_p3.jpg"))).colorProfile == .none)
        let kept = directory.appendingPathComponent("kept")
        #expect(try await runEasel(["thumbnail", directory.appendingPathComponent("p3.jpg").path, "--keep-profile", "--output-dir", kept.path]).status == 0)
        #expect(try ImageDecoder.info(of: Data(contentsOf: kept.appendingPathComponent("tn_p3.jpg"))).colorProfile.profile?.description == "Display P3")
        // AVIF out.
        #expect(try await runEasel(["thumbnail", directory.appendingPathComponent("photo.jpg").path, "--format", "avif", "--output-dir", out.path]).status == 0)
        let avif = try ImageDecoder.info(of: Data(contentsOf: out.appendingPathComponent("tn_photo.avif")))
        #expect(avif.fileType == .avif && avif.width == 256 && avif.height == 192)
        // An animated GIF: every frame in WebP; --first-frame keeps one.
        let frames = (0..<4).map { i in (0..<(80 * 60)).map { UInt8(($0 % 80) / 20 == i ? 0 : 1) } }
        try GIFCodec.encodeAnimation(width: 80, height: 60, frames: frames, palette: [0, 0, 255, 255, 255, 255], delays: [10, 10, 10, 10])
            .write(to: directory.appendingPathComponent("anim.gif"))
        #expect(try await runEasel(["thumbnail", directory.appendingPathComponent("anim.gif").path, "--format", "webp", "--size", "40x40",
                                    "--output-dir", out.path]).status == 0)
        let animated = try ImageDecoder.info(of: Data(contentsOf: out.appendingPathComponent("tn_anim.webp")))
        #expect(animated.isAnimated && animated.frameCount == 4 && animated.width == 40 && animated.height == 30)
        let still = directory.appendingPathComponent("still")
        #expect(try await runEasel(["thumbnail", directory.appendingPathComponent("anim.gif").path, "--format", "webp", "--first-frame",
                                    "--output-dir", still.path]).status == 0)
        #expect(try ImageDecoder.info(of: Data(contentsOf: still.appendingPathComponent("tn_anim.webp"))).isAnimated == false)
        // --page: a frame of the animation as a still (frame 2: blue from x = 40), a page of a PDF
        // at its own size; a page past the last names the count, and the run fails.
        let page = directory.appendingPathComponent("page")
        #expect(try await runEasel(["thumbnail", directory.appendingPathComponent("anim.gif").path, "--format", "png", "--size", "80x60",
                                    "--page", "2", "--output-dir", page.path]).status == 0)
        let frame = try ImageDecoder.decode(Data(contentsOf: page.appendingPathComponent("tn_anim.png")))
        #expect(frame.pixel(x: 50, y: 30)[2] > 200 && frame.pixel(x: 50, y: 30)[0] < 60 && frame.pixel(x: 10, y: 30)[0] > 200)
        try twoPagePDF().write(to: directory.appendingPathComponent("doc.pdf"))
        #expect(try await runEasel(["thumbnail", directory.appendingPathComponent("doc.pdf").path, "--size", "64x64", "--page", "1",
                                    "--output-dir", page.path]).status == 0)
        let second = try ImageDecoder.info(of: Data(contentsOf: page.appendingPathComponent("tn_doc.jpg")))
        #expect(second.width == 32 && second.height == 64)
        let missing = try await runEasel(["thumbnail", directory.appendingPathComponent("doc.pdf").path, "--page", "2", "--output-dir", page.path])
        #expect(missing.status != 0 && missing.output.contains("no page 2: the image has 2 pages"), "\(missing.output)")
    }

    @Test func badOptionsAreRefused() async throws {
        #expect(try await runEasel(["thumbnail", "x.jpg", "--size", "big"]).error.contains("not a size"))
        #expect(try await runEasel(["thumbnail", "x.jpg", "--quality", "0"]).status != 0)
    }
}

@Suite("easel thumbnail output names", .timeLimit(.minutes(1)))
struct ThumbnailOutputTests {
    @Test func inputsThatWouldWriteOneFileAreRefusedNotRaced() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("easel-collide-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for sub in ["a", "b"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let image = try ImageEncoder.encode(Bitmap(width: 8, height: 8, pixelFormat: .gray8), as: .png())
        try image.write(to: directory.appendingPathComponent("a/x.png"))
        try image.write(to: directory.appendingPathComponent("b/x.png"))
        let out = directory.appendingPathComponent("out").path
        let result = try await runEasel(["thumbnail", directory.appendingPathComponent("a/x.png").path,
                                         directory.appendingPathComponent("b/x.png").path, "--output-dir", out, "--jobs", "2"])
        #expect(result.status == 1)
        #expect(result.error.contains("1 of 2 failed") && result.output.contains("would overwrite the one of"))
        #expect(FileManager.default.fileExists(atPath: out + "/tn_x.jpg"))
        // The same input twice is not a collision.
        let twice = try await runEasel(["thumbnail", directory.appendingPathComponent("a/x.png").path,
                                        directory.appendingPathComponent("a/x.png").path, "--output-dir", out, "--jobs", "2"])
        #expect(twice.status == 0)
    }
}
