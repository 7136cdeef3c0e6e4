/// Every format Easel reads or writes, each declared once: how its bytes start, its MIME type,
/// its file extensions, the names URLs, configurations and the CLI give it, and what it can do.
///
/// `ImageFileType`'s MIME type and names, `ImageEncoding.Format`'s (the pipeline's output
/// formats), every URL style's format names, answers' file names and the gallery's listing are
/// read from here. Adding a format is its case in `ImageFileType`, its entry here and its codec
/// file (with its case in `ImageEncoding.Format` when it is written too).
public enum FormatRegistry {
    /// The entries in the order `ImageFileType.sniff` tries their magic.
    public static let entries: [FormatEntry] = [
        FormatEntry(.jpeg, mime: "image/jpeg", extensions: ["jpg", "jpeg", "jpe", "jfif"], names: ["jpeg", "jpg"],
                    magic: .signatures([[0: [0xFF, 0xD8, 0xFF]]]),
                    can: [.decode, .encode, .quality, .shrinkOnLoad, .web]),
        FormatEntry(.png, mime: "image/png", extensions: ["png"], names: ["png"],
                    magic: .signatures([[0: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]]]),
                    can: [.decode, .encode, .alpha, .shrinkOnLoad, .web]),
        FormatEntry(.webp, mime: "image/webp", extensions: ["webp"], names: ["webp"],
                    magic: .signatures([[0: Array("RIFF".utf8), 8: Array("WEBP".utf8)]]),
                    can: [.decode, .encode, .quality, .alpha, .animation, .shrinkOnLoad, .web]),
        FormatEntry(.gif, mime: "image/gif", extensions: ["gif"], names: ["gif"],
                    magic: .signatures([[0: Array("GIF87a".utf8)], [0: Array("GIF89a".utf8)]]),
                    can: [.decode, .encode, .alpha, .animation, .web]),
        FormatEntry(.avif, mime: "image/avif", extensions: ["avif"], names: ["avif"],
                    magic: .isoBrands(["avif", "avis"]),
                    can: [.decode, .encode, .quality, .alpha, .animation, .web]),
        FormatEntry(.heic, mime: "image/heic", extensions: ["heic", "heif"], names: ["heic", "heif"],
                    magic: .isoBrands(["heic", "heix", "heim", "heis", "hevc", "hevx"]),
                    can: [.decode, .encode, .quality, .alpha, .web]),
        FormatEntry(.matroska, mime: "video/x-matroska", extensions: ["mkv", "webm"], names: ["mkv", "webm"],
                    magic: .signatures([[0: [0x1A, 0x45, 0xDF, 0xA3]]]),
                    can: [.decode, .video, .shrinkOnLoad]),
        // An ISO-BMFF file of no image brand whose major brand is a video's, or a QuickTime file
        // from before `ftyp` that starts with a top-level atom of its own.
        FormatEntry(.mp4, mime: "video/mp4", extensions: ["mp4", "mov", "m4v", "3gp"], names: ["mp4", "mov"],
                    magic: .video(majorBrandPrefixes: ["iso", "mp4", "mp7", "avc1", "qt  ", "M4V", "3gp", "3g2", "dash", "mmp4", "MSNV", "f4v "],
                                  atoms: ["moov", "mdat", "wide"]),
                    can: [.decode, .video, .shrinkOnLoad]),
        FormatEntry(.tiff, mime: "image/tiff", extensions: ["tiff", "tif"], names: ["tiff", "tif"],
                    magic: .signatures([[0: [0x49, 0x49, 0x2A, 0x00]], [0: [0x4D, 0x4D, 0x00, 0x2A]],
                                        [0: [0x49, 0x49, 0x2B, 0x00]], [0: [0x4D, 0x4D, 0x00, 0x2B]]]),
                    can: [.decode, .alpha, .pages]),
        // `BM` and a known DIB header size (12, 16, 40, 52, 56, 64, 108 or 124 bytes).
        FormatEntry(.bmp, mime: "image/bmp", extensions: ["bmp", "dib"], names: ["bmp"],
                    magic: .signatures([12, 16, 40, 52, 56, 64, 108, 124].map { [0: Array("BM".utf8), 14: [UInt8($0), 0, 0, 0]] }),
                    can: [.decode, .encode, .alpha, .web]),
        FormatEntry(.svg, mime: "image/svg+xml", extensions: ["svg"], names: ["svg"],
                    magic: .svgRoot,
                    can: [.decode, .servedAsItIs, .alpha, .vector]),
        FormatEntry(.pdf, mime: "application/pdf", extensions: ["pdf"], names: ["pdf"],
                    magic: .signatures([[0: Array("%PDF-".utf8)]]),
                    can: [.decode, .pages, .vector]),
        // What browsers and imgproxy send; IANA's is image/vnd.microsoft.icon. An icon directory
        // of at least one entry.
        FormatEntry(.ico, mime: "image/x-icon", extensions: ["ico", "cur"], names: ["ico"],
                    magic: .iconDirectory,
                    can: [.decode, .encode, .alpha, .web]),
        FormatEntry(.jxl, mime: "image/jxl", extensions: ["jxl"], names: ["jxl"],
                    magic: .signatures([[0: [0xFF, 0x0A]], [0: [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]]]),
                    can: [.decode, .encode, .quality, .alpha, .animation]),
    ]

    /// Formats recognised by their magic but not read: the name they are refused with.
    static let recognisedOnly: [(name: String, magic: [Int: [UInt8]])] = [
        ("JPEG 2000", [0: [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]]),
    ]

    private static let byType: [ImageFileType: FormatEntry] = Dictionary(uniqueKeysWithValues: entries.map { ($0.type, $0) })
    private static let byName: [String: FormatEntry] = Dictionary(
        entries.flatMap { entry in entry.names.map { ($0, entry) } }, uniquingKeysWith: { first, _ in first })
    private static let byExtension: [String: FormatEntry] = Dictionary(
        entries.flatMap { entry in entry.extensions.map { ($0, entry) } }, uniquingKeysWith: { first, _ in first })

    /// The entry of `type` (every type has one: a test checks it).
    public static func entry(_ type: ImageFileType) -> FormatEntry { byType[type]! }

    /// The format a URL, a configuration or the CLI names (`jpg`, `JPEG`, `heif`…), or nil.
    public static func named(_ name: some StringProtocol) -> FormatEntry? { byName[name.lowercased()] }

    /// The format a file name's extension suggests (`photo.JPG`), or nil; never used to read
    /// bytes (their magic decides), only to list and name files.
    public static func forExtension(_ fileExtension: some StringProtocol) -> FormatEntry? { byExtension[fileExtension.lowercased()] }

    /// The names of the formats with every one of `capabilities`, each format by its first name
    /// (for messages: "jpeg, png, webp…").
    public static func names(with capabilities: FormatEntry.Capabilities) -> [String] {
        entries.filter { $0.capabilities.isSuperset(of: capabilities) }.map(\.names[0])
    }
}

/// One format's declaration in `FormatRegistry`.
public struct FormatEntry: Sendable {
    /// What a format can do in Easel.
    public struct Capabilities: OptionSet, Sendable, Hashable {
        /// The capabilities as bits.
        public let rawValue: Int
        /// Capabilities from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Its bytes are read into pixels.
        public static let decode = Capabilities(rawValue: 1 << 0)
        /// Pixels are written in it (an output format).
        public static let encode = Capabilities(rawValue: 1 << 1)
        /// Its encoder has a quality setting (1–100), which cache keys carry.
        public static let quality = Capabilities(rawValue: 1 << 2)
        /// It holds transparency.
        public static let alpha = Capabilities(rawValue: 1 << 3)
        /// It holds animations (kept frame by frame).
        public static let animation = Capabilities(rawValue: 1 << 4)
        /// It holds pages (`page` picks one).
        public static let pages = Capabilities(rawValue: 1 << 5)
        /// It decodes at a reduced scale when a smaller size is asked for (`ImageDecoder.decodedSize`).
        public static let shrinkOnLoad = Capabilities(rawValue: 1 << 6)
        /// An output served as the source's own bytes, cleaned, not as an encode of pixels (SVG).
        public static let servedAsItIs = Capabilities(rawValue: 1 << 7)
        /// Drawn from a description at the size asked for (SVG, PDF).
        public static let vector = Capabilities(rawValue: 1 << 8)
        /// A video, whose image is one of its frames; never served as it is.
        public static let video = Capabilities(rawValue: 1 << 9)
        /// Shown by browsers as an image: the gallery lists sources in it.
        public static let web = Capabilities(rawValue: 1 << 10)
    }

    /// How a format's bytes start.
    public enum Magic: Sendable {
        /// Any of these signatures, each a set of byte strings at offsets that must all match.
        case signatures([[Int: [UInt8]]])
        /// An ISO-BMFF file whose `ftyp` names one of these brands (major, then compatible: the
        /// first brand some format claims decides).
        case isoBrands([String])
        /// An ISO-BMFF file that no image brand claims whose major brand starts with one of the
        /// prefixes, or a QuickTime file that starts with one of the top-level atoms.
        case video(majorBrandPrefixes: [String], atoms: [String])
        /// XML text whose root element is `svg`.
        case svgRoot
        /// An icon or cursor directory (`00 00 01 00` or `00 00 02 00`) of at least one entry.
        case iconDirectory
    }

    /// The type of bytes in it.
    public let type: ImageFileType
    /// The MIME type of answers and sources in it.
    public let mimeType: String
    /// File name extensions, lowercase; the first is what answers in it are named with.
    public let extensions: [String]
    /// The names URLs of every style, configurations and the CLI give it, lowercase; the first
    /// is its own (`ImageEncoding.Format`'s raw value).
    public let names: [String]
    /// How its bytes start.
    public let magic: Magic
    /// What it can do.
    public let capabilities: Capabilities

    init(_ type: ImageFileType, mime: String, extensions: [String], names: [String], magic: Magic, can capabilities: Capabilities) {
        self.type = type
        mimeType = mime
        self.extensions = extensions
        self.names = names
        self.magic = magic
        self.capabilities = capabilities
    }

    /// The extension of answers in it (`jpg`, `png`…).
    public var fileExtension: String { extensions[0] }

    /// Whether `head` (the file's first bytes) starts with one of its signatures.
    func matchesSignature(_ head: [UInt8]) -> Bool {
        switch magic {
        case .signatures(let signatures): signatures.contains { Self.matches(head, $0) }
        case .iconDirectory:
            (Self.matches(head, [0: [0x00, 0x00, 0x01, 0x00]]) || Self.matches(head, [0: [0x00, 0x00, 0x02, 0x00]]))
                && head.count >= 6 && (head[4] != 0 || head[5] != 0)
        case .video(_, let atoms): head.count >= 16 && atoms.contains { Self.matches(head, [4: Array($0.utf8)]) }
        case .isoBrands, .svgRoot: false
        }
    }

    static func matches(_ head: [UInt8], _ signature: [Int: [UInt8]]) -> Bool {
        signature.allSatisfy { offset, bytes in
            head.count >= offset + bytes.count && head[offset..<(offset + bytes.count)].elementsEqual(bytes)
        }
    }
}
