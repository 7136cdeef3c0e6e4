import EaselSupport
import Foundation

/// Reads encoded images: format by magic bytes, header facts without decoding, pixels within
/// limits.
///
/// ```swift
/// let info = try ImageDecoder.info(of: data)                       // size, alpha, progressive
/// let thumb = try ImageDecoder.decode(data, covering: (256, 256))  // JPEG: shrunk while decoding
/// ```
///
/// Decoding is CPU-bound and synchronous: async callers run it on their own executor or pool,
/// never on the cooperative pool's few threads.
public enum ImageDecoder {
    /// Format, size and flags from the header alone — the one place every image's size is
    /// checked, for every format and every caller, before anything is computed from it: each
    /// side at least 1, at most `limits.maxSide`, the pixels within `limits.maxPixels`, the
    /// frames counted up to one past `limits.maxFrames` (`AnimationReader` refuses more before
    /// decoding a frame). Decoders then allocate only this size and refuse a
    /// codestream whose real size differs from it.
    ///
    /// `page` picks a page of a document (TIFF, PDF: its own size) or a frame of an animated GIF
    /// or WebP (decoded as a still); 0, the first, by default. A page past the last, or any page
    /// but 0 of another format, is `noSuchPage`; one at or past both `limits.maxPages` and
    /// `limits.maxFrames` is refused before anything is counted (a frame past `maxFrames` is
    /// refused by the animation limits).
    /// `embeddedThumbnail` asks for a HEIC's or AVIF's embedded thumbnail instead of its primary
    /// image, when it has one (imgproxy's `enforce_thumbnail`; `ImageInfo.isEmbeddedThumbnail`
    /// says whether it did); other formats ignore it.
    /// `video` picks the frame of a video (MP4, QuickTime, Matroska, WebM) the image is made from
    /// (`ImageInfo.video` tells it, and the video's duration, codec and streams).
    /// `autoRotate` false leaves the EXIF orientation unapplied (`ImageInfo.ignoresExifOrientation`):
    /// every size and decode made from the info is then the pixels as stored.
    /// - Throws: `CodecError` (unknown, unsupported or corrupt input; input over the byte limit;
    ///   `noPixels`, `sideTooLong`, `tooManyPixels`; `noSuchPage`).
    public static func info(of data: Data, limits: DecodingLimits = .default, page: Int = 0, embeddedThumbnail: Bool = false,
                            video: VideoPosition = .default, autoRotate: Bool = true) throws -> ImageInfo {
        guard data.count <= limits.maxInputBytes else {
            throw CodecError.inputTooLarge(bytes: data.count, limit: limits.maxInputBytes)
        }
        let pageLimit = max(1, limits.maxPages, limits.maxFrames)
        guard page >= 0, page < pageLimit else {
            throw CodecError.invalidParameters("page \(page): pages are numbered from 0 to \(pageLimit - 1) at most")
        }
        var info: ImageInfo
        switch try ImageFileType.sniff(data) {
        case .jpeg: info = try JPEGCodec.info(data, limits: limits)
        case .png: info = try PNGCodec.info(data, limits: limits)
        case .webp: info = try WebPCodec.info(data, limits: limits)
        case .gif: info = try GIFCodec.info(data, limits: limits)
        case .avif:
            // A thumbnail is found (and then decoded) by libheif, which reads AVIF containers.
            if embeddedThumbnail, HEIFCodec.decodesAV1,
               let thumbnail = try? HEIFCodec.info(data, limits: limits, embeddedThumbnail: true, fileType: .avif),
               thumbnail.isEmbeddedThumbnail {
                info = thumbnail
            } else {
                info = try AVIFCodec.info(data, limits: limits)
            }
        case .heic: info = try HEIFCodec.info(data, limits: limits, embeddedThumbnail: embeddedThumbnail)
        case .bmp: info = try BMPCodec.info(data, limits: limits)
        case .tiff: info = try TIFFCodec.info(data, limits: limits, page: page)
        case .svg: info = try SVGCodec.info(data, limits: limits)
        case .jxl: info = try JXLCodec.info(data, limits: limits)
        case .pdf: info = try PDFCodec.info(data, limits: limits, page: page)
        case .ico: info = try ICOCodec.info(data, limits: limits)
        case .mp4: info = try VideoCodec.info(data, fileType: .mp4, limits: limits, position: video)
        case .matroska: info = try VideoCodec.info(data, fileType: .matroska, limits: limits, position: video)
        }
        if page > 0 {
            switch info.fileType {
            case .tiff, .pdf: break  // read at that page
            case .gif, .webp:
                guard page < info.frameCount else { throw CodecError.noSuchPage(page: page, pages: info.frameCount) }
            default:
                // (An AVIF sequence's or a HEIF's further images are not decoded: one page.)
                throw CodecError.noSuchPage(page: page, pages: 1)
            }
            info.page = page
        }
        if !autoRotate {
            info.ignoresExifOrientation = true
            // TIFF's and JPEG XL's own orientation fields are read as EXIF's is (libvips records
            // them and imgproxy's auto-rotation applies them): left too. AVIF's and HEIC's are
            // part of the image, applied by libheif in imgproxy as here.
            if info.fileType == .tiff || info.fileType == .jxl { info.containerOrientation = nil }
        }
        try checkSize(info, limits: limits)
        // (Frames are not refused here: an animation over `maxFrames` is still read as its first
        // frame, and `AnimationReader` refuses it before decoding any frame.)
        return info
    }

    /// A raster's size against the limits; a vector has no pixels of its own, so only its sides
    /// are checked here (at least 1, and its sides within the longest a render may have scaled
    /// from) and its render is held to the pixel limits when it is made.
    static func checkSize(_ info: ImageInfo, limits: DecodingLimits) throws(CodecError) {
        guard info.isVector else { return try limits.check(width: info.width, height: info.height) }
        guard info.width >= 1, info.height >= 1 else { throw .noPixels(width: info.width, height: info.height) }
        guard info.width <= limits.maxSide, info.height <= limits.maxSide else {
            throw .sideTooLong(width: info.width, height: info.height, limit: limits.maxSide)
        }
    }

    /// Decodes `data` to a bitmap.
    /// - Parameters:
    ///   - data: an encoded image (JPEG, PNG, WebP, GIF, AVIF, HEIC, JPEG XL, TIFF, BMP, ICO,
    ///     SVG or PDF, told by its content).
    ///   - minimumSize: the smallest size the caller needs; JPEGs are then decoded at the
    ///     smallest DCT scale (1/8, 1/4, 1/2) whose output still covers it, icons from their
    ///     smallest image that covers it, and vectors rendered at the scale that covers it
    ///     (larger than their intrinsic size too). Nil: full size (a vector's intrinsic size).
    ///   - pixelFormat: RGBA8 (default) or Gray8.
    ///   - applyOrientation: turn the pixels upright according to the EXIF orientation
    ///     (default); `minimumSize` is then the upright size.
    ///   - color: what to do with an embedded ICC profile: convert to sRGB (default) or keep
    ///     the source's encoding. A damaged profile is ignored (logged); one over
    ///     `limits.maxProfileBytes` is refused.
    ///   - limits: checked from the header before any pixel memory is allocated.
    /// - Throws: `CodecError`.
    public static func decode(_ data: Data, covering minimumSize: (width: Int, height: Int)? = nil,
                              pixelFormat: Bitmap.PixelFormat = .rgba8, applyOrientation: Bool = true,
                              color: ColorHandling = .convertToSRGB, limits: DecodingLimits = .default) throws -> Bitmap {
        try decode(data, info: try info(of: data, limits: limits), covering: minimumSize, pixelFormat: pixelFormat,
                   applyOrientation: applyOrientation, color: color, limits: limits)
    }

    /// The size (upright) `decode(_:info:covering:)` makes of an image with this `info`, without
    /// decoding: JPEG shrinks on load by the largest DCT scale that still covers `minimumSize`,
    /// a still WebP by the same factor (1/2, 1/4, 1/8: libwebp's scaled decode), a
    /// non-interlaced PNG too (its rows summed into blocks as they are decoded), a TIFF page
    /// without a CMYK profile (read in bands of strips or tiles, summed into blocks), an opaque
    /// uncompressed BMP and a GIF's first frame (rows summed into blocks); every other format
    /// decodes at full size. Two coverings with one decoded size give the same pixels.
    public static func decodedSize(of info: ImageInfo, covering minimumSize: (width: Int, height: Int)?) -> (width: Int, height: Int) {
        if info.isVector { return VectorRender.size(of: info, covering: minimumSize) }
        if info.fileType == .ico, let minimumSize {
            let size = entrySize(.init(width: info.width, height: info.height), info.entrySizes, covering: minimumSize)
            return (size.width, size.height)
        }
        guard info.fileType == .jpeg || info.fileType.isVideo || WebPCodec.scales(info) || PNGCodec.scales(info) || TIFFCodec.scales(info)
                || BMPCodec.scales(info) || GIFCodec.scales(info) else {
            return (info.uprightWidth, info.uprightHeight)
        }
        let swaps = Orientation.swapsAxes(info.orientation)
        let stored = swaps ? minimumSize.map { ($0.height, $0.width) } : minimumSize
        if info.fileType.isVideo {
            let size = VideoCodec.decodedSize(of: info, covering: stored)
            return swaps ? (size.height, size.width) : size
        }
        let denominator = JPEGCodec.scaleDenominator(width: info.width, height: info.height, covering: stored)
        let width = (info.width + denominator - 1) / denominator, height = (info.height + denominator - 1) / denominator
        return swaps ? (height, width) : (width, height)
    }

    /// Whether a still decode of `info` at `decodedSize` (from `decodedSize(of:covering:)`)
    /// reads a mapped file forward and hands its pages back as it goes, so that the file's bytes
    /// are never resident whole: a JPEG (not a progressive one: its scans are all read before the
    /// first row comes out), a PNG, a TIFF, and a WebP still, an opaque BMP or a GIF's first frame
    /// decoded shrunk.
    public static func handsBackPages(_ info: ImageInfo, decodedSize: (width: Int, height: Int)) -> Bool {
        let shrunk = decodedSize.width < info.uprightWidth || decodedSize.height < info.uprightHeight
        switch info.fileType {
        case .jpeg: return !info.isProgressive
        case .png, .tiff: return true
        case .webp: return shrunk && WebPCodec.scales(info)
        case .bmp: return shrunk && BMPCodec.scales(info)
        case .gif: return shrunk && GIFCodec.scales(info)
        default: return false
        }
    }

    /// Of an icon's sizes (`largest` and `smaller`), the smallest whose sides both reach
    /// `minimumSize`, else the largest.
    static func entrySize(_ largest: ImageInfo.EntrySize, _ smaller: [ImageInfo.EntrySize],
                          covering minimumSize: (width: Int, height: Int)) -> ImageInfo.EntrySize {
        smaller.filter { $0.width >= minimumSize.width && $0.height >= minimumSize.height }
            .min { (Int.checkedProduct($0.width, $0.height) ?? .max) < (Int.checkedProduct($1.width, $1.height) ?? .max) } ?? largest
    }

    /// `decode(_:covering:pixelFormat:applyOrientation:limits:)` with the `info` the caller
    /// already read from the same bytes (so the header is not parsed again). `info` must come
    /// from `info(of:)` on these very bytes; a decoder that finds another size refuses.
    public static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)? = nil,
                              pixelFormat: Bitmap.PixelFormat = .rgba8, applyOrientation: Bool = true,
                              color: ColorHandling = .convertToSRGB, limits: DecodingLimits = .default) throws -> Bitmap {
        guard data.count <= limits.maxInputBytes else {
            throw CodecError.inputTooLarge(bytes: data.count, limit: limits.maxInputBytes)
        }
        // `info` may come from a caller with other limits: checked again against these.
        try checkSize(info, limits: limits)
        let profile = try convertedProfile(info, color: color, limits: limits)
        // Colour is converted as decoded (before orientation, resizing or any other processing).
        func converted(_ bitmap: Bitmap) -> Bitmap {
            guard let profile else { return bitmap }
            var bitmap = bitmap
            ColorConverter.convertToSRGB(&bitmap, from: profile)
            return bitmap
        }
        // A later frame of an animation, as a still (`info(of:limits:page:embeddedThumbnail:video:autoRotate:)`).
        if info.page > 0, info.fileType == .gif || info.fileType == .webp {
            return try frame(info.page, of: data, info: info, limits: limits).converted(to: pixelFormat)
        }
        switch info.fileType {
        case .jpeg:
            return try decodeJPEG(data, info: info, covering: minimumSize, pixelFormat: pixelFormat,
                                  applyOrientation: applyOrientation, profile: profile, limits: limits)
        case .png:
            let orientation = applyOrientation ? info.orientation : 1
            let stored = Orientation.swapsAxes(orientation) ? minimumSize.map { ($0.height, $0.width) } : minimumSize
            return Orientation.apply(orientation, to: converted(try PNGCodec.decode(data, info: info, covering: stored, pixelFormat: pixelFormat)))
        case .webp:
            let orientation = applyOrientation ? info.orientation : 1
            let stored = Orientation.swapsAxes(orientation) ? minimumSize.map { ($0.height, $0.width) } : minimumSize
            return Orientation.apply(orientation, to: converted(try WebPCodec.decode(data, info: info, covering: stored, pixelFormat: pixelFormat)))
        case .gif:
            // (A GIF has no orientation of its own; its colours are sRGB.)
            return try GIFCodec.decode(data, info: info, covering: minimumSize, pixelFormat: pixelFormat, limits: limits)
        case .avif where info.isEmbeddedThumbnail:
            return converted(try HEIFCodec.decode(data, info: info)).converted(to: pixelFormat)
        case .avif:
            return Orientation.apply(applyOrientation ? info.orientation : 1,
                                     to: converted(try AVIFCodec.decode(data, info: info, limits: limits))).converted(to: pixelFormat)
        case .heic:
            return converted(try HEIFCodec.decode(data, info: info)).converted(to: pixelFormat)
        case .jxl:
            return Orientation.apply(applyOrientation ? info.orientation : 1,
                                     to: converted(try JXLCodec.decode(data, info: info, limits: limits))).converted(to: pixelFormat)
        case .pdf:
            return try PDFCodec.decode(data, info: info, covering: minimumSize, pixelFormat: pixelFormat, limits: limits)
        case .svg:
            return try SVGCodec.decode(data, info: info, covering: minimumSize, pixelFormat: pixelFormat, limits: limits)
        case .tiff:
            return try decodeTIFF(data, info: info, covering: minimumSize, pixelFormat: pixelFormat, applyOrientation: applyOrientation,
                                  profile: profile)
        case .bmp:
            // Shrunk on load where it can (a BMP has no orientation of its own).
            let factor = BMPCodec.scales(info) ? JPEGCodec.scaleDenominator(width: info.width, height: info.height, covering: minimumSize) : 1
            if factor > 1 { return converted(try BMPCodec.decodeShrunk(data, info: info, factor: factor)).converted(to: pixelFormat) }
            return converted(try BMPCodec.decode(data, info: info, pixelFormat: .rgba8, limits: limits)).converted(to: pixelFormat)
        case .ico:
            return try ICOCodec.decode(data, info: info, covering: minimumSize, pixelFormat: pixelFormat, limits: limits)
        case .mp4, .matroska:
            // Shrunk on load like a JPEG: the covering size in the stream's orientation.
            let stored = Orientation.swapsAxes(info.orientation) && applyOrientation ? minimumSize.map { ($0.height, $0.width) } : minimumSize
            return Orientation.apply(applyOrientation ? info.orientation : 1,
                                     to: try VideoCodec.decode(data, info: info, covering: stored, limits: limits)).converted(to: pixelFormat)
        }
    }

    /// The embedded profile the pixels are converted from as decoded: the image's own with
    /// `.convertToSRGB`; nil without one, with `.keepSourceProfile`, or for a damaged one
    /// (logged, the pixels taken as sRGB).
    /// - Throws: `CodecError.profileTooLarge` for a profile over `limits.maxProfileBytes`.
    private static func convertedProfile(_ info: ImageInfo, color: ColorHandling, limits: DecodingLimits) throws(CodecError) -> ICCProfile? {
        switch info.colorProfile {
        case .none: return nil
        case .profile(let found): return color == .convertToSRGB ? found : nil
        case .damaged(let reason):
            ColorConverter.logger.warning("damaged ICC profile ignored: the pixels are taken as sRGB",
                                          metadata: ["format": "\(info.fileType)", "reason": "\(reason)"])
            return nil
        case .tooLarge(let bytes): throw CodecError.profileTooLarge(bytes: bytes, limit: limits.maxProfileBytes)
        }
    }

    /// A JPEG, shrunk on load to cover `minimumSize` (upright), converted with `profile` (CMYK
    /// with a CMYK profile from its raw samples), then turned upright.
    private static func decodeJPEG(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)?,
                                   pixelFormat: Bitmap.PixelFormat, applyOrientation: Bool, profile: ICCProfile?,
                                   limits: DecodingLimits) throws -> Bitmap {
        let orientation = applyOrientation ? info.orientation : 1
        let stored = Orientation.swapsAxes(orientation) ? minimumSize.map { ($0.height, $0.width) } : minimumSize
        // CMYK with a CMYK profile: the samples come raw, and the profile turns them into sRGB.
        let rawCMYK = profile?.colorSpace == .cmyk && pixelFormat == .rgba8
        var (bitmap, cmyk) = try JPEGCodec.decode(data, info: info, covering: stored, pixelFormat: pixelFormat, rawCMYK: rawCMYK,
                                                  limits: limits)
        if let profile, rawCMYK || profile.colorSpace != .cmyk {
            ColorConverter.convertToSRGB(&bitmap, from: profile, cmyk: cmyk)
        }
        return Orientation.apply(orientation, to: bitmap)
    }

    /// A TIFF converted with `profile` (CMYK with a CMYK profile from its raw samples), turned
    /// upright, in `pixelFormat`.
    private static func decodeTIFF(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)?,
                                   pixelFormat: Bitmap.PixelFormat, applyOrientation: Bool, profile: ICCProfile?) throws -> Bitmap {
        let orientation = applyOrientation ? info.orientation : 1
        let stored = Orientation.swapsAxes(orientation) ? minimumSize.map { ($0.height, $0.width) } : minimumSize
        let factor = TIFFCodec.scales(info) ? JPEGCodec.scaleDenominator(width: info.width, height: info.height, covering: stored) : 1
        if factor > 1 {
            // Shrunk on load, then its colour converted (the blocks' means, as a resize would see
            // them): from a pyramidal file's level when it has one (the same size: each side
            // rounded up at every step is each side rounded up once).
            let (source, left) = TIFFCodec.level(of: info, factor: factor) ?? (info, factor)
            var bitmap = left > 1 ? try TIFFCodec.decodeShrunk(data, info: source, factor: left)
                : try TIFFCodec.decode(data, info: source, rawCMYK: false).0
            if let profile { ColorConverter.convertToSRGB(&bitmap, from: profile) }
            return Orientation.apply(orientation, to: bitmap).converted(to: pixelFormat)
        }
        // CMYK with a CMYK profile: the samples come raw, and the profile turns them into sRGB.
        let rawCMYK = profile?.colorSpace == .cmyk
        var (bitmap, cmyk) = try TIFFCodec.decode(data, info: info, rawCMYK: rawCMYK)
        if let profile, cmyk || profile.colorSpace != .cmyk {
            ColorConverter.convertToSRGB(&bitmap, from: profile, cmyk: cmyk ? .cmyk : nil)
        }
        return Orientation.apply(applyOrientation ? info.orientation : 1, to: bitmap).converted(to: pixelFormat)
    }

    /// Frame `page` of an animated GIF or WebP as a still: the canvas as shown once that frame is
    /// composed (the frames before it are read, within the animation limits, none after it).
    static func frame(_ page: Int, of data: Data, info: ImageInfo, limits: DecodingLimits) throws -> Bitmap {
        struct Found: Error { let image: Bitmap }
        var index = 0
        do {
            try AnimationReader.frames(of: data, info: info, limits: limits) { frame in
                if index == page { throw Found(image: frame.image) }
                index += 1
            }
        } catch let found as Found {
            return found.image
        }
        throw CodecError.noSuchPage(page: page, pages: index)
    }
}
