import CTIFF
import Foundation

/// TIFF through libtiff, read from memory with libtiff's own allocations capped: strips and
/// tiles, 1 to 16 bits a sample (16 scaled to 8), gray, RGB, palette, YCbCr, CMYK (through its
/// ICC profile when it has one, as CMYK JPEGs are; else libtiff's naive formula), alpha
/// (associated or not, made straight), the orientation tag (applied as EXIF's is), and the
/// first page of a multi-page file (pages are counted, up to one past `DecodingLimits.maxFrames`
/// directories: a file of ten thousand costs no more than one of 257). A pyramidal file's levels
/// (pages marked reduced-resolution, 2, 4 and 8 times smaller) are read instead of the first
/// page when a decode shrinks (`ImageInfo.reducedPages`).
enum TIFFCodec {
    static let photometricSeparated: Int32 = 5

    static func info(_ data: Data, limits: DecodingLimits = .default, page: Int = 0) throws -> ImageInfo {
        var header = easel_tiff_info()
        try read(data, into: &header, icc: nil, limits: limits, page: page)
        var profile = EmbeddedProfile.none
        if header.icc_size > 0 {
            let size = Int(header.icc_size)
            if size > limits.maxProfileBytes {
                profile = .tooLarge(bytes: size)
            } else {
                var icc = [UInt8](repeating: 0, count: size)
                try icc.withUnsafeMutableBufferPointer { try read(data, into: &header, icc: $0, limits: limits, page: page) }
                profile = ICCProfileReader.parse(Data(icc))
            }
        }
        var info = ImageInfo(fileType: .tiff, width: Int(header.width), height: Int(header.height), hasAlpha: header.has_alpha != 0, isGrayscale: header.is_gray != 0, isProgressive: false)
        info.colorProfile = profile
        info.frameCount = Int(header.pages)
        info.bitDepth = Int(header.bits_per_sample)
        info.containerOrientation = Int(header.orientation)
        info.shrunkDecodeWorkingBytes = Int(clamping: header.shrunk_working_bytes)
        let levels = [header.reduced_pages.0, header.reduced_pages.1, header.reduced_pages.2]
        for (index, level) in levels.enumerated() where level > 0 { info.reducedPages[2 << index] = Int(level) }
        return info
    }

    private static func read(_ data: Data, into header: inout easel_tiff_info, icc: UnsafeMutableBufferPointer<UInt8>?,
                             limits: DecodingLimits, page: Int) throws {
        var why = ""
        let result = try callShim(data, format: .tiff, messageSize: EASEL_TIFF_MESSAGE_SIZE) { bytes, count, message in
            // Directories are counted to one past the frame limit, or to the page asked for.
            let result = easel_tiff_read_info(bytes, count, Int32(clamping: page), Int32(clamping: max(limits.maxFrames, page + 1)), &header,
                                              icc?.baseAddress, icc?.count ?? 0, message)
            if result == 2 { why = cMessage(message) }
            return result
        }
        if result == 2 { throw CodecError.unsupportedFormat("TIFF (\(why))") }
        if result == 3 { throw CodecError.noSuchPage(page: page, pages: Int(header.pages)) }
    }

    /// Whether a decode of this page may shrink on load: every page but one with a CMYK profile
    /// (whose raw samples the profile converts, `decode(_:info:rawCMYK:)`).
    static func scales(_ info: ImageInfo) -> Bool { info.fileType == .tiff && info.colorProfile.profile?.colorSpace != .cmyk }

    /// The decode by `factor` (a power of 2) from a pyramidal file's level: the page of the
    /// largest level that divides it, as an info of that page's size and the factor left to
    /// shrink it by (1: none); nil when the file has no such level.
    static func level(of info: ImageInfo, factor: Int) -> (info: ImageInfo, factor: Int)? {
        guard let levelFactor = [8, 4, 2].first(where: { $0 <= factor && factor % $0 == 0 && info.reducedPages[$0] != nil }),
              let page = info.reducedPages[levelFactor] else { return nil }
        var level = info
        level.page = page
        level.width = (info.width + levelFactor - 1) / levelFactor
        level.height = (info.height + levelFactor - 1) / levelFactor
        level.reducedPages = [:]
        return (level, factor / levelFactor)
    }

    /// The page shrunk on load by `factor` (2, 4 or 8; `JPEGCodec.scaleDenominator`): read in
    /// bands of strips or tile rows, each block of `factor × factor` pixels becoming its mean, so
    /// the full-size raster never exists (`easel_tiff_decode_shrunk`). Stored orientation.
    static func decodeShrunk(_ data: Data, info: ImageInfo, factor: Int) throws -> Bitmap {
        var bitmap = Bitmap(width: (info.width + factor - 1) / factor, height: (info.height + factor - 1) / factor, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        try bitmap.withUnsafeMutableBytes { pixels in
            _ = try callShim(data, format: .tiff, messageSize: EASEL_TIFF_MESSAGE_SIZE) { bytes, count, message in
                easel_tiff_decode_shrunk(bytes, count, Int32(clamping: info.page), pixels.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                         rowBytes, Int32(info.width), Int32(info.height), Int32(factor), message)
            }
        }
        if !info.hasAlpha { bitmap.markOpaque() }
        return bitmap
    }

    /// The page's (`info.page`) pixels as stored (the caller applies the orientation). `rawCMYK`: an
    /// 8-bit CMYK page in strips comes as its raw samples (the second value says so) for its
    /// profile to convert.
    static func decode(_ data: Data, info: ImageInfo, rawCMYK: Bool) throws -> (Bitmap, cmyk: Bool) {
        var bitmap = Bitmap(width: info.width, height: info.height, pixelFormat: .rgba8)
        let rowBytes = bitmap.rowBytes
        var result: Int32 = 0
        try bitmap.withUnsafeMutableBytes { pixels in
            result = try callShim(data, format: .tiff, messageSize: EASEL_TIFF_MESSAGE_SIZE) { bytes, count, message in
                easel_tiff_decode(bytes, count, Int32(clamping: info.page), pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), rowBytes,
                                  Int32(info.width), Int32(info.height), rawCMYK ? 1 : 0, message)
            }
        }
        if !info.hasAlpha { bitmap.markOpaque() }
        return (bitmap, result == 3)
    }
}
