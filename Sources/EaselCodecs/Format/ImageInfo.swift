/// What the header says about an image, read without decoding its pixels (OGImage's metadata).
public struct ImageInfo: Sendable, Hashable {
    public var fileType: ImageFileType
    public var width: Int
    public var height: Int
    /// An alpha channel or a transparency chunk (for lossless WebP: possibly, as its header's
    /// flag is only a hint).
    public var hasAlpha: Bool
    public var isGrayscale: Bool
    /// A progressive JPEG or an interlaced PNG.
    public var isProgressive: Bool
    /// EXIF facts (from JPEG, PNG or WebP), nil when the file has none.
    public var exif: ExifInfo?
    /// An animated WebP (GIFs are not examined for further frames); only the first frame is decoded.
    public var isAnimated: Bool

    public var pixelCount: Int { width * height }
    /// EXIF orientation, 1 (upright) when there is none.
    public var orientation: Int { exif?.orientation ?? 1 }
    /// The size once the orientation is applied (width and height as stored are above).
    public var uprightWidth: Int { Orientation.swapsAxes(orientation) ? height : width }
    public var uprightHeight: Int { Orientation.swapsAxes(orientation) ? width : height }

    public init(fileType: ImageFileType, width: Int, height: Int, hasAlpha: Bool, isGrayscale: Bool, isProgressive: Bool,
                isAnimated: Bool = false, exif: ExifInfo? = nil) {
        self.exif = exif
        self.isAnimated = isAnimated
        self.fileType = fileType
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.isGrayscale = isGrayscale
        self.isProgressive = isProgressive
    }
}
