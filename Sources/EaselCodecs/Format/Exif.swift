import Foundation

/// The EXIF facts Easel reads without decoding the image: from a JPEG's APP1 segment, a PNG's
/// `eXIf` chunk or a WebP's `EXIF` chunk.
public struct ExifInfo: Sendable, Hashable {
    /// 1…8 as in the EXIF specification; 1 is upright.
    public var orientation: Int = 1
    /// The camera's maker (IFD0's Make), trimmed of spaces; nil when absent or blank.
    public var make: String?
    /// The camera's model (IFD0's Model), trimmed of spaces; nil when absent or blank.
    public var model: String?
    /// DateTimeOriginal as written ("YYYY:MM:DD HH:MM:SS").
    public var dateTaken: String?
    /// True when the file carries GPS data (its content is not read).
    public var hasGPS = false
    /// IFD0's Artist and Copyright, the rights information an output may keep.
    public var artist: String?
    /// IFD0's Copyright, trimmed of spaces; nil when absent or blank.
    public var copyright: String?

    /// EXIF facts with the given values (by default upright, with no camera, date or GPS); `artist`
    /// and `copyright` start as nil.
    public init(orientation: Int = 1, make: String? = nil, model: String? = nil, dateTaken: String? = nil, hasGPS: Bool = false) {
        self.orientation = orientation
        self.make = make
        self.model = model
        self.dateTaken = dateTaken
        self.hasGPS = hasGPS
    }
}

/// A bounds-checked reader of JPEG markers and the TIFF structure inside EXIF. Damaged or
/// hostile EXIF never throws: whatever cannot be read is simply absent.
enum ExifReader {
    /// The EXIF of a JPEG, or nil when it has none (or none that parses).
    static func read(jpeg data: Data) -> ExifInfo? {
        data.withUnsafeBytes { raw -> ExifInfo? in
            let bytes = UnsafeRawBufferPointer(rebasing: raw.prefix(1 << 20)) // EXIF lives near the start
            var offset = 2
            while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
                let marker = bytes[offset + 1]
                if marker == 0xFF { offset += 1; continue } // fill bytes before a marker
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { offset += 2; continue }
                if marker == 0xDA || marker == 0xD9 { return nil } // image data: no EXIF before it
                let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                guard length >= 2, offset + 2 + length <= bytes.count else { return nil }
                let start = offset + 4
                if marker == 0xE1, length >= 8, bytes[start..<(start + 6)].elementsEqual("Exif\0\0".utf8) {
                    return parseTIFF(Array(bytes[(start + 6)..<(offset + 2 + length)])) // copies only the segment
                }
                offset += 2 + length
            }
            return nil
        }
    }

    /// The EXIF of a PNG (an `eXIf` chunk before the image data), or nil.
    static func read(png data: Data) -> ExifInfo? {
        data.withUnsafeBytes { raw -> ExifInfo? in
            var offset = 8
            while offset + 12 <= raw.count {
                let length = Int(raw[offset]) << 24 | Int(raw[offset + 1]) << 16 | Int(raw[offset + 2]) << 8 | Int(raw[offset + 3])
                let type = raw[(offset + 4)..<(offset + 8)]
                guard length >= 0, offset + 12 + length <= raw.count else { return nil }
                if type.elementsEqual("eXIf".utf8) { return parseTIFF(Array(raw[(offset + 8)..<(offset + 8 + length)])) }
                if type.elementsEqual("IDAT".utf8) || type.elementsEqual("IEND".utf8) { return nil }
                offset += 12 + length
            }
            return nil
        }
    }

    /// The EXIF of a WebP (an `EXIF` chunk of the extended format), or nil.
    static func read(webp data: Data) -> ExifInfo? {
        data.withUnsafeBytes { raw -> ExifInfo? in
            var offset = 12
            while offset + 8 <= raw.count {
                let length = Int(raw[offset + 4]) | Int(raw[offset + 5]) << 8 | Int(raw[offset + 6]) << 16 | Int(raw[offset + 7]) << 24
                guard length >= 0, offset + 8 + length <= raw.count else { return nil }
                if raw[offset..<(offset + 4)].elementsEqual("EXIF".utf8) {
                    var tiff = Array(raw[(offset + 8)..<(offset + 8 + length)])
                    if tiff.starts(with: Array("Exif\0\0".utf8)) { tiff.removeFirst(6) } // some writers keep the JPEG prefix
                    return parseTIFF(tiff)
                }
                offset += 8 + length + (length % 2)
            }
            return nil
        }
    }

    static func parseTIFF(_ tiff: [UInt8]) -> ExifInfo? {
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return bigEndian ? Int(tiff[at]) << 8 | Int(tiff[at + 1]) : Int(tiff[at + 1]) << 8 | Int(tiff[at])
        }
        func u32(_ at: Int) -> Int? {
            guard let high = u16(bigEndian ? at : at + 2), let low = u16(bigEndian ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard u16(2) == 42, let ifd0 = u32(4) else { return nil }
        var info = ExifInfo()
        var exifIFD: Int?

        /// Calls `body(tag, type, count, valueOffset)` for each entry of the IFD at `at`.
        func entries(_ at: Int, _ body: (Int, Int, Int, Int) -> Void) {
            guard let count = u16(at), count < 1_000 else { return }
            for index in 0..<count {
                let entry = at + 2 + index * 12
                guard let tag = u16(entry), let type = u16(entry + 2), let n = u32(entry + 4) else { return }
                body(tag, type, n, entry + 8)
            }
        }
        func ascii(type: Int, count: Int, field: Int) -> String? {
            guard type == 2, count > 0, count < 4_096 else { return nil }
            let start = count <= 4 ? field : (u32(field) ?? -1)
            guard start >= 0, start + count <= tiff.count else { return nil }
            let text = String(decoding: tiff[start..<(start + count)].prefix { $0 != 0 }, as: UTF8.self)
            return text.trimmingCharacters(in: .whitespaces).isEmpty ? nil : text.trimmingCharacters(in: .whitespaces)
        }

        entries(ifd0) { tag, type, count, field in
            switch tag {
            case 0x0112:
                // SHORT as the specification says; some writers use LONG.
                let value = type == 3 ? u16(field) : (type == 4 ? u32(field) : nil)
                if let value, (1...8).contains(value) { info.orientation = value }
            case 0x010F: info.make = ascii(type: type, count: count, field: field)
            case 0x0110: info.model = ascii(type: type, count: count, field: field)
            case 0x013B: info.artist = ascii(type: type, count: count, field: field)
            case 0x8298: info.copyright = ascii(type: type, count: count, field: field)
            case 0x8769: exifIFD = u32(field)
            case 0x8825: info.hasGPS = (u32(field) ?? 0) > 0
            default: break
            }
        }
        if let exifIFD, exifIFD != ifd0 {
            entries(exifIFD) { tag, type, count, field in
                if tag == 0x9003 { info.dateTaken = ascii(type: type, count: count, field: field) }
            }
        }
        return info
    }
}

/// EXIF orientations applied to pixels.
enum Orientation {
    /// Whether `orientation` swaps width and height.
    static func swapsAxes(_ orientation: Int) -> Bool { (5...8).contains(orientation) }

    /// The upright image for pixels stored with `orientation`.
    static func apply(_ orientation: Int, to bitmap: Bitmap) -> Bitmap {
        guard (2...8).contains(orientation) else { return bitmap }
        let w = bitmap.width, h = bitmap.height
        let (outWidth, outHeight) = swapsAxes(orientation) ? (h, w) : (w, h)
        var result = Bitmap(width: outWidth, height: outHeight, pixelFormat: bitmap.pixelFormat)
        // The stored pixel shown at (x, y) is (sx, sy) = origin + x × across + y × down.
        let (origin, across, down): ((Int, Int), (Int, Int), (Int, Int)) = switch orientation {
        case 2: ((w - 1, 0), (-1, 0), (0, 1))          // (w − 1 − x, y)
        case 3: ((w - 1, h - 1), (-1, 0), (0, -1))     // (w − 1 − x, h − 1 − y)
        case 4: ((0, h - 1), (1, 0), (0, -1))          // (x, h − 1 − y)
        case 5: ((0, 0), (0, 1), (1, 0))               // (y, x)
        case 6: ((0, h - 1), (0, -1), (1, 0))          // (y, h − 1 − x)
        case 7: ((w - 1, h - 1), (0, -1), (-1, 0))     // (w − 1 − y, h − 1 − x)
        default: ((w - 1, 0), (0, 1), (-1, 0))         // 8: (w − 1 − y, x)
        }
        // Whole pixels at a time (rows start on 64-byte boundaries, so every pixel is aligned).
        func remap<Pixel>(_ type: Pixel.Type) {
            let sourceRow = bitmap.rowBytes / MemoryLayout<Pixel>.stride, outRow = result.rowBytes / MemoryLayout<Pixel>.stride
            let start = origin.0 + origin.1 * sourceRow, stepX = across.0 + across.1 * sourceRow, stepY = down.0 + down.1 * sourceRow
            bitmap.withUnsafeBytes { source in
                result.withUnsafeMutableBytes { destination in
                    let from = source.baseAddress!.assumingMemoryBound(to: Pixel.self)
                    let to = destination.baseAddress!.assumingMemoryBound(to: Pixel.self)
                    for y in 0..<outHeight {
                        var index = start + y * stepY
                        let row = to + y * outRow
                        for x in 0..<outWidth {
                            row[x] = from[index]
                            index += stepX
                        }
                    }
                }
            }
        }
        switch bitmap.pixelFormat.bytesPerPixel {
        case 4: remap(UInt32.self)
        default: remap(UInt8.self)
        }
        if bitmap.isKnownOpaque { result.markOpaque() }
        return result
    }
}
