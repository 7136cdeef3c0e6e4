import Foundation

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
        /// JPEG XL with quality 1–100 on cjxl's scale (100: lossless) and encoder effort 1–9
        /// (cjxl's default is 7; 3 keeps a 256 px thumbnail to tens of milliseconds).
        case jxl(quality: Int = 82, effort: Int = 3)
        /// HEIC (HEVC through libheif and x265), quality 1–100 on libheif's scale.
        case heic(quality: Int = 60)
        /// GIF: a still with a median-cut palette (animations: `AnimatedGIFEncoder`).
        case gif
        /// ICO: one PNG entry (favicons); at most 256 pixels a side.
        case ico
        /// BMP: 24-bit, or 32-bit with alpha when the bitmap has transparent pixels.
        case bmp

        /// The container format these options encode to.
        public var fileType: ImageFileType {
            switch self {
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            case .ico: .ico
            case .bmp: .bmp
            case .jxl: .jxl
            case .heic: .heic
            case .gif: .gif
            }
        }

        /// Each format's default options (JPEG at 85), or nil for a type Easel does not write.
        public init?(_ type: ImageFileType) {
            switch type {
            case .jpeg: self = .jpeg(quality: 85)
            case .png: self = .png()
            case .webp: self = .webp()
            case .avif: self = .avif()
            case .jxl: self = .jxl()
            case .heic: self = .heic()
            case .gif: self = .gif
            case .ico: self = .ico
            case .bmp: self = .bmp
            case .tiff, .pdf, .svg, .mp4, .matroska: return nil
            }
        }
    }

    /// Encodes `bitmap` in the format and with the settings `options` name.
    /// - Parameters:
    ///   - bitmap: the pixels.
    ///   - options: the format and its settings (quality, chroma subsampling, compression).
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
        case .ico: try ICOCodec.encode(bitmap)
        case .gif: try AnimatedGIFEncoder.still(bitmap)
        case .jxl(let quality, let effort): try JXLCodec.encode(bitmap, quality: quality, effort: effort)
        case .heic(let quality): try HEIFCodec.encode(bitmap, quality: quality)
        case .bmp: BMPCodec.encode(bitmap)
        }
    }
}
