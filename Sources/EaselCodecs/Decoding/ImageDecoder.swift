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
    /// Format, size and flags from the header alone.
    /// - Throws: `CodecError` (unknown, unsupported or corrupt input; input over the byte limit).
    public static func info(of data: Data, limits: DecodingLimits = .default) throws -> ImageInfo {
        guard data.count <= limits.maxInputBytes else {
            throw CodecError.inputTooLarge(bytes: data.count, limit: limits.maxInputBytes)
        }
        switch try ImageFileType.sniff(data) {
        case .jpeg: return try JPEGCodec.info(data)
        case .png: return try PNGCodec.info(data)
        case .webp: return try WebPCodec.info(data)
        case .gif: return try GIFCodec.info(data)
        }
    }

    /// Decodes `data` to a bitmap.
    /// - Parameters:
    ///   - minimumSize: the smallest size the caller needs; JPEGs are then decoded at the
    ///     smallest DCT scale (1/8, 1/4, 1/2) whose output still covers it. Nil: full size.
    ///   - pixelFormat: RGBA8 (default) or Gray8.
    ///   - applyOrientation: turn the pixels upright according to the EXIF orientation
    ///     (default); `minimumSize` is then the upright size.
    ///   - limits: checked from the header before any pixel memory is allocated.
    /// - Throws: `CodecError`.
    public static func decode(_ data: Data, covering minimumSize: (width: Int, height: Int)? = nil,
                              pixelFormat: Bitmap.PixelFormat = .rgba8, applyOrientation: Bool = true,
                              limits: DecodingLimits = .default) throws -> Bitmap {
        try decode(data, info: try info(of: data, limits: limits), covering: minimumSize, pixelFormat: pixelFormat,
                   applyOrientation: applyOrientation, limits: limits)
    }

    /// `decode(_:covering:pixelFormat:applyOrientation:limits:)` with the `info` the caller
    /// already read from the same bytes (so the header is not parsed again). `info` must come
    /// from `info(of:)` on these very bytes; a decoder that finds another size refuses.
    public static func decode(_ data: Data, info: ImageInfo, covering minimumSize: (width: Int, height: Int)? = nil,
                              pixelFormat: Bitmap.PixelFormat = .rgba8, applyOrientation: Bool = true,
                              limits: DecodingLimits = .default) throws -> Bitmap {
        guard data.count <= limits.maxInputBytes else {
            throw CodecError.inputTooLarge(bytes: data.count, limit: limits.maxInputBytes)
        }
        guard info.width > 0, info.height > 0, info.pixelCount <= limits.maxPixels else {
            throw CodecError.tooManyPixels(width: info.width, height: info.height, limit: limits.maxPixels)
        }
        switch info.fileType {
        case .jpeg:
            let orientation = applyOrientation ? info.orientation : 1
            let stored = Orientation.swapsAxes(orientation) ? minimumSize.map { ($0.height, $0.width) } : minimumSize
            let bitmap = try JPEGCodec.decode(data, info: info, covering: stored, pixelFormat: pixelFormat, limits: limits)
            return Orientation.apply(orientation, to: bitmap)
        case .png:
            return Orientation.apply(applyOrientation ? info.orientation : 1,
                                     to: try PNGCodec.decode(data, info: info, pixelFormat: pixelFormat))
        case .webp:
            return Orientation.apply(applyOrientation ? info.orientation : 1,
                                     to: try WebPCodec.decode(data, info: info, pixelFormat: pixelFormat))
        case .gif:
            return try GIFCodec.decode(data, info: info, pixelFormat: pixelFormat, limits: limits)
        }
    }
}

/// Writes bitmaps as encoded images.
public enum ImageEncoder {
    /// How to encode.
    public enum Options: Sendable, Hashable {
        /// JPEG with quality 1–100; alpha is dropped (flatten it onto a background first).
        case jpeg(quality: Int = 85, progressive: Bool = false)
        /// PNG with zlib compression level 0–9.
        case png(compressionLevel: Int = 6)
        /// WebP, lossy with quality 0–100, or lossless.
        case webp(quality: Int = 80, lossless: Bool = false)

        public var fileType: ImageFileType {
            switch self {
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            }
        }
    }

    /// - Throws: `CodecError.encodingFailed`.
    public static func encode(_ bitmap: Bitmap, as options: Options) throws -> Data {
        switch options {
        case .jpeg(let quality, let progressive): try JPEGCodec.encode(bitmap, quality: quality, progressive: progressive)
        case .png(let level): try PNGCodec.encode(bitmap, compressionLevel: level)
        case .webp(let quality, let lossless): try WebPCodec.encode(bitmap, quality: quality, lossless: lossless)
        }
    }
}
