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
    /// - Throws: `CodecError` (unknown, unsupported or corrupt input; input over the byte limit;
    ///   `noPixels`, `sideTooLong`, `tooManyPixels`).
    public static func info(of data: Data, limits: DecodingLimits = .default) throws -> ImageInfo {
        guard data.count <= limits.maxInputBytes else {
            throw CodecError.inputTooLarge(bytes: data.count, limit: limits.maxInputBytes)
        }
        let info: ImageInfo
        switch try ImageFileType.sniff(data) {
        case .jpeg: info = try JPEGCodec.info(data, limits: limits)
        case .png: info = try PNGCodec.info(data, limits: limits)
        case .webp: info = try WebPCodec.info(data, limits: limits)
        case .gif: info = try GIFCodec.info(data, limits: limits)
        case .avif: info = try AVIFCodec.info(data, limits: limits)
        case .heic: info = try HEIFCodec.info(data, limits: limits)
        }
        try limits.check(width: info.width, height: info.height)
        // (Frames are not refused here: an animation over `maxFrames` is still read as its first
        // frame, and `AnimationReader` refuses it before decoding any frame.)
        return info
    }

    /// Decodes `data` to a bitmap.
    /// - Parameters:
    ///   - minimumSize: the smallest size the caller needs; JPEGs are then decoded at the
    ///     smallest DCT scale (1/8, 1/4, 1/2) whose output still covers it. Nil: full size.
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
        try limits.check(width: info.width, height: info.height)
        var profile: ICCProfile?
        switch info.colorProfile {
        case .none: break
        case .profile(let found): profile = color == .convertToSRGB ? found : nil
        case .damaged(let reason):
            ColorConverter.logger.warning("damaged ICC profile ignored: the pixels are taken as sRGB",
                                          metadata: ["format": "\(info.fileType)", "reason": "\(reason)"])
        case .tooLarge(let bytes): throw CodecError.profileTooLarge(bytes: bytes, limit: limits.maxProfileBytes)
        }
        // Colour is converted as decoded (before orientation, resizing or any other processing).
        func converted(_ bitmap: Bitmap) -> Bitmap {
            guard let profile else { return bitmap }
            var bitmap = bitmap
            ColorConverter.convertToSRGB(&bitmap, from: profile)
            return bitmap
        }
        switch info.fileType {
        case .jpeg:
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
        case .png:
            return Orientation.apply(applyOrientation ? info.orientation : 1,
                                     to: converted(try PNGCodec.decode(data, info: info, pixelFormat: pixelFormat)))
        case .webp:
            return Orientation.apply(applyOrientation ? info.orientation : 1,
                                     to: converted(try WebPCodec.decode(data, info: info, pixelFormat: pixelFormat)))
        case .gif:
            return try GIFCodec.decode(data, info: info, pixelFormat: pixelFormat, limits: limits)
        case .avif:
            return Orientation.apply(applyOrientation ? info.orientation : 1,
                                     to: converted(try AVIFCodec.decode(data, info: info, limits: limits))).converted(to: pixelFormat)
        case .heic:
            return converted(try HEIFCodec.decode(data, info: info)).converted(to: pixelFormat)
        }
    }
}

/// Writes bitmaps as encoded images. Outputs carry no metadata (no EXIF, XMP, IPTC or GPS:
/// orientation is applied to the pixels), and an ICC profile only when one is given.
public enum ImageEncoder {
    /// JPEG chroma resolution.
    public enum ChromaSubsampling: Sendable, Hashable {
        /// 4:2:0: chroma at half width and height (the default; what cameras and the web use).
        case subsampled420
        /// 4:4:4: full-resolution chroma (sharper coloured edges and text, ~20–40 % larger).
        case full444
    }

    /// Above this many pixels, a JPEG is progressive unless asked otherwise: such files (over
    /// ~10 KB at usual qualities) come out smaller progressive and show early while loading;
    /// thumbnails up to 256×256 stay baseline, where progressive saves nothing and costs
    /// encode time.
    public static let progressiveJPEGPixels = 256 * 256

    /// How to encode.
    public enum Options: Sendable, Hashable {
        /// JPEG with quality 1–100; alpha is dropped (flatten it onto a background first).
        /// `progressive` nil: automatic (see `progressiveJPEGPixels`).
        case jpeg(quality: Int = 85, progressive: Bool? = nil, chroma: ChromaSubsampling = .subsampled420)
        /// PNG with zlib compression level 0–9.
        case png(compressionLevel: Int = 6)
        /// WebP, lossy with quality 0–100, or lossless.
        case webp(quality: Int = 80, lossless: Bool = false)
        /// AVIF (AV1 through aom), quality 1–100 and encoder speed 0–10 (10 fastest; the
        /// default 8 keeps a 256 px thumbnail to a few tens of milliseconds).
        case avif(quality: Int = 60, speed: Int = 8)

        public var fileType: ImageFileType {
            switch self {
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            }
        }
    }

    /// - Parameters:
    ///   - iccProfile: embedded as is (JPEG APP2, PNG iCCP); for pixels left in their source's
    ///     encoding (`ColorHandling.keepSourceProfile`). WebP and AVIF outputs are sRGB.
    ///   - rights: Artist and Copyright to keep (JPEG, PNG and WebP; see `RightsMetadata`).
    /// - Throws: `CodecError.encodingFailed`.
    public static func encode(_ bitmap: Bitmap, as options: Options, iccProfile: Data? = nil, rights: RightsMetadata? = nil) throws -> Data {
        let encoded = try encodePixels(bitmap, as: options, iccProfile: iccProfile)
        guard let rights else { return encoded }
        return rights.inserted(into: encoded, format: options.fileType)
    }

    private static func encodePixels(_ bitmap: Bitmap, as options: Options, iccProfile: Data?) throws -> Data {
        switch options {
        case .jpeg(let quality, let progressive, let chroma):
            try JPEGCodec.encode(bitmap, quality: quality,
                                 progressive: progressive ?? (bitmap.width * bitmap.height > progressiveJPEGPixels),
                                 fullChroma: chroma == .full444, iccProfile: iccProfile)
        case .png(let level): try PNGCodec.encode(bitmap, compressionLevel: level, iccProfile: iccProfile)
        case .webp(let quality, let lossless): try WebPCodec.encode(bitmap, quality: quality, lossless: lossless)
        case .avif(let quality, let speed): try AVIFCodec.encode(bitmap, quality: quality, speed: speed)
        }
    }
}
