import AsyncHTTPClient
import EaselCodecs
import EaselSupport
import EaselTestSupport
import Foundation
import NIOCore
import Testing

/// Degenerate images made at test time: headers that say 0 pixels or 2³²−1 a side, in every
/// format Easel reads (TIFF, BMP and ICO included), and valid images of extreme aspect ratios.
enum DegenerateImages {
    struct Case: Sendable {
        let name: String
        let data: Data
        /// Valid images must answer 200 with sides ≥ 1; the others a 4xx.
        let valid: Bool
    }

    static func corpus() throws -> [Case] {
        var cases: [Case] = []
        let small = gradient(width: 16, height: 12)
        // PNG: IHDR's width and height (big-endian, bytes 16–23), CRC recomputed.
        let png = try ImageEncoder.encode(small, as: .png())
        for (w, h, tag) in [(0, 12, "0xh"), (16, 0, "wx0"), (0, 0, "0x0"), (0xFFFF_FFFF, 0xFFFF_FFFF, "max"), (0x7FFF_FFFF, 1, "wide")] {
            var data = png
            put32(&data, at: 16, UInt32(w)); put32(&data, at: 20, UInt32(h))
            put32(&data, at: 29, EaselTestSupport.crc32(data[12..<29]))
            cases.append(Case(name: "png-\(tag).png", data: data, valid: false))
        }
        // JPEG: the SOF's height and width (16-bit each).
        let jpeg = try ImageEncoder.encode(small, as: .jpeg(quality: 80))
        let sof = try #require(marker(0xC0, in: jpeg))
        for (w, h, tag) in [(0, 12, "0xh"), (16, 0, "wx0"), (0, 0, "0x0"), (0xFFFF, 0xFFFF, "max")] {
            var data = jpeg
            put16(&data, at: sof + 5, UInt16(h)); put16(&data, at: sof + 7, UInt16(w))
            cases.append(Case(name: "jpeg-\(tag).jpg", data: data, valid: false))
        }
        // GIF: the logical screen (bytes 6–9) and the frame's descriptor, little-endian.
        for (screen, frame, tag) in [((0, 0), (1, 1), "screen0"), ((1, 1), (0, 0), "frame0"), ((0xFFFF, 0xFFFF), (1, 1), "screenmax"),
                                     ((1, 1), (0xFFFF, 0xFFFF), "framemax"), ((0, 0), (0, 0), "both0")] {
            var data = tinyGIF
            put16LE(&data, at: 6, UInt16(screen.0)); put16LE(&data, at: 8, UInt16(screen.1))
            put16LE(&data, at: 24, UInt16(frame.0)); put16LE(&data, at: 26, UInt16(frame.1))
            cases.append(Case(name: "gif-\(tag).gif", data: data, valid: false))
        }
        // WebP VP8 (lossy): the frame header's 14-bit sides; VP8X: the canvas (24-bit, minus 1).
        let webp = try ImageEncoder.encode(small, as: .webp(quality: 80))
        let vp8 = try #require(webp.range(of: Data("VP8 ".utf8))).lowerBound + 8 + 6
        for (w, h, tag) in [(0, 12, "0xh"), (16, 0, "wx0"), (0x3FFF, 0x3FFF, "max")] {
            var data = webp
            put16LE(&data, at: vp8, UInt16(w)); put16LE(&data, at: vp8 + 2, UInt16(h))
            cases.append(Case(name: "webp-vp8-\(tag).webp", data: data, valid: false))
        }
        var translucent = small
        translucent.withUnsafeMutableBytes { $0[3] = 10 }
        let webpx = try ImageEncoder.encode(translucent, as: .webp(quality: 80))
        let vp8x = try #require(webpx.range(of: Data("VP8X".utf8))).lowerBound + 8 + 4
        var canvas = webpx
        for offset in 0..<6 { canvas[canvas.startIndex + vp8x + offset] = 0xFF }
        cases.append(Case(name: "webp-vp8x-max.webp", data: canvas, valid: false))
        // AVIF and HEIC (Debian's encoders): `ispe` says 0×0, 0×1 or 2³²−1 a side.
        for (tool, ext) in [("avifenc", "avif"), ("heif-enc", "heic")] {
            let encoded = try encode(small, with: tool, ext: ext)
            // Every `ispe` (a small HEIC has one for its coded 64×64 and one for the image).
            var boxes: [Int] = [], from = encoded.startIndex
            while let found = encoded.range(of: Data("ispe".utf8), in: from..<encoded.endIndex) {
                boxes.append(found.upperBound - encoded.startIndex + 4)
                from = found.upperBound
            }
            try #require(!boxes.isEmpty, "no ispe in the \(ext)")
            for (w, h, tag) in [(0, 0, "0x0"), (0, 1, "0x1"), (0xFFFF_FFFF, 0xFFFF_FFFF, "max")] {
                var data = encoded
                for ispe in boxes { put32(&data, at: ispe, UInt32(w)); put32(&data, at: ispe + 4, UInt32(h)) }
                cases.append(Case(name: "\(ext)-ispe-\(tag).\(ext)", data: data, valid: false))
            }
        }
        // Valid extremes (WebP's sides stop at 16383).
        for (w, h) in [(1, 20_000), (20_000, 1)] {
            let bitmap = gradient(width: w, height: h)
            cases.append(Case(name: "png-\(w)x\(h).png", data: try ImageEncoder.encode(bitmap, as: .png()), valid: true))
            cases.append(Case(name: "jpeg-\(w)x\(h).jpg", data: try ImageEncoder.encode(bitmap, as: .jpeg(quality: 80)), valid: true))
        }
        for (w, h) in [(1, 16_383), (16_383, 1)] {
            cases.append(Case(name: "webp-\(w)x\(h).webp", data: try ImageEncoder.encode(gradient(width: w, height: h), as: .webp(quality: 80)),
                              valid: true))
        }
        // BMP: the DIB header's width and height (signed 32-bit, bytes 18–25); ICO: its BMP
        // entry's (the height counts the AND mask too).
        let bmp = try ImageEncoder.encode(small, as: .bmp)
        for (w, h, tag) in [(0, 12, "0xh"), (16, 0, "wx0"), (0x7FFF_FFFF, 1, "wide"), (1, Int32.min, "min"), (-16, 12, "negative")] {
            var data = bmp
            put32LE(&data, at: 18, UInt32(bitPattern: Int32(w))); put32LE(&data, at: 22, UInt32(bitPattern: h == Int32.min ? Int32.min : Int32(h)))
            cases.append(Case(name: "bmp-\(tag).bmp", data: data, valid: false))
        }
        var icon = Data([0, 0, 1, 0, 1, 0, 16, 12, 0, 0, 1, 0, 24, 0])
        let dib = bmp.dropFirst(14)
        icon.append(contentsOf: withUnsafeBytes(of: UInt32(dib.count).littleEndian, Array.init) + withUnsafeBytes(of: UInt32(22).littleEndian, Array.init))
        icon.append(dib)
        for (w, h, tag) in [(0, 24, "0xh"), (16, 0, "wx0"), (0x7FFF_FFFF, 2, "wide")] {
            var data = icon
            put32LE(&data, at: 22 + 4, UInt32(w)); put32LE(&data, at: 22 + 8, UInt32(h))
            cases.append(Case(name: "ico-\(tag).ico", data: data, valid: false))
        }
        // TIFF: the directory's ImageWidth and ImageLength (LONGs), a strip too short, many pages.
        for (w, h, tag) in [(0, 12, "0xh"), (16, 0, "wx0"), (0xFFFF_FFFF, 0xFFFF_FFFF, "max"), (0x7FFF_FFFF, 1, "wide")] {
            cases.append(Case(name: "tiff-\(tag).tif", data: uncompressedTIFF(width: w, height: h, samples: 1, stripBytes: 16), valid: false))
        }
        cases.append(Case(name: "tiff-short.tif", data: uncompressedTIFF(width: 300, height: 300, stripBytes: 100), valid: false))
        cases.append(Case(name: "tiff-pages.tif", data: uncompressedTIFF(width: 3, height: 2, samples: 1, pages: 2000), valid: true))
        // SVG: sizes of 0, negative, not numbers; an empty viewBox; a million elements (refused);
        // sides of 2³²−1 (a vector has no pixels of its own: rendered at the size asked for).
        for (size, tag, valid) in [("width='0' height='10'", "0xh", false), ("width='4294967295' height='4294967295'", "max", true),
                                   ("width='-5' height='5'", "negative", false), ("width='NaN' height='1e400'", "nan", false),
                                   ("viewBox='0 0 0 0'", "viewbox0", false)] {
            cases.append(Case(name: "svg-\(tag).svg", data: Data("<svg xmlns='http://www.w3.org/2000/svg' \(size)><rect width='5' height='5'/></svg>".utf8),
                              valid: valid))
        }
        cases.append(Case(name: "svg-elements.svg", data: Data(("<svg xmlns='http://www.w3.org/2000/svg' width='9' height='9'>"
                                                                + String(repeating: "<g/>", count: 200_000) + "</svg>").utf8), valid: false))
        // PDF: a page size of 0 (refused); a huge page (rendered at the size asked for), a negative
        // height and a number out of range, which poppler reads as a normalised rectangle and as
        // its default page (answered).
        for (box, tag, valid) in [("0 0 0 10", "0xh", false), ("0 0 4294967295 4294967295", "max", true), ("0 0 10 -5", "negative", true),
                                  ("0 0 1e400 5", "inf", true)] {
            cases.append(Case(name: "pdf-\(tag).pdf", data: Data(pdfDocument(width: 1, height: 1, content: "0 g 0 0 1 1 re f")
                .replacingOccurrences(of: "/MediaBox [0 0 1 1]", with: "/MediaBox [\(box)]").utf8), valid: valid))
        }
        for (w, h) in [(1, 1), (1, 20000), (3, 1)] {
            cases.append(Case(name: "pdf-\(w)x\(h).pdf", data: Data(pdfDocument(width: w, height: h, content: "0.2 g 0 0 \(w) \(h) re f").utf8), valid: true))
        }
        for (w, h) in [(1, 1), (1, 20000), (3, 1)] {
            cases.append(Case(name: "svg-\(w)x\(h).svg", data: Data("<svg xmlns='http://www.w3.org/2000/svg' width='\(w)' height='\(h)'><rect width='\(w)' height='\(h)' fill='#369'/></svg>".utf8),
                              valid: true))
        }
        for (w, h) in [(1, 1), (9, 2), (1, 7)] {
            cases.append(Case(name: "tiff-\(w)x\(h).tif", data: uncompressedTIFF(width: w, height: h), valid: true))
            cases.append(Case(name: "bmp-\(w)x\(h).bmp", data: try ImageEncoder.encode(gradient(width: w, height: h), as: .bmp), valid: true))
            cases.append(Case(name: "ico-\(w)x\(h).ico", data: try ImageEncoder.encode(gradient(width: w, height: h), as: .ico), valid: true))
        }
        cases.append(Case(name: "png-1x1.png", data: try ImageEncoder.encode(gradient(width: 1, height: 1), as: .png()), valid: true))
        // JPEGs decoded shrunk (1/8) to an extent under a pixel: 1×1, and thin strips.
        for (w, h) in [(1, 1), (3, 1), (1, 7), (9, 2)] {
            cases.append(Case(name: "jpeg-\(w)x\(h).jpg", data: try ImageEncoder.encode(gradient(width: w, height: h), as: .jpeg(quality: 80)),
                              valid: true))
        }
        return cases
    }

    /// A 1×1 GIF89a: screen at bytes 6–9, the image descriptor's width and height at 24–27.
    static let tinyGIF = Data([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0x80, 0, 0,
                               0, 0, 0, 0xFF, 0xFF, 0xFF,
                               0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0,
                               2, 2, 0x44, 0x01, 0, 0x3B])

    static func gradient(width: Int, height: Int) -> Bitmap {
        var bitmap = Bitmap(width: width, height: height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        bitmap.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let o = y * rowBytes + x * 4
                    bytes[o] = UInt8(truncatingIfNeeded: x * 7); bytes[o + 1] = UInt8(truncatingIfNeeded: y * 5)
                    bytes[o + 2] = UInt8(truncatingIfNeeded: x + y); bytes[o + 3] = 255
                }
            }
        }
        bitmap.markOpaque()
        return bitmap
    }

    static func encode(_ bitmap: Bitmap, with tool: String, ext: String) throws -> Data {
        let directory = try TemporaryDirectory()
        let input = directory.child("in.png"), output = directory.child("out.\(ext)")
        try ImageEncoder.encode(bitmap, as: .png()).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = tool == "avifenc" ? [tool, "--jobs", "1", "-s", "10", input.path, output.path] : [tool, "-o", output.path, input.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.run(process)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(tool) failed")
        return try Data(contentsOf: output)
    }

    /// The offset of the first JPEG marker `code` (its 0xFF).
    static func marker(_ code: UInt8, in data: Data) -> Int? {
        let bytes = [UInt8](data)
        for index in 0..<(bytes.count - 1) where bytes[index] == 0xFF && bytes[index + 1] == code { return index }
        return nil
    }

    static func put32(_ data: inout Data, at offset: Int, _ value: UInt32) {
        for i in 0..<4 { data[data.startIndex + offset + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * i)) }
    }

    static func put16(_ data: inout Data, at offset: Int, _ value: UInt16) {
        data[data.startIndex + offset] = UInt8(value >> 8); data[data.startIndex + offset + 1] = UInt8(value & 0xFF)
    }

    static func put32LE(_ data: inout Data, at offset: Int, _ value: UInt32) {
        for i in 0..<4 { data[data.startIndex + offset + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
    }

    static func put16LE(_ data: inout Data, at offset: Int, _ value: UInt16) {
        data[data.startIndex + offset] = UInt8(value & 0xFF); data[data.startIndex + offset + 1] = UInt8(value >> 8)
    }
}

/// One request never takes the server down: `easel serve` as its own process gets every
/// degenerate file through every route, and must be alive after each answer.
@Suite("easel serve survives degenerate images", .timeLimit(.minutes(5)))
struct CrashCanaryTests {
    static let routes: [(label: String, path: @Sendable (String) -> String)] = [
        ("thumb", { "/images/thumb/\($0)" }),
        ("small", { "/images/small/\($0)" }),
        ("square", { "/images/square/\($0)" }),
        ("ad-hoc", { "/images/w=100,h=100,fit=fill,blur=3/\($0)" }),
        ("imgproxy", { "/imgproxy/insecure/rs:fit:120:80/plain/local:///\($0)" }),
        ("imgproxy-force", { "/imgproxy/insecure/rs:force:64:64/plain/local:///\($0)" }),
        ("fit-no-enlarge", { "/images/w=64,h=64,fit=fit/\($0)" }),
        ("thumbor", { "/thumbor/unsafe/90x60/smart/\($0)" }),
        ("info", { "/info/\($0)" }),
    ]

    @Test func everyDegenerateFileThroughEveryRouteLeavesTheServerAliveWithA4xxOrAValidImage() async throws {
        let corpus = try DegenerateImages.corpus()
        let origin = try TemporaryDirectory(), cache = try TemporaryDirectory()
        for item in corpus { try item.data.write(to: origin.child(item.name)) }
        let config = origin.child("easel.json")
        try Data(#"{"allowUnsignedAdHoc": true, "requestTimeout": 60}"#.utf8).write(to: config)
        let server = try await BlockingIOPool.shared.run {
            try ChildServer(arguments: ["--origin", origin.path, "--cache-dir", cache.path, "--config", config.path])
        }
        var failures: [String] = []
        for item in corpus {
            for route in Self.routes {
                let path = route.path(item.name)
                var answer: (status: Int, body: Data, contentType: String?)
                do { answer = try await server.get(path) } catch {
                    // A pooled keep-alive connection the idle timeout closed: once more, on a new one.
                    do { answer = try await server.get(path) } catch {
                        Issue.record(server.process.isRunning ? "\(path): \(error)" : "the server died on \(path): \(error)")
                        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
                        return
                    }
                }
                let (status, body, type) = answer
                guard server.process.isRunning else {
                    Issue.record("the server died on \(path)")
                    #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
                    return
                }
                if item.valid {
                    if status != 200 { failures.append("\(path): \(status) \(String(decoding: body.prefix(200), as: UTF8.self))"); continue }
                    if route.label == "info" {
                        #expect(type?.hasPrefix("application/json") == true, "\(path)")
                        continue
                    }
                    let info = try ImageDecoder.info(of: body)
                    if info.width < 1 || info.height < 1 { failures.append("\(path): \(info.width)×\(info.height)") }
                } else if !(400..<500).contains(status) {
                    failures.append("\(path): \(status), expected a 4xx")
                }
            }
            // Still answering (not only still running).
            let health = try await server.get("/health")
            #expect(health.status == 200, "health after \(item.name)")
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(server.process.isRunning)
    }
}

/// `easel serve` as a child process on a free port; terminated when released.
typealias ChildServer = ListeningProcess

extension ListeningProcess {
    /// Blocking: `easel serve --port 0` with `arguments`.
    convenience init(arguments: [String]) throws {
        try self.init(executable: builtProduct("easel"), arguments: ["serve", "--port", "0"] + arguments)
    }

    func get(_ path: String) async throws -> (status: Int, body: Data, contentType: String?) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), Data(body.readableBytesView), response.headers.first(name: "content-type"))
    }
}
