import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// Builds a JPEG APP1 EXIF segment (big-endian TIFF) and inserts it after SOI.
enum TestExif {
    static func insert(into jpeg: Data, orientation: Int? = nil, make: String? = nil, model: String? = nil,
                       dateTaken: String? = nil, gps: Bool = false) -> Data {
        var ifd0: [(tag: Int, type: Int, count: Int, value: [UInt8])] = []
        var exifIFD: [(tag: Int, type: Int, count: Int, value: [UInt8])] = []
        if let orientation { ifd0.append((0x0112, 3, 1, [0, UInt8(orientation), 0, 0])) }
        if let make { ifd0.append((0x010F, 2, make.utf8.count + 1, Array(make.utf8) + [0])) }
        if let model { ifd0.append((0x0110, 2, model.utf8.count + 1, Array(model.utf8) + [0])) }
        if let dateTaken { exifIFD.append((0x9003, 2, dateTaken.utf8.count + 1, Array(dateTaken.utf8) + [0])) }
        if dateTaken != nil { ifd0.append((0x8769, 4, 1, [])) } // offset filled below
        if gps { ifd0.append((0x8825, 4, 1, [0, 0, 0, 8])) }

        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v & 0xFFFF) }
        func ifdSize(_ entries: Int) -> Int { 2 + entries * 12 + 4 }
        var tiff: [UInt8] = Array("MM".utf8) + be16(42) + be32(8)
        let ifd0Start = 8
        let exifStart = ifd0Start + ifdSize(ifd0.count)
        var dataStart = exifStart + (exifIFD.isEmpty ? 0 : ifdSize(exifIFD.count))
        var extra: [UInt8] = []
        func encode(_ entries: [(tag: Int, type: Int, count: Int, value: [UInt8])]) -> [UInt8] {
            var out = be16(entries.count)
            for entry in entries {
                out += be16(entry.tag) + be16(entry.type) + be32(entry.count)
                if entry.tag == 0x8769 {
                    out += be32(exifStart)
                } else if entry.value.count <= 4 {
                    out += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
                } else {
                    out += be32(dataStart)
                    extra += entry.value
                    dataStart += entry.value.count
                }
            }
            return out + be32(0)
        }
        tiff += encode(ifd0)
        if !exifIFD.isEmpty { tiff += encode(exifIFD) }
        tiff += extra
        let payload = Array("Exif\0\0".utf8) + tiff
        var segment: [UInt8] = [0xFF, 0xE1] + be16(payload.count + 2) + payload
        var result = Data(jpeg.prefix(2))
        result.append(contentsOf: segment)
        result.append(jpeg.dropFirst(2))
        segment.removeAll()
        return result
    }
}

@Suite("EXIF")
struct ExifTests {
    /// A 40 × 20 image whose four 20 × 10 quadrants are red, green, blue and white (TL, TR, BL, BR).
    static let quadrants: Bitmap = painted(width: 40, height: 20) { x, y in
        switch (x < 20, y < 10) {
        case (true, true): [255, 0, 0, 255]
        case (false, true): [0, 255, 0, 255]
        case (true, false): [0, 0, 255, 255]
        case (false, false): [255, 255, 255, 255]
        }
    }

    /// Which stored corner each displayed corner shows (TL, TR, BL, BR), from the EXIF table of
    /// where the 0th row and column belong.
    static let expectedCorners: [Int: [String]] = [
        1: ["TL", "TR", "BL", "BR"], 2: ["TR", "TL", "BR", "BL"], 3: ["BR", "BL", "TR", "TL"], 4: ["BL", "BR", "TL", "TR"],
        5: ["TL", "BL", "TR", "BR"], 6: ["BL", "TL", "BR", "TR"], 7: ["BR", "TR", "BL", "TL"], 8: ["TR", "BR", "TL", "BL"],
    ]

    static func name(of pixel: [UInt8]) -> String {
        switch (pixel[0] > 128, pixel[1] > 128, pixel[2] > 128) {
        case (true, false, false): "TL"
        case (false, true, false): "TR"
        case (false, false, true): "BL"
        case (true, true, true): "BR"
        default: "?"
        }
    }

    @Test(arguments: 1...8)
    func everyOrientationComesOutUpright(orientation: Int) throws {
        let jpeg = try ImageEncoder.encode(Self.quadrants, as: .jpeg(quality: 95))
        let tagged = TestExif.insert(into: jpeg, orientation: orientation)
        let info = try ImageDecoder.info(of: tagged)
        #expect(info.orientation == orientation)
        let upright = try ImageDecoder.decode(tagged)
        let swapped = orientation >= 5
        #expect(upright.width == (swapped ? 20 : 40) && upright.height == (swapped ? 40 : 20))
        #expect(info.uprightWidth == upright.width && info.uprightHeight == upright.height)
        let w = upright.width, h = upright.height
        let corners = [upright.pixel(x: 2, y: 2), upright.pixel(x: w - 3, y: 2), upright.pixel(x: 2, y: h - 3), upright.pixel(x: w - 3, y: h - 3)]
        #expect(corners.map(Self.name) == Self.expectedCorners[orientation])
        // Asked not to, the decoder leaves the pixels as stored.
        #expect(try ImageDecoder.decode(tagged, applyOrientation: false).width == 40)
    }

    @Test func shrinkOnLoadCoversTheUprightSize() throws {
        let tall = try ImageEncoder.encode(gradient(width: 800, height: 400), as: .jpeg(quality: 80))
        let rotated = TestExif.insert(into: tall, orientation: 6) // shown as 400 × 800
        let bitmap = try ImageDecoder.decode(rotated, covering: (100, 200))
        #expect(bitmap.width == 100 && bitmap.height == 200) // 1/8 of the stored 800 × 400, turned
    }

    @Test func basicFieldsAreRead() throws {
        let jpeg = try ImageEncoder.encode(gradient(width: 8, height: 8), as: .jpeg(quality: 80))
        let tagged = TestExif.insert(into: jpeg, orientation: 3, make: "Easel Camera Co", model: "Model X",
                                     dateTaken: "2026:11:21 10:00:00", gps: true)
        let exif = try #require(try ImageDecoder.info(of: tagged).exif)
        #expect(exif == ExifInfo(orientation: 3, make: "Easel Camera Co", model: "Model X", dateTaken: "2026:11:21 10:00:00", hasGPS: true))
        #expect(try ImageDecoder.info(of: jpeg).exif == nil)
    }

    @Test func damagedExifIsIgnoredNotFatal() throws {
        let jpeg = try ImageEncoder.encode(gradient(width: 8, height: 8), as: .jpeg(quality: 80))
        let tagged = TestExif.insert(into: jpeg, orientation: 6, make: "Maker")
        // The damage stays inside the APP1 payload (its length, at bytes 4–5, is kept), so the
        // JPEG itself is sound: every damaged copy must still give its header and its pixels,
        // the EXIF parts that survive or none. An error of any kind is a failure.
        let end = 4 + (Int(tagged[4]) << 8 | Int(tagged[5])) // the APP1 segment's end
        try #require(tagged[2] == 0xFF && tagged[3] == 0xE1 && end > 40 && end <= tagged.count)
        var state: UInt64 = 0xE71F // a fixed sequence (a 64-bit LCG's high bits)
        func next() -> Int { state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407; return Int(state >> 33) }
        var orientations = Set<Int>()
        for round in 0..<200 {
            var damaged = tagged
            for _ in 0..<3 {
                damaged[6 + next() % (end - 6)] = UInt8(truncatingIfNeeded: next())
            }
            do {
                let info = try ImageDecoder.info(of: damaged)
                #expect(info.width == 8 && info.height == 8, "round \(round)")
                #expect((1...8).contains(info.orientation), "round \(round): orientation \(info.orientation)")
                orientations.insert(info.orientation)
                let bitmap = try ImageDecoder.decode(damaged)
                #expect(bitmap.width == 8 && bitmap.height == 8, "round \(round)")
            } catch {
                Issue.record("round \(round): damaged EXIF made the image fail: \(error)")
            }
        }
        // Some copies keep the tag intact (orientation 6), others lose it (1).
        #expect(orientations.contains(6) && orientations.contains(1), "\(orientations)")
    }
}

@Suite("EXIF in PNG and WebP")
struct ExifInOtherFormatsTests {
    /// The TIFF payload of the APP1 segment `TestExif` builds (after "Exif\0\0").
    func tiff(orientation: Int) throws -> [UInt8] {
        let tagged = TestExif.insert(into: Data([0xFF, 0xD8]), orientation: orientation)
        let segmentLength = Int(tagged[4]) << 8 | Int(tagged[5])
        return Array(tagged[12..<(4 + segmentLength)])
    }

    @Test func aPNGeXIfChunkTurnsTheImageUpright() throws {
        var png = try ImageEncoder.encode(ExifTests.quadrants, as: .png())
        // Insert an eXIf chunk right after IHDR (8 + 25 bytes).
        png.insert(contentsOf: TestPNG.chunk("eXIf", Data(try tiff(orientation: 6))), at: 33)
        let info = try ImageDecoder.info(of: png)
        #expect(info.orientation == 6 && info.uprightWidth == 20)
        let upright = try ImageDecoder.decode(png)
        #expect(upright.width == 20 && upright.height == 40)
        #expect(ExifTests.name(of: upright.pixel(x: 2, y: 2)) == "BL") // orientation 6: top-left shows stored bottom-left
    }

    @Test func aWebPEXIFChunkIsRead() throws {
        let still = try ImageEncoder.encode(ExifTests.quadrants, as: .webp(lossless: true))
        // Rebuild as the extended format: VP8X (EXIF flag) + the VP8L chunk + EXIF.
        func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le24(v) + [UInt8(v >> 24 & 0xFF)] }
        func chunk(_ fourcc: String, _ body: [UInt8]) -> [UInt8] { Array(fourcc.utf8) + le32(body.count) + body + (body.count % 2 == 1 ? [0] : []) }
        let vp8x = chunk("VP8X", [0x08, 0, 0, 0] + le24(40 - 1) + le24(20 - 1))
        let body = Array("WEBP".utf8) + vp8x + Array(still[12...]) + chunk("EXIF", try tiff(orientation: 3))
        let webp = Data(Array("RIFF".utf8) + le32(body.count) + body)
        #expect(try ImageDecoder.info(of: webp).orientation == 3)
        let upright = try ImageDecoder.decode(webp)
        #expect(ExifTests.name(of: upright.pixel(x: 2, y: 2)) == "BR") // rotated 180°
    }
}
