import EaselSupport
/// What the header says about an image, read without decoding its pixels (OGImage's metadata).
public struct ImageInfo: Sendable, Hashable {
    /// The container format, told by the magic bytes.
    public var fileType: ImageFileType
    /// Width in pixels as stored, before the orientation is applied (see `uprightWidth`).
    public var width: Int
    /// Height in pixels as stored, before the orientation is applied (see `uprightHeight`).
    public var height: Int
    /// An alpha channel or a transparency chunk (for lossless WebP: possibly, as its header's
    /// flag is only a hint).
    public var hasAlpha: Bool
    /// A single luminance channel as stored: a one-component JPEG or a gray (or gray and alpha)
    /// PNG; always false for WebP, GIF, AVIF and HEIC.
    public var isGrayscale: Bool
    /// A progressive JPEG or an interlaced PNG.
    public var isProgressive: Bool
    /// EXIF facts (from JPEG, PNG or WebP), nil when the file has none.
    public var exif: ExifInfo? = nil
    /// An animated WebP, or an AVIF sequence (GIFs are not examined for further frames); only the
    /// first frame is decoded.
    public var isAnimated: Bool
    /// The embedded ICC profile (JPEG APP2, PNG iCCP, WebP ICCP, AVIF/HEIC colr), if any.
    public var colorProfile: EmbeddedProfile = .none
    /// Frames (AVIF sequences, animated GIF and WebP), pages (TIFF, PDF) or top-level images
    /// (HEIF); 1 otherwise.
    public var frameCount: Int = 1
    /// The page (TIFF, PDF) or frame (an animated GIF or WebP) these facts describe and a decode
    /// with them makes: 0, the first, unless `ImageDecoder.info(of:limits:page:embeddedThumbnail:video:autoRotate:)` was asked for
    /// another.
    public var page = 0
    /// These facts, and a decode with them, are a HEIC's or AVIF's embedded thumbnail rather
    /// than its primary image (`ImageDecoder.info(of:limits:page:embeddedThumbnail:video:autoRotate:)` was asked
    /// for it and the file has one).
    public var isEmbeddedThumbnail = false
    /// Bits per sample as stored (AVIF and HEIC: 8, 10 or 12); 8 otherwise.
    public var bitDepth: Int = 8
    /// What a decode shrunk on load holds besides the bitmap it makes, at most, in bytes: a TIFF's
    /// band of full-width rows and libtiff's strip or tile buffers (`TIFFCodec.decodeShrunk`), a
    /// BMP's band, a GIF's rows of indexes and sums (an interlaced frame's indexes whole); 0 for
    /// the formats whose shrinking decoders hold nothing worth counting.
    public var shrunkDecodeWorkingBytes = 0
    /// What the decoder holds besides the bitmap it makes at any scale, in bytes: a JPEG read in
    /// several scans (progressive) keeps the coefficients of every block of the image until its
    /// last scan (128 bytes per 8×8 block of each component); libwebp holds a lossless image's
    /// whole ARGB (4 bytes a pixel) and a lossy one's whole alpha plane (1 byte a pixel); 0 where
    /// a decoder holds nothing worth counting.
    public var decoderWorkingBytes = 0
    /// A pyramidal TIFF's levels: by factor (2, 4 or 8), the page that holds a copy of the image
    /// exactly that many times smaller (each side divided, rounded up), which a shrinking decode
    /// reads instead of the full page (`ImageDecoder.decode(_:info:covering:…)`).
    public var reducedPages: [Int: Int] = [:]

    /// A size an icon holds besides its largest (`width` × `height`).
    public struct EntrySize: Sendable, Hashable {
        /// The entry's width in pixels.
        public var width: Int
        /// The entry's height in pixels.
        public var height: Int
        /// A size of `width` × `height`.
        public init(width: Int, height: Int) { (self.width, self.height) = (width, height) }
    }
    /// An ICO's smaller images of the largest one's shape, largest first (empty for every other
    /// format): `ImageDecoder.decode(covering:)` reads the smallest that covers the size asked for.
    public var entrySizes: [EntrySize] = []
    /// A video's facts (MP4, QuickTime, Matroska, WebM), and which of its frames is the image.
    public var video: VideoDetails?

    /// Scalable without loss: a vector (SVG, a PDF page), rendered at the size asked for.
    public var isVector: Bool { fileType == .svg || fileType == .pdf }
    /// The longest side a vector is planned at (see `planningWidth`).
    public static let vectorPlanningSide = 4096
    /// The source width to plan a resize from (`Resize.minimumSourceSize(of:)`): the upright width,
    /// or for a vector its intrinsic size scaled up to `vectorPlanningSide` on its longer side,
    /// so that a resize of a small vector to a large box is planned at the box's size (and then
    /// rendered there) instead of stopping at the intrinsic size as an image's would.
    public var planningWidth: Int { planningSize.width }
    /// The source height to plan a resize from (see `planningWidth`).
    public var planningHeight: Int { planningSize.height }
    private var planningSize: (width: Int, height: Int) {
        let (width, height) = (uprightWidth, uprightHeight)
        guard isVector, max(width, height) < Self.vectorPlanningSide else { return (width, height) }
        let scale = Double(Self.vectorPlanningSide) / Double(max(width, height))
        return (max(1, Int(checked: Double(width) * scale, rounding: .toNearestOrAwayFromZero)),
                max(1, Int(checked: Double(height) * scale, rounding: .toNearestOrAwayFromZero)))
    }

    /// width × height (`Int.max` if that overflows: `ImageDecoder.info` refuses such sizes).
    public var pixelCount: Int { Int.checkedProduct(width, height) ?? .max }
    /// An orientation the container gives (AVIF's `irot`/`imir` as the equivalent EXIF value;
    /// HEIC's 1, as libheif decodes it upright), which wins over EXIF.
    public var containerOrientation: Int? = nil
    /// The EXIF orientation left unapplied (imgproxy's `auto_rotate:0`): the pixels as stored.
    /// A container's orientation still applies (libheif and AVIF readers apply it as part of
    /// the image, as imgproxy's libvips does).
    public var ignoresExifOrientation = false
    /// The orientation to apply (EXIF's numbering), 1 (upright) when there is none.
    public var orientation: Int { containerOrientation ?? (ignoresExifOrientation ? nil : exif?.orientation) ?? 1 }
    /// The size once the orientation is applied (width and height as stored are above).
    public var uprightWidth: Int { Orientation.swapsAxes(orientation) ? height : width }
    /// The height once the orientation is applied: `width` for orientations 5…8, which swap the
    /// axes, else `height`.
    public var uprightHeight: Int { Orientation.swapsAxes(orientation) ? width : height }

    /// Header facts with the given values; the rest (EXIF, profile, frames, bit depth, container
    /// orientation) start as a still, 8-bit image of one frame with no EXIF, no embedded profile
    /// and no container orientation, and are set on the value by the decoder that reads them.
    public init(fileType: ImageFileType, width: Int, height: Int, hasAlpha: Bool, isGrayscale: Bool, isProgressive: Bool,
                isAnimated: Bool = false) {
        self.isAnimated = isAnimated
        self.fileType = fileType
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.isGrayscale = isGrayscale
        self.isProgressive = isProgressive
    }
}
