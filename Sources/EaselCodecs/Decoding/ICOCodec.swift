import EaselSupport
import Foundation

/// ICO and CUR by a decoder of our own: a directory of images, each a PNG or a headerless BMP
/// (a DIB whose height counts its colours and its 1-bit AND mask). `info` describes the largest
/// entry and lists the others of its shape (`ImageInfo.entrySizes`); `decode(covering:)` reads the
/// smallest entry that still covers the size asked for, so a 16-pixel favicon comes from the
/// icon's hand-drawn 16-pixel image rather than a shrunk 256-pixel one.
///
/// Each entry's size is read from its own header (the directory's bytes, one byte a side, are
/// only hints and may lie); an entry that cannot be read is skipped, and a file with none that
/// can be is corrupt.
enum ICOCodec {
    /// At most this many directory entries are looked at (real icons have a handful).
    static let maxEntries = 256

    struct Entry {
        var width: Int, height: Int
        var bitCount: Int
        var range: Range<Int>
        var isPNG: Bool
        var area: Int { Int.checkedProduct(width, height) ?? .max }
    }

    static func corrupt(_ reason: String) -> CodecError { .corrupt(format: .ico, reason: reason) }
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The entries that can be read, best first (largest, then deepest).
    static func entries(_ data: Data, limits: DecodingLimits) throws(CodecError) -> [Entry] {
        let r = BMPCodec.Reader(data: data)
        guard try r.u16(0) == 0, [1, 2].contains(try r.u16(2)) else { throw corrupt("no icon directory") }
        let count = Int(try r.u16(4))
        guard count > 0 else { throw corrupt("an icon with no images") }
        guard count <= maxEntries else { throw corrupt("\(count) images in one icon (at most \(maxEntries) are read)") }
        var found: [Entry] = []
        for index in 0..<count {
            let at = 6 + index * 16
            let size = Int(try r.u32(at + 8)), offset = Int(try r.u32(at + 12))
            guard size > 0, offset >= 6 + count * 16, offset <= data.count, size <= data.count - offset else { continue }
            let range = offset..<(offset + size)
            // A view, not a copy: entries may all name the same megabytes.
            let bytes = data[(data.startIndex + offset)..<(data.startIndex + offset + size)]
            if bytes.starts(with: pngSignature) {
                // IHDR's width and height (big-endian, bytes 16–23); the decode checks them again.
                guard let width = try? Int(r.u32BE(offset + 16)), let height = try? Int(r.u32BE(offset + 20)),
                      width > 0, height > 0 else { continue }
                found.append(Entry(width: width, height: height, bitCount: 32, range: range, isPNG: true))
            } else {
                guard let header = try? BMPCodec.dibHeader(bytes, at: 0, pixelOffset: nil, icon: true) else { continue }
                found.append(Entry(width: header.width, height: header.height, bitCount: header.bitCount, range: range, isPNG: false))
            }
        }
        guard !found.isEmpty else { throw corrupt("no readable image in the icon") }
        // (Sides read from a PNG's header reach 2³²−1: areas without overflow.)
        return found.sorted { ($0.area, $0.bitCount) > ($1.area, $1.bitCount) }
    }

    static func info(_ data: Data, limits: DecodingLimits = .default) throws(CodecError) -> ImageInfo {
        let all = try entries(data, limits: limits)
        let best = all[0]
        try limits.check(width: best.width, height: best.height)
        var info = ImageInfo(fileType: .ico, width: best.width, height: best.height, hasAlpha: true, isGrayscale: false,
                             isProgressive: false)
        info.entrySizes = sizes(all)
        return info
    }

    /// The smaller entries' sizes of the largest one's shape, largest first, one of each size.
    static func sizes(_ all: [Entry]) -> [ImageInfo.EntrySize] {
        let best = all[0]
        var seen = Set<[Int]>()
        return all.dropFirst().compactMap { entry in
            // The same shape: width/height equal to the largest's, to a pixel.
            guard abs(Double(entry.width) * Double(best.height) - Double(entry.height) * Double(best.width)) < Double(max(best.width, best.height)),
                  entry.width < best.width, seen.insert([entry.width, entry.height]).inserted else { return nil }
            return ImageInfo.EntrySize(width: entry.width, height: entry.height)
        }
    }

    /// The entry `covering` asks for: the smallest of the largest's shape whose sides both reach
    /// it (the deepest of that size), else the largest.
    static func chosen(_ all: [Entry], covering minimumSize: (width: Int, height: Int)?) -> Entry {
        let best = all[0]
        guard let minimumSize else { return best }
        let size = ImageDecoder.entrySize(ImageInfo.EntrySize(width: best.width, height: best.height),
                                          sizes(all), covering: minimumSize)
        return all.first { $0.width == size.width && $0.height == size.height } ?? best
    }

    static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)?,
                       pixelFormat: Bitmap.PixelFormat, limits: DecodingLimits) throws(CodecError) -> Bitmap {
        let all = try entries(data, limits: limits)
        guard all[0].width == info.width, all[0].height == info.height else { throw corrupt("the icon changed size") }
        let entry = chosen(all, covering: minimumSize)
        let bytes = data.subdata(in: (data.startIndex + entry.range.lowerBound)..<(data.startIndex + entry.range.upperBound))
        let bitmap: Bitmap
        if entry.isPNG {
            let pngInfo = try pngInfo(bytes, limits: limits)
            guard pngInfo.width == entry.width, pngInfo.height == entry.height else { throw corrupt("its PNG image changed size") }
            do { bitmap = try PNGCodec.decode(bytes, info: pngInfo, pixelFormat: .rgba8) } catch {
                throw corrupt("its PNG image: \((error as? CodecError)?.description ?? "\(error)")")
            }
        } else {
            let header = try BMPCodec.dibHeader(bytes, at: 0, pixelOffset: nil, icon: true)
            let andMask = header.pixelOffset + header.rowStride * header.height
            bitmap = try BMPCodec.decodePixels(bytes, header: header, andMask: andMask)
        }
        return bitmap.converted(to: pixelFormat)
    }

    private static func pngInfo(_ bytes: Data, limits: DecodingLimits) throws(CodecError) -> ImageInfo {
        do { return try PNGCodec.info(bytes, limits: limits) } catch { throw corrupt("its PNG image: \(error)") }
    }
}

extension ICOCodec {
    /// The largest side an icon entry may have (its directory gives one byte a side, 0 for 256).
    static let maxEncodedSide = 256

    /// An icon of one PNG entry (what browsers take as a favicon, at any depth with alpha).
    /// - Throws: `CodecError.encodingFailed` for a side over 256 pixels (no reader takes more).
    static func encode(_ bitmap: Bitmap) throws -> Data {
        guard bitmap.width <= maxEncodedSide, bitmap.height <= maxEncodedSide else {
            throw CodecError.encodingFailed(format: .ico, reason: "an icon is at most \(maxEncodedSide) pixels a side (this one is \(bitmap.width)×\(bitmap.height))")
        }
        let png = try PNGCodec.encode(bitmap, compressionLevel: 9)
        var out = Data([0, 0, 1, 0, 1, 0])  // an icon of one entry
        out.append(contentsOf: [UInt8(bitmap.width % 256), UInt8(bitmap.height % 256), 0, 0, 1, 0, 32, 0])
        withUnsafeBytes(of: UInt32(png.count).littleEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(22).littleEndian) { out.append(contentsOf: $0) }
        out.append(png)
        return out
    }
}
