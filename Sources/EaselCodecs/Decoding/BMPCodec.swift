import CInput
import Foundation

/// BMP by a decoder of our own (Debian has no small BMP library): Windows bitmaps with any of the
/// header versions (OS/2 1.x's 12 bytes, 40, 52, 56, 108 and 124), 1, 2, 4 and 8 bits through a
/// palette, 16 and 32 bits through bit fields (5-5-5 and 8-8-8 by default), 24 bits, RLE8 and
/// RLE4, bottom-up and top-down rows, and an embedded ICC profile (V5's `PROFILE_EMBEDDED`; a
/// linked profile, a file name, is never opened). The same code reads the bitmaps inside ICO and
/// CUR files (`ICOCodec`).
///
/// Every offset and size comes from hostile bytes: each is checked against the input before it
/// is read, the size against the limits before any pixel memory is allocated, and pixel data
/// shorter than the header says is a `corrupt` error, found before any pixel memory is allocated
/// for uncompressed rows (RLE's length is known only by decoding it: its bitmap, within the
/// limits, is allocated first). Runs past the right edge are counted, not drawn.
enum BMPCodec {
    enum Compression: Equatable { case rgb, rle8, rle4, bitFields }

    /// What a DIB header says, with every offset absolute in the input.
    struct Header {
        var width: Int
        /// The height as drawn (an icon's DIB stores twice this: its colours, then its AND mask).
        var height: Int
        var topDown: Bool
        var bitCount: Int
        var compression: Compression
        /// Red, green, blue and alpha masks (bit fields, and the defaults for 16 and 32 bits).
        var masks: [UInt32]
        var palette: [UInt32]  // 0xAARRGGBB, opaque
        var pixelOffset: Int
        var profile: Range<Int>?
        /// The stored pixels can carry alpha: an alpha mask, 32-bit pixels with a fourth byte
        /// (used when any is non-zero), or RLE's skipped pixels.
        var mayHaveAlpha: Bool

        var rowStride: Int { ((width * bitCount + 31) / 32) * 4 }

        /// The bitmap row that row `fileRow` of the stored pixels is drawn on.
        @inline(__always)
        func destinationRow(_ fileRow: Int) -> Int { topDown ? fileRow : height - 1 - fileRow }
    }

    static func corrupt(_ reason: String) -> CodecError { .corrupt(format: .bmp, reason: reason) }

    static func info(_ data: Data, limits: DecodingLimits = .default) throws(CodecError) -> ImageInfo {
        let header = try fileHeader(data)
        var info = ImageInfo(fileType: .bmp, width: header.width, height: header.height, hasAlpha: header.mayHaveAlpha, isGrayscale: false, isProgressive: false)
        info.colorProfile = profile(header, in: data, limit: limits.maxProfileBytes)
        // A shrinking decode's band: up to 8 full-width rows.
        if scales(info) { info.shrunkDecodeWorkingBytes = Int.checkedProduct(header.width, min(8, header.height) * 4) ?? .max }
        return info
    }

    static func decode(_ data: Data, info: ImageInfo, pixelFormat: Bitmap.PixelFormat, limits: DecodingLimits) throws(CodecError) -> Bitmap {
        let header = try fileHeader(data)
        guard header.width == info.width, header.height == info.height else { throw corrupt("the header changed size") }
        return try decodePixels(data, header: header, andMask: nil).converted(to: pixelFormat)
    }

    /// Whether a decode may shrink on load: uncompressed rows with no alpha (24-bit, indexed,
    /// and 16- or 32-bit bit fields without an alpha mask), the BMPs large photos come as.
    static func scales(_ info: ImageInfo) -> Bool { info.fileType == .bmp && !info.hasAlpha }

    /// The image shrunk on load by `factor` (2, 4 or 8; `JPEGCodec.scaleDenominator`): read in
    /// bands of `factor` rows in the file's order, each `factor × factor` block (the last ones
    /// partial) becoming its mean, so the full-size bitmap never exists; a mapped file's pages
    /// are handed back as the bands go by.
    static func decodeShrunk(_ data: Data, info: ImageInfo, factor: Int) throws(CodecError) -> Bitmap {
        let header = try fileHeader(data)
        guard header.width == info.width, header.height == info.height else { throw corrupt("the header changed size") }
        guard !header.mayHaveAlpha, header.compression == .rgb || header.compression == .bitFields, factor > 1 else {
            throw .invalidParameters("this BMP does not shrink on load")
        }
        let (width, height, stride) = (header.width, header.height, header.rowStride)
        let needed = stride * (height - 1) + (width * header.bitCount + 7) / 8
        guard header.pixelOffset + needed <= data.count else { throw corrupt("pixel data shorter than the header says") }
        var result = Bitmap(width: (width + factor - 1) / factor, height: (height + factor - 1) / factor, pixelFormat: .rgba8)
        let outWidth = result.width, outHeight = result.height, outRowBytes = result.rowBytes
        var band = Bitmap(width: width, height: min(factor, height), pixelFormat: .rgba8)
        let bandRowBytes = band.rowBytes
        var sums = [UInt32](repeating: 0, count: outWidth * 3)
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            let source = input.bindMemory(to: UInt8.self)
            result.withUnsafeMutableBytes { output in
                band.withUnsafeMutableBytes { bandBytes in
                    let pixels = bandBytes.bindMemory(to: UInt8.self)
                    // Output rows in the file's order (bottom-up files from the last), so the file is read forward.
                    for step in 0..<outHeight {
                        let outRow = header.topDown ? step : outHeight - 1 - step
                        let top = outRow * factor, rows = min(factor, height - top)
                        // The band's rows as a BMP of their own: its first file row and its height.
                        var part = header
                        part.height = rows
                        part.pixelOffset = header.pixelOffset + (header.topDown ? top : height - top - rows) * stride
                        _ = decodeRows(source, header: part, andMask: nil, into: pixels, rowBytes: bandRowBytes)
                        for index in sums.indices { sums[index] = 0 }
                        for y in 0..<rows {
                            let row = y * bandRowBytes
                            for x in 0..<width {
                                let at = row + x * 4, sum = (x / factor) * 3
                                sums[sum] += UInt32(pixels[at])
                                sums[sum + 1] += UInt32(pixels[at + 1])
                                sums[sum + 2] += UInt32(pixels[at + 2])
                            }
                        }
                        for x in 0..<outWidth {
                            let count = UInt32(min(factor, width - x * factor) * rows)
                            let at = outRow * outRowBytes + x * 4
                            output[at] = UInt8((sums[x * 3] + count / 2) / count)
                            output[at + 1] = UInt8((sums[x * 3 + 1] + count / 2) / count)
                            output[at + 2] = UInt8((sums[x * 3 + 2] + count / 2) / count)
                            output[at + 3] = 255
                        }
                        if let base = input.baseAddress { easel_input_release(base + min(input.count, part.pixelOffset + rows * stride)) }
                    }
                }
            }
        }
        result.markOpaque()
        return result
    }

    static func profile(_ header: Header, in data: Data, limit: Int) -> EmbeddedProfile {
        guard let range = header.profile else { return .none }
        guard range.count <= limit else { return .tooLarge(bytes: range.count) }
        return ICCProfileReader.parse(data.subdata(in: (data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)))
    }

    /// The header of a BMP file: the 14-byte file header, then the DIB's.
    static func fileHeader(_ data: Data) throws(CodecError) -> Header {
        let bytes = [UInt8](data.prefix(14))
        guard bytes.count == 14, bytes[0] == 0x42, bytes[1] == 0x4D else { throw corrupt("no BMP file header") }
        let offset = Int(UInt32(bytes[10]) | UInt32(bytes[11]) << 8 | UInt32(bytes[12]) << 16 | UInt32(bytes[13]) << 24)
        return try dibHeader(data, at: 14, pixelOffset: offset, icon: false)
    }

    /// Reads a little-endian field; every read is bounds-checked.
    struct Reader {
        let data: Data
        func u8(_ offset: Int) throws(CodecError) -> UInt8 {
            guard offset >= 0, offset < data.count else { throw corrupt("truncated header") }
            return data[data.startIndex + offset]
        }
        func u16(_ offset: Int) throws(CodecError) -> UInt16 { try UInt16(u8(offset)) | UInt16(u8(offset + 1)) << 8 }
        func u32(_ offset: Int) throws(CodecError) -> UInt32 { try UInt32(u16(offset)) | UInt32(u16(offset + 2)) << 16 }
        func i32(_ offset: Int) throws(CodecError) -> Int32 { Int32(bitPattern: try u32(offset)) }
        func u32BE(_ offset: Int) throws(CodecError) -> UInt32 {
            try UInt32(u8(offset)) << 24 | UInt32(u8(offset + 1)) << 16 | UInt32(u8(offset + 2)) << 8 | UInt32(u8(offset + 3))
        }
    }

    /// The DIB header at `start`. `pixelOffset`: where a file header says the pixels are (nil in
    /// an icon, whose pixels follow the palette). `icon`: the height is doubled (colours and
    /// mask), and 32-bit pixels carry alpha.
    static func dibHeader(_ data: Data, at start: Int, pixelOffset: Int?, icon: Bool) throws(CodecError) -> Header {
        let r = Reader(data: data)
        let fields = try dibFields(r, at: start)
        let compression = try checkedCompression(fields)
        let (width, bitCount) = (fields.width, fields.bitCount)
        let topDown = fields.storedHeight < 0
        // (Int32.min's magnitude is 2^31: far over any limit, never an overflow in Int.)
        var height = abs(fields.storedHeight)
        if icon { height /= 2 }
        guard width > 0, height > 0 else { throw CodecError.noPixels(width: width, height: height) }
        if topDown, compression == .rle4 || compression == .rle8 { throw corrupt("top-down rows with RLE compression") }

        var afterHeader = start + fields.size
        var masks = try readMasks(r, fields, compression: compression, afterHeader: &afterHeader)
        let palette = try readPalette(r, fields, afterHeader: &afterHeader)
        let pixels: Int
        if let pixelOffset, pixelOffset >= afterHeader, pixelOffset < data.count { pixels = pixelOffset } else { pixels = afterHeader }
        // (An alpha mask counts only where bit fields are read: 16 and 32 bits.)
        let mayHaveAlpha = ((bitCount == 16 || bitCount == 32) && masks[3] != 0) || (bitCount == 32 && compression == .rgb) || compression == .rle4
            || compression == .rle8
        if bitCount == 32, compression == .rgb { masks[3] = 0xFF00_0000 }  // used only when some pixel's is non-zero
        return Header(width: width, height: height, topDown: topDown, bitCount: bitCount, compression: compression, masks: masks,
                      palette: palette, pixelOffset: pixels, profile: fields.profile, mayHaveAlpha: mayHaveAlpha)
    }

    /// A DIB header's fields as stored, not yet checked against each other.
    private struct DIBFields {
        /// The header's own size in bytes (12, 16, 40, 52, 56, 64, 108 or 124).
        let size: Int
        var width = 0, storedHeight = 0, bitCount = 0
        var rawCompression: UInt32 = 0
        var colorsUsed = 0
        /// Red, green, blue and alpha masks of a header long enough to hold them (else zero).
        var masks: [UInt32] = [0, 0, 0, 0]
        /// An embedded profile's bytes, absolute in the input.
        var profile: Range<Int>?
    }

    /// The fields the DIB header at `start` holds for its size, its embedded profile checked to
    /// lie in the input.
    private static func dibFields(_ r: Reader, at start: Int) throws(CodecError) -> DIBFields {
        let size = Int(try r.u32(start))
        var fields = DIBFields(size: size)
        switch size {
        case 12:  // OS/2 1.x: 16-bit sides, 3-byte palette entries
            fields.width = Int(try r.u16(start + 4))
            fields.storedHeight = Int(try r.u16(start + 6))
            fields.bitCount = Int(try r.u16(start + 10))
        case 16, 40, 52, 56, 64, 108, 124:
            fields.width = Int(try r.i32(start + 4))
            fields.storedHeight = Int(try r.i32(start + 8))
            fields.bitCount = Int(try r.u16(start + 14))
            if size >= 20 { fields.rawCompression = try r.u32(start + 16) }
            if size >= 36 { fields.colorsUsed = Int(try r.u32(start + 32)) }
            if size >= 52 { fields.masks = [try r.u32(start + 40), try r.u32(start + 44), try r.u32(start + 48), 0] }
            if size >= 56 { fields.masks[3] = try r.u32(start + 52) }
            if size == 124, try r.u32(start + 56) == 0x4D42_4544 {  // 'MBED': the profile is in the file
                let profileStart = Int(try r.u32(start + 112)), profileSize = Int(try r.u32(start + 116))
                let lower = start + profileStart
                guard profileSize > 0, lower >= start + size, lower + profileSize <= r.data.count else {
                    throw corrupt("embedded profile out of the file")
                }
                fields.profile = lower..<(lower + profileSize)
            }
        default:
            throw corrupt("a DIB header of \(size) bytes")
        }
        return fields
    }

    /// The compression the header names, refused when it is one this decoder does not read or
    /// does not go with the bit count.
    private static func checkedCompression(_ fields: DIBFields) throws(CodecError) -> Compression {
        let (size, rawCompression, bitCount) = (fields.size, fields.rawCompression, fields.bitCount)
        if size == 64 || size == 16, rawCompression == 3 || rawCompression == 4 {
            throw .unsupportedFormat("OS/2 BMP with Huffman or RLE24 compression")
        }
        let compression: Compression
        switch rawCompression {
        case 0: compression = .rgb
        case 1: compression = .rle8
        case 2: compression = .rle4
        case 3: compression = .bitFields
        case 6: compression = .bitFields  // BI_ALPHABITFIELDS
        case 4: throw .unsupportedFormat("BMP holding a JPEG")
        case 5: throw .unsupportedFormat("BMP holding a PNG")
        default: throw corrupt("compression \(rawCompression)")
        }
        switch (compression, bitCount) {
        case (.rgb, 1), (.rgb, 2), (.rgb, 4), (.rgb, 8), (.rgb, 16), (.rgb, 24), (.rgb, 32), (.rle8, 8), (.rle4, 4),
             (.bitFields, 16), (.bitFields, 32): break
        default: throw corrupt("\(bitCount) bits per pixel with \(compression) compression")
        }
        return compression
    }

    /// The red, green, blue and alpha masks: the header's, those after a 40-byte header
    /// (`afterHeader` moves past them), or the defaults for 16 and 32 bits without bit fields.
    private static func readMasks(_ r: Reader, _ fields: DIBFields, compression: Compression,
                                  afterHeader: inout Int) throws(CodecError) -> [UInt32] {
        var masks = fields.masks
        // Masks after a 40-byte header (BI_BITFIELDS: three, BI_ALPHABITFIELDS: four).
        if fields.size == 40, compression == .bitFields {
            masks = [try r.u32(afterHeader), try r.u32(afterHeader + 4), try r.u32(afterHeader + 8), 0]
            afterHeader += 12
            if fields.rawCompression == 6 {
                masks[3] = try r.u32(afterHeader)
                afterHeader += 4
            }
        }
        if compression != .bitFields {
            switch fields.bitCount {
            case 16: masks = [0x7C00, 0x03E0, 0x001F, 0]
            case 32: masks = [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0]
            default: break
            }
        }
        if fields.bitCount == 16, masks.contains(where: { $0 > 0xFFFF }) { throw corrupt("a 16-bit mask wider than 16 bits") }
        return masks
    }

    /// The palette at `afterHeader` (`afterHeader` moves past it) for 1 to 8 bits, filled out
    /// to `1 << bitCount` entries; empty for more bits.
    private static func readPalette(_ r: Reader, _ fields: DIBFields, afterHeader: inout Int) throws(CodecError) -> [UInt32] {
        let bitCount = fields.bitCount
        var palette: [UInt32] = []
        if bitCount <= 8 {
            let capacity = 1 << bitCount
            let count = fields.colorsUsed == 0 ? capacity : fields.colorsUsed
            guard count <= capacity else { throw corrupt("\(count) palette entries for \(bitCount) bits") }
            let entryBytes = fields.size == 12 ? 3 : 4
            palette.reserveCapacity(capacity)
            for index in 0..<count {
                let at = afterHeader + index * entryBytes
                let blue = try r.u8(at), green = try r.u8(at + 1), red = try r.u8(at + 2)
                palette.append(0xFF00_0000 | UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue))
            }
            // Indexes past the palette are black, as browsers draw them.
            palette += repeatElement(0xFF00_0000, count: capacity - count)
            afterHeader += count * entryBytes
        }
        return palette
    }

    /// The pixels as RGBA. `andMask`: an icon's 1-bit transparency rows, bottom-up (used when the
    /// colours carry no alpha of their own).
    static func decodePixels(_ data: Data, header: Header, andMask: Int?) throws(CodecError) -> Bitmap {
        // Uncompressed rows shorter than the header says: refused before any pixel memory (the
        // last row need not be padded).
        if header.compression == .rgb || header.compression == .bitFields {
            let needed = header.rowStride * (header.height - 1) + (header.width * header.bitCount + 7) / 8
            guard header.pixelOffset + needed <= data.count else { throw corrupt("pixel data shorter than the header says") }
        }
        var bitmap = Bitmap(width: header.width, height: header.height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        // Whether some pixel is not opaque.
        var transparent = false
        // (The buffer closures rethrow untyped errors: the failure is carried out of them.)
        var failure: CodecError?
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            let source = input.bindMemory(to: UInt8.self)
            bitmap.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) in
                do throws(CodecError) {
                    let pixels = output.bindMemory(to: UInt8.self)
                    switch header.compression {
                    case .rle8, .rle4:
                        try decodeRLEPixels(source, header: header, into: pixels, rowBytes: rowBytes)
                        transparent = true
                    case .rgb, .bitFields:
                        // (The rows' length was checked before the bitmap was allocated.)
                        transparent = decodeRows(source, header: header, andMask: andMask, into: pixels, rowBytes: rowBytes)
                    }
                } catch { failure = error }
            }
        }
        if let failure { throw failure }
        if !transparent { bitmap.markOpaque() }
        return bitmap
    }

    /// RLE8 or RLE4 pixels through the palette into RGBA `pixels`. (Skipped pixels stay
    /// transparent: a new bitmap is zero bytes.)
    private static func decodeRLEPixels(_ source: UnsafeBufferPointer<UInt8>, header: Header,
                                        into pixels: UnsafeMutableBufferPointer<UInt8>, rowBytes: Int) throws(CodecError) {
        try decodeRLE(source, header: header) { x, fileRow, index in
            storeOpaque(header.palette[Int(index)], in: pixels, at: header.destinationRow(fileRow) * rowBytes + x * 4)
        }
    }

    /// Uncompressed rows into RGBA `pixels`, then alpha that was never set made opaque and an
    /// icon's AND mask applied; whether some pixel is not opaque.
    private static func decodeRows(_ source: UnsafeBufferPointer<UInt8>, header: Header, andMask: Int?,
                                   into pixels: UnsafeMutableBufferPointer<UInt8>, rowBytes: Int) -> Bool {
        let (width, height) = (header.width, header.height)
        // Whether some pixel is not opaque, and whether some stored alpha is not zero.
        var transparent = false, anyAlpha = false
        switch header.bitCount {
        case 24: decodeBGRRows(source, header: header, into: pixels, rowBytes: rowBytes)
        case 16, 32: (transparent, anyAlpha) = decodeBitFieldRows(source, header: header, into: pixels, rowBytes: rowBytes)
        default: decodeIndexedRows(source, header: header, into: pixels, rowBytes: rowBytes)
        }
        // Alpha that is zero everywhere was never set (most writers leave the fourth
        // byte at 0): opaque, as browsers draw it.
        let hasOwnAlpha = (header.bitCount == 16 || header.bitCount == 32) && header.masks[3] != 0 && anyAlpha
        if header.bitCount == 16 || header.bitCount == 32, header.masks[3] != 0, !anyAlpha {
            for y in 0..<height { for x in 0..<width { pixels[y * rowBytes + x * 4 + 3] = 255 } }
            transparent = false
        }
        // An icon's AND mask: 1 is transparent. Used when the colours have no alpha.
        if let andMask, !hasOwnAlpha, applyAndMask(source, at: andMask, header: header, to: pixels, rowBytes: rowBytes) {
            transparent = true
        }
        return transparent
    }

    /// 24-bit rows (blue, green, red) into opaque RGBA `pixels`.
    private static func decodeBGRRows(_ source: UnsafeBufferPointer<UInt8>, header: Header,
                                      into pixels: UnsafeMutableBufferPointer<UInt8>, rowBytes: Int) {
        let stride = header.rowStride
        for fileRow in 0..<header.height {
            let row = header.pixelOffset + fileRow * stride
            var at = header.destinationRow(fileRow) * rowBytes
            for x in 0..<header.width {
                let p = row + x * 3
                pixels[at] = source[p + 2]
                pixels[at + 1] = source[p + 1]
                pixels[at + 2] = source[p]
                pixels[at + 3] = 255
                at += 4
            }
        }
    }

    /// 16- and 32-bit rows through the header's bit fields into RGBA `pixels`; whether some
    /// pixel is not opaque, and whether some stored alpha is not zero.
    private static func decodeBitFieldRows(_ source: UnsafeBufferPointer<UInt8>, header: Header,
                                           into pixels: UnsafeMutableBufferPointer<UInt8>, rowBytes: Int)
        -> (transparent: Bool, anyAlpha: Bool) {
        let stride = header.rowStride, width = header.width
        let fields = header.masks.map(Field.init)
        let four = header.bitCount == 32
        var transparent = false, anyAlpha = false
        for fileRow in 0..<header.height {
            let row = header.pixelOffset + fileRow * stride
            var at = header.destinationRow(fileRow) * rowBytes
            for x in 0..<width {
                let p = row + x * (four ? 4 : 2)
                var value = UInt32(source[p]) | UInt32(source[p + 1]) << 8
                if four { value |= UInt32(source[p + 2]) << 16 | UInt32(source[p + 3]) << 24 }
                pixels[at] = fields[0].value(value)
                pixels[at + 1] = fields[1].value(value)
                pixels[at + 2] = fields[2].value(value)
                let alpha = fields[3].mask == 0 ? 255 : fields[3].value(value)
                pixels[at + 3] = alpha
                if alpha != 0 { anyAlpha = true }
                if alpha != 255 { transparent = true }
                at += 4
            }
        }
        return (transparent, anyAlpha)
    }

    /// 1-, 2-, 4- and 8-bit rows (palette indexes, high bits first) into opaque RGBA `pixels`.
    private static func decodeIndexedRows(_ source: UnsafeBufferPointer<UInt8>, header: Header,
                                          into pixels: UnsafeMutableBufferPointer<UInt8>, rowBytes: Int) {
        let stride = header.rowStride
        let bits = header.bitCount, perByte = 8 / bits, low = UInt8((1 << bits) - 1)
        for fileRow in 0..<header.height {
            let row = header.pixelOffset + fileRow * stride
            var at = header.destinationRow(fileRow) * rowBytes
            for x in 0..<header.width {
                let byte = source[row + x / perByte]
                let index = (byte >> UInt8(8 - bits - (x % perByte) * bits)) & low
                storeOpaque(header.palette[Int(index)], in: pixels, at: at)
                at += 4
            }
        }
    }

    /// An icon's AND mask at `offset` (1-bit rows, bottom-up; 1 is transparent) applied to
    /// `pixels`, if the input holds all of it; whether it made some pixel transparent.
    private static func applyAndMask(_ source: UnsafeBufferPointer<UInt8>, at offset: Int, header: Header,
                                     to pixels: UnsafeMutableBufferPointer<UInt8>, rowBytes: Int) -> Bool {
        let (width, height) = (header.width, header.height)
        let maskStride = ((width + 31) / 32) * 4
        guard offset + maskStride * height <= source.count else { return false }
        var transparent = false
        for fileRow in 0..<height {
            let row = offset + fileRow * maskStride, y = header.destinationRow(fileRow)
            for x in 0..<width where source[row + x / 8] & (0x80 >> UInt8(x % 8)) != 0 {
                let at = y * rowBytes + x * 4
                pixels[at] = 0; pixels[at + 1] = 0; pixels[at + 2] = 0; pixels[at + 3] = 0
                transparent = true
            }
        }
        return transparent
    }

    /// Writes palette colour `color` (0xAARRGGBB) at `at` in `pixels` as opaque RGBA.
    @inline(__always)
    private static func storeOpaque(_ color: UInt32, in pixels: UnsafeMutableBufferPointer<UInt8>, at: Int) {
        pixels[at] = UInt8(truncatingIfNeeded: color >> 16)
        pixels[at + 1] = UInt8(truncatingIfNeeded: color >> 8)
        pixels[at + 2] = UInt8(truncatingIfNeeded: color)
        pixels[at + 3] = 255
    }

    /// One bit field: where it sits and how its values stretch to 0…255.
    struct Field {
        let mask: UInt32, shift: UInt32, maximum: UInt32
        init(_ mask: UInt32) {
            self.mask = mask
            shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
            maximum = mask >> shift
        }
        func value(_ pixel: UInt32) -> UInt8 {
            guard maximum != 0 else { return 0 }
            let v = (pixel & mask) >> shift
            if maximum == 255 { return UInt8(truncatingIfNeeded: v) }
            return UInt8(truncatingIfNeeded: (UInt64(v) * 255 + UInt64(maximum) / 2) / UInt64(maximum))
        }
    }

    /// RLE8 and RLE4: runs, absolute runs, end of line, end of bitmap and deltas; pixels outside
    /// the image are dropped, and the loop ends at the end of the input or of the bitmap.
    static func decodeRLE(_ source: UnsafeBufferPointer<UInt8>, header: Header, _ put: (Int, Int, UInt8) -> Void) throws(CodecError) {
        let four = header.compression == .rle4
        var p = header.pixelOffset, x = 0, row = 0
        // How many of `count` pixels from x fall inside the row (the rest are only counted: a
        // run past the width costs nothing, however many the input holds).
        func inside(_ count: Int) -> Int { max(0, min(count, header.width - x)) }
        while p + 1 < source.count, row < header.height {
            let count = Int(source[p]), value = source[p + 1]
            p += 2
            if count > 0 {
                for i in 0..<inside(count) { put(x + i, row, four ? (i % 2 == 0 ? value >> 4 : value & 0x0F) : value) }
                x += count
                continue
            }
            switch value {
            case 0: x = 0; row += 1
            case 1: return
            case 2:
                guard p + 1 < source.count else { throw corrupt("truncated RLE delta") }
                x += Int(source[p]); row += Int(source[p + 1])
                p += 2
            default:
                let n = Int(value), bytes = four ? (n + 1) / 2 : n
                guard p + bytes <= source.count else { throw corrupt("truncated RLE run") }
                for i in 0..<inside(n) {
                    let byte = source[p + (four ? i / 2 : i)]
                    put(x + i, row, four ? (i % 2 == 0 ? byte >> 4 : byte & 0x0F) : byte)
                }
                x += n
                p += bytes + (bytes % 2)  // runs are padded to 16 bits
            }
        }
    }
}

extension BMPCodec {
    /// A BMP of `bitmap`: 24-bit rows when it is opaque, else 32-bit with an alpha bit field (a
    /// V4 header, which browsers, Windows and Pillow read with its alpha). Bottom-up rows, as
    /// every reader expects.
    static func encode(_ bitmap: Bitmap) -> Data {
        let rgba = bitmap.converted(to: .rgba8)
        let alpha = rgba.hasTransparentPixels
        let (width, height) = (rgba.width, rgba.height)
        let bits = alpha ? 32 : 24
        let stride = ((width * bits + 31) / 32) * 4
        let headerSize = alpha ? 108 : 40
        let offset = 14 + headerSize, size = offset + stride * height
        var out = [UInt8](repeating: 0, count: size)
        func put32(_ value: UInt32, at index: Int) { for byte in 0..<4 { out[index + byte] = UInt8(truncatingIfNeeded: value >> (byte * 8)) } }
        out[0] = 0x42; out[1] = 0x4D
        put32(UInt32(truncatingIfNeeded: size), at: 2)
        put32(UInt32(offset), at: 10)
        put32(UInt32(headerSize), at: 14)
        put32(UInt32(width), at: 18)
        put32(UInt32(height), at: 22)
        out[26] = 1
        out[28] = UInt8(bits)
        put32(alpha ? 3 : 0, at: 30)  // BI_BITFIELDS with the masks below, or BI_RGB
        put32(UInt32(truncatingIfNeeded: stride * height), at: 34)
        put32(2835, at: 38); put32(2835, at: 42)  // 72 dpi
        if alpha {
            put32(0x00FF_0000, at: 54); put32(0x0000_FF00, at: 58); put32(0x0000_00FF, at: 62); put32(0xFF00_0000, at: 66)
            put32(0x7352_4742, at: 70)  // 'sRGB'
        }
        rgba.withUnsafeBytes { pixels in
            for y in 0..<height {
                let source = (height - 1 - y) * rgba.rowBytes
                var at = offset + y * stride
                for x in 0..<width {
                    let p = source + x * 4
                    out[at] = pixels[p + 2]; out[at + 1] = pixels[p + 1]; out[at + 2] = pixels[p]
                    if alpha { out[at + 3] = pixels[p + 3] }
                    at += bits / 8
                }
            }
        }
        return Data(out)
    }
}
