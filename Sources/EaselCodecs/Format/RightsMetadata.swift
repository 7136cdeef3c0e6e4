import Foundation

/// The only metadata an output may carry besides an ICC profile: who made the image and who
/// holds its rights (EXIF Artist and Copyright). Outputs carry no metadata at all by default;
/// `ImageEncoder.encode(_:as:iccProfile:rights:)` writes these two fields, and nothing else
/// (no GPS, camera, dates or thumbnails), as a minimal EXIF block: a JPEG APP1 segment, a PNG
/// `eXIf` chunk or a WebP `EXIF` chunk (AVIF outputs carry none).
public struct RightsMetadata: Sendable, Hashable {
    /// The EXIF Artist: who made the image; nil leaves the field out.
    public var artist: String?
    /// The EXIF Copyright: who holds the image's rights; nil leaves the field out.
    public var copyright: String?

    /// Rights fields with the given values; each is written as printable text of at most 1,024
    /// bytes, and one that is nil (or empty once cleaned) is left out.
    public init(artist: String? = nil, copyright: String? = nil) {
        self.artist = artist
        self.copyright = copyright
    }

    /// The rights fields of a source's EXIF; nil when it has neither.
    public init?(_ exif: ExifInfo?) {
        guard let exif, exif.artist != nil || exif.copyright != nil else { return nil }
        self.init(artist: exif.artist, copyright: exif.copyright)
    }

    /// A big-endian TIFF structure with one IFD of the ASCII fields present (printable text,
    /// at most 1,024 bytes each).
    var tiff: [UInt8] {
        func clean(_ text: String?) -> [UInt8]? {
            guard let text else { return nil }
            let bytes = Array(text.utf8.filter { $0 >= 0x20 && $0 != 0x7F }.prefix(1_024))
            return bytes.isEmpty ? nil : bytes + [0]
        }
        let fields = [(0x013B, clean(artist)), (0x8298, clean(copyright))].compactMap { tag, value in value.map { (tag, $0) } }
        func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v & 0xFFFF) }
        var bytes: [UInt8] = [0x4D, 0x4D] + be16(42) + be32(8)
        let ifdSize = 2 + fields.count * 12 + 4
        var data: [UInt8] = []
        bytes += be16(fields.count)
        for (tag, value) in fields {
            bytes += be16(tag) + be16(2) + be32(value.count)
            if value.count <= 4 {
                bytes += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                bytes += be32(8 + ifdSize + data.count)
                data += value
                if data.count % 2 == 1 { data.append(0) }  // values start on word boundaries
            }
        }
        return bytes + be32(0) + data
    }

    /// `encoded` (a JPEG, PNG or WebP from `ImageEncoder`) with the EXIF block added.
    func inserted(into encoded: Data, format: ImageFileType) -> Data {
        let tiff = self.tiff
        switch format {
        case .jpeg:
            // APP1 right after SOI and any JFIF APP0.
            let segment: [UInt8] = [0xFF, 0xE1] + [UInt8((tiff.count + 8) >> 8), UInt8((tiff.count + 8) & 0xFF)]
                + Array("Exif\0\0".utf8) + tiff
            var offset = 2
            if encoded.count > 6, encoded[encoded.startIndex + 2] == 0xFF, encoded[encoded.startIndex + 3] == 0xE0 {
                offset += 2 + (Int(encoded[encoded.startIndex + 4]) << 8 | Int(encoded[encoded.startIndex + 5]))
            }
            var result = Data(encoded.prefix(offset))
            result.append(contentsOf: segment)
            result.append(encoded.dropFirst(offset))
            return result
        case .png:
            // eXIf after IHDR (8-byte signature, then IHDR's 25 bytes).
            let type = Array("eXIf".utf8)
            let crc = CRC32.compute(type + tiff)
            let chunk: [UInt8] = [UInt8(tiff.count >> 24 & 0xFF), UInt8(tiff.count >> 16 & 0xFF), UInt8(tiff.count >> 8 & 0xFF),
                                  UInt8(tiff.count & 0xFF)] + type + tiff
                + [UInt8(crc >> 24 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
            var result = Data(encoded.prefix(33))
            result.append(contentsOf: chunk)
            result.append(encoded.dropFirst(33))
            return result
        case .webp:
            return WebPContainer.addingEXIF(tiff, to: encoded) ?? encoded
        default:
            return encoded
        }
    }
}

/// CRC-32 (ISO 3309, as PNG uses).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func compute(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}

/// The RIFF container of WebP, for adding a chunk.
enum WebPContainer {
    /// `webp` with an EXIF chunk: a simple file becomes an extended one (a VP8X header with
    /// the EXIF flag, and the alpha flag for a lossless image that uses alpha); an extended file
    /// gets the flag and the chunk at its end. Nil when the file is not a WebP this reads.
    static func addingEXIF(_ exif: [UInt8], to webp: Data) -> Data? {
        let bytes = Array(webp)
        guard bytes.count >= 30, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) else { return nil }
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8 & 255), UInt8(v >> 16 & 255), UInt8(v >> 24 & 255)] }
        func le24(_ v: Int) -> [UInt8] { [UInt8(v & 255), UInt8(v >> 8 & 255), UInt8(v >> 16 & 255)] }
        let first = String(decoding: bytes[12..<16], as: UTF8.self)
        var chunks: [UInt8]
        switch first {
        case "VP8X":
            chunks = Array(bytes[12...])
            chunks[8] |= 0x08  // EXIF present
        case "VP8 ", "VP8L":
            var features = (width: 0, height: 0, alpha: false)
            if first == "VP8 ", bytes.count >= 30 {
                features.width = (Int(bytes[26]) | Int(bytes[27]) << 8) & 0x3FFF
                features.height = (Int(bytes[28]) | Int(bytes[29]) << 8) & 0x3FFF
            } else if bytes.count >= 25 {
                let bits = Int(bytes[21]) | Int(bytes[22]) << 8 | Int(bytes[23]) << 16 | Int(bytes[24]) << 24
                features = ((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1, bits >> 28 & 1 == 1)
            }
            guard features.width > 0, features.height > 0 else { return nil }
            chunks = Array("VP8X".utf8) + le32(10) + [0x08 | (features.alpha ? 0x10 : 0), 0, 0, 0]
                + le24(features.width - 1) + le24(features.height - 1) + Array(bytes[12...])
        default:
            return nil
        }
        chunks += Array("EXIF".utf8) + le32(exif.count) + exif + (exif.count % 2 == 1 ? [0] : [])
        return Data(Array("RIFF".utf8) + le32(4 + chunks.count) + Array("WEBP".utf8) + chunks)
    }
}
