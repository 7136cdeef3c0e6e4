/// What the header says about an image, read without decoding its pixels (OGImage's metadata).
public struct ImageInfo: Sendable, Hashable {
    public var fileType: ImageFileType
    public var width: Int
    public var height: Int
    /// An alpha channel or a transparency chunk.
    public var hasAlpha: Bool
    public var isGrayscale: Bool
    /// A progressive JPEG or an interlaced PNG.
    public var isProgressive: Bool

    public var pixelCount: Int { width * height }

    public init(fileType: ImageFileType, width: Int, height: Int, hasAlpha: Bool, isGrayscale: Bool, isProgressive: Bool) {
        self.fileType = fileType
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        self.isGrayscale = isGrayscale
        self.isProgressive = isProgressive
    }
}
