import EaselCodecs
import EaselTestSupport
import Foundation
import Glibc
import Testing

/// Input files are mapped, not read into memory (issue 40): the JPEG, PNG, TIFF and WebP decoders
/// hand the pages they have read back to the kernel as they go, so what a shrinking decode of a
/// large file keeps resident of it is a few pages, not the file; the pixels are the same as
/// from the bytes in memory. A file that shrinks while it is mapped is a typed error, not a
/// SIGBUS; a device, a missing file and one past the limit are refused as before.
@Suite("Mapped input files", .timeLimit(.minutes(5)))
struct InputFileTests {
    /// Noise does not compress: the file weighs what its pixels do.
    static func noise(width: Int, height: Int) -> Bitmap { EaselTestSupport.noise(width: width, height: height) }

    /// Whether two bitmaps have the same size and the same bytes in every row.
    static func same(_ a: Bitmap, _ b: Bitmap) -> Bool {
        guard a.width == b.width, a.height == b.height, a.pixelFormat == b.pixelFormat else { return false }
        let rowLength = a.width * a.pixelFormat.bytesPerPixel
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                (0..<a.height).allSatisfy { row in
                    x[(row * a.rowBytes)..<(row * a.rowBytes + rowLength)].elementsEqual(y[(row * b.rowBytes)..<(row * b.rowBytes + rowLength)])
                }
            }
        }
    }

    /// The resident bytes of the mapping that starts at `start` (`/proc/self/smaps`).
    static func residentBytes(ofMappingAt start: UnsafeRawPointer) throws -> Int {
        let resident = EaselTestSupport.residentBytes(ofMappingAt: start)
        return try #require(resident, "no mapping at \(start)")
    }

    /// The files: a PNG, a baseline and a progressive JPEG, a TIFF in 256 px tiles (`tiffcp`), a
    /// lossy WebP, a 24-bit BMP (Pillow's, bottom-up) and two GIFs (Pillow's, one interlaced).
    static func files(in directory: TemporaryDirectory) throws -> [String] {
        let image = noise(width: 2000, height: 2000)
        try ImageEncoder.encode(image, as: .png()).write(to: directory.child("noise.png"))
        try ImageEncoder.encode(image, as: .jpeg(quality: 100, progressive: false)).write(to: directory.child("noise.jpg"))
        try ImageEncoder.encode(image, as: .jpeg(quality: 100, progressive: true)).write(to: directory.child("progressive.jpg"))
        // (A WebP of these pixels weighs 4 MB: twice the kernel's 2 MB pages a mapping may be read in.)
        try ImageEncoder.encode(noise(width: 3000, height: 3000), as: .webp(quality: 100)).write(to: directory.child("noise.webp"))
        let program = """
            import sys
            from PIL import Image
            Image.open(sys.argv[1]).convert("RGB").save(sys.argv[2], compression="tiff_adobe_deflate")
            Image.open(sys.argv[1]).convert("RGB").save(sys.argv[2].replace("strips.tif", "noise.bmp"))
            gif = Image.open(sys.argv[1]).convert("RGB").quantize(256)
            gif.save(sys.argv[2].replace("strips.tif", "noise.gif"), interlace=False)
            gif.save(sys.argv[2].replace("strips.tif", "interlaced.gif"), interlace=True)
            """
        try #require(FileManager.default.isExecutableFile(atPath: TIFFTests.python), "no \(TIFFTests.python): run `make deps`")
        #expect(try runTool(TIFFTests.python, ["-c", program, directory.child("noise.png").path, directory.child("strips.tif").path]))
        #expect(try runTool("/usr/bin/tiffcp", ["-t", "-w", "256", "-l", "256", "-c", "zip", directory.child("strips.tif").path,
                                                directory.child("noise.tif").path]))
        return ["noise.png", "noise.jpg", "progressive.jpg", "noise.tif", "noise.webp", "noise.bmp", "noise.gif", "interlaced.gif"]
    }

    @Test func aShrinkingDecodeKeepsAFewPagesOfTheFileAndMakesTheSamePixels() throws {
        let directory = try TemporaryDirectory()
        for name in try Self.files(in: directory) {
            let file = try InputFile(path: directory.child(name).path, limit: 64 << 20)
            #expect(file.isMapped, "\(name)")
            #expect(file.data.count > 4 << 20, "\(name): \(file.data.count) bytes")
            let info = try ImageDecoder.info(of: file.data)
            if name.hasSuffix(".gif") {
                // A GIF's header read counts its frames, reading every byte: handed back as it goes.
                let start = try file.data.withUnsafeBytes { try #require($0.baseAddress) }
                let resident = try Self.residentBytes(ofMappingAt: start)
                #expect(resident <= 4 << 20, "\(name): \(resident >> 10) KiB of \(file.data.count >> 10) KiB resident after its header read")
            }
            let mapped = try file.decoding { try ImageDecoder.decode($0, info: info, covering: (250, 250)) }
            #expect(mapped.width == info.width / 8 && mapped.height == info.height / 8, "\(name) decoded at 1/8")
            let start = try file.data.withUnsafeBytes { try #require($0.baseAddress) }
            let resident = try Self.residentBytes(ofMappingAt: start)
            // What was read since the last hand-back stays, in the kernel's pages (2 MB ones where
            // the file system maps a file so): at most 4 MiB of a forward reader's file; of a
            // WebP's, whose decoder also reads again behind itself (its modes), at most half.
            let bound = name.hasSuffix(".webp") ? file.data.count / 2 : 4 << 20
            #expect(resident <= bound, "\(name): \(resident >> 10) KiB of \(file.data.count >> 10) KiB resident after the decode")
            // The same pixels from the same bytes in memory (read, not mapped: nothing handed back).
            let copy = try Data(contentsOf: directory.child(name))
            #expect(Self.same(try ImageDecoder.decode(copy, info: info, covering: (250, 250)), mapped), "\(name)")
            // And every page can be read again: a whole decode of the mapping after the shrunk one.
            #expect(Self.same(try ImageDecoder.decode(file.data, info: info), try ImageDecoder.decode(copy, info: info)), "\(name) read again")
        }
    }

    @Test func aFileThatShrinksWhileMappedIsATypedErrorNotASIGBUS() throws {
        let directory = try TemporaryDirectory()
        let path = directory.child("noise.png").path
        try ImageEncoder.encode(Self.noise(width: 1200, height: 1200), as: .png()).write(to: URL(fileURLWithPath: path))
        let file = try InputFile(path: path, limit: 64 << 20)
        let info = try ImageDecoder.info(of: file.data)
        #expect(!file.changedWhileRead)
        #expect(truncate(path, 64 << 10) == 0)
        #expect(throws: InputFile.Failure.changedWhileRead(path: path)) {
            try file.decoding { try ImageDecoder.decode($0, info: info, covering: (100, 100)) }
        }
        #expect(file.changedWhileRead)
        // Written in place, its size unchanged: its times say so.
        let other = directory.child("other.png").path
        try ImageEncoder.encode(Self.noise(width: 300, height: 300), as: .png()).write(to: URL(fileURLWithPath: other))
        let rewritten = try InputFile(path: other, limit: 64 << 20)
        let handle = try #require(FileHandle(forWritingAtPath: other))
        try handle.seek(toOffset: 100)
        try handle.write(contentsOf: Data(repeating: 7, count: 16))
        try handle.close()
        // (Its modification time set apart from the mapping's: a kernel's coarse clock may not.)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: other)
        #expect(throws: InputFile.Failure.changedWhileRead(path: other)) { try rewritten.decoding { $0.count } }
        // A file read again afterwards is read as it is now.
        let again = try InputFile(path: path, limit: 64 << 20)
        #expect(again.data.count == 64 << 10 && !again.changedWhileRead)
    }

    @Test func whatIsNoRegularFileIsReadBoundedAndWhatCannotBeReadIsNamed() throws {
        let directory = try TemporaryDirectory()
        // A device is read, not mapped, and refused once past the limit.
        #expect(throws: CodecError.inputTooLarge(bytes: 1001, limit: 1000)) { try InputFile(path: "/dev/zero", limit: 1000) }
        // A regular file past the limit is refused from its size, before it is mapped or read.
        try Data(count: 4096).write(to: directory.child("zeros"))
        #expect(throws: CodecError.inputTooLarge(bytes: 4096, limit: 1000)) { try InputFile(path: directory.child("zeros").path, limit: 1000) }
        // An empty file is read (nothing to map) and is no image.
        try Data().write(to: directory.child("empty"))
        let empty = try InputFile(path: directory.child("empty").path, limit: 1000)
        #expect(!empty.isMapped && empty.data.isEmpty)
        let missing = directory.child("missing.png").path
        #expect(throws: InputFile.Failure.unreadable(path: missing, reason: "No such file or directory")) {
            try InputFile(path: missing, limit: 1000)
        }
    }

    /// A JPEG read in several scans keeps every block's coefficients until its last scan, and
    /// libwebp a lossless image's whole ARGB or a lossy one's alpha plane, whatever the scale it
    /// is decoded at: the memory estimate counts them.
    @Test func whatDecodersHoldAtAnyScaleIsSaid() throws {
        let image = Self.noise(width: 168, height: 96)
        let progressive = try ImageDecoder.info(of: try ImageEncoder.encode(image, as: .jpeg(quality: 90, progressive: true)))
        // 4:2:0: luma 21×12 blocks, its width rounded up to its sampling factor (2) as libjpeg
        // allocates it, each chroma 11×6, 128 bytes a block.
        #expect(progressive.decoderWorkingBytes == (22 * 12 + 2 * 11 * 6) * 128)
        let baseline = try ImageDecoder.info(of: try ImageEncoder.encode(image, as: .jpeg(quality: 90, progressive: false)))
        #expect(baseline.decoderWorkingBytes == 0)
        // libwebp: a lossless image's whole ARGB, a lossy one's whole alpha plane, at any scale.
        #expect(try ImageDecoder.info(of: try ImageEncoder.encode(image, as: .webp(quality: 80, lossless: true))).decoderWorkingBytes == 168 * 96 * 4)
        let translucent = painted(width: 168, height: 96) { x, _ in [200, 100, 50, UInt8(x)] }
        #expect(try ImageDecoder.info(of: try ImageEncoder.encode(translucent, as: .webp(quality: 80))).decoderWorkingBytes == 168 * 96)
        #expect(try ImageDecoder.info(of: try ImageEncoder.encode(image, as: .webp(quality: 80))).decoderWorkingBytes == 0)
    }
}
