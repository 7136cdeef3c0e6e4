/// The container format of encoded image bytes, told by magic bytes, never by file name.
public enum ImageFileType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// JPEG, baseline or progressive: bytes that start `FF D8 FF`.
    case jpeg = "JPEG"
    /// PNG, interlaced or not: bytes that start with the 8-byte PNG signature.
    case png = "PNG"
    /// WebP, lossy, lossless or animated: a RIFF file of form `WEBP`.
    case webp = "WebP"
    /// GIF, 87a or 89a (animated ones are read frame by frame by `AnimationReader`).
    case gif = "GIF"
    /// AVIF (AV1 in HEIF), still or a sequence: an ISO-BMFF file whose brands include `avif` or
    /// `avis`.
    case avif = "AVIF"
    /// HEIC (HEVC in HEIF): an ISO-BMFF file whose brands include `heic`, `heix`, `heim`, `heis`,
    /// `hevc` or `hevx`.
    case heic = "HEIC"
    /// BMP: Windows and OS/2 bitmaps, `BM` and a known DIB header size.
    case bmp = "BMP"
    /// TIFF: `II*\0` or `MM\0*` (classic TIFF; BigTIFF too, through libtiff).
    case tiff = "TIFF"
    /// JPEG XL: a bare codestream (`FF 0A`) or the ISO-BMFF container (`JXL ` box).
    case jxl = "JPEG XL"
    /// PDF: `%PDF-` (a page of it is rendered).
    case pdf = "PDF"
    /// SVG: XML text whose root element is `svg` (after an XML declaration, comments and a
    /// doctype), UTF-8 with or without a byte-order mark.
    case svg = "SVG"
    /// ICO or CUR: an icon directory (`00 00 01 00` or `00 00 02 00` and at least one entry).
    case ico = "ICO"
    /// MP4, QuickTime (MOV) or 3GP video: an ISO-BMFF file of no image brand, or a QuickTime
    /// file that starts with its `moov`, `mdat` or `wide` atom. Its image is one of its frames
    /// (`VideoPosition`).
    case mp4 = "MP4"
    /// Matroska or WebM video: an EBML header (`1A 45 DF A3`). Its image is one of its frames.
    case matroska = "Matroska"

    /// Whether the type is a video, whose image is a frame of it (never served as it is).
    public var isVideo: Bool { entry.capabilities.contains(.video) }

    public var description: String { rawValue }

    /// Its declaration: MIME type, extensions, names, capabilities.
    public var entry: FormatEntry { FormatRegistry.entry(self) }

    /// The MIME type for HTTP responses.
    public var mimeType: String { entry.mimeType }

    /// The type a URL, a configuration or the CLI names (`jpg`, `heif`, `tif`…), or nil.
    public init?(name: some StringProtocol) {
        guard let entry = FormatRegistry.named(name) else { return nil }
        self = entry.type
    }

    /// The format of `bytes`, by the magic `FormatRegistry` declares, tried in its order.
    /// AVIF and HEIC are told by the brands of their `ftyp` box (major, then compatible).
    /// - Throws: `CodecError.unsupportedFormat` for formats recognised but not decoded (JPEG
    ///   2000), `.unknownFormat` for anything else.
    public static func sniff<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(CodecError) -> ImageFileType {
        let head = Array(bytes.prefix(32))
        let isISO = head.count >= 12 && FormatEntry.matches(head, [4: Array("ftyp".utf8)])
        var triedISO = false
        for entry in FormatRegistry.entries {
            switch entry.magic {
            case .isoBrands, .video:
                if isISO, !triedISO {
                    triedISO = true
                    if let type = isoBrandType(bytes) { return type }
                }
                if entry.matchesSignature(head) { return entry.type }
            case .svgRoot:
                if isSVG(bytes) { return entry.type }
            case .signatures, .iconDirectory:
                if entry.matchesSignature(head) { return entry.type }
            }
        }
        if let refused = FormatRegistry.recognisedOnly.first(where: { FormatEntry.matches(head, $0.magic) }) {
            throw .unsupportedFormat(refused.name)
        }
        throw .unknownFormat
    }

    /// Whether the text starts (after a byte-order mark and white space) with an SVG root
    /// element, with only an XML declaration, processing instructions, comments and an `svg`
    /// doctype before it. Looks at the first 4 KB.
    static func isSVG<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        var text = Array(bytes.prefix(4096))
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text.removeFirst(3) }
        var index = 0
        func skipSpace() { while index < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[index]) { index += 1 } }
        func at(_ prefix: String) -> Bool {
            let p = Array(prefix.utf8)
            guard index + p.count <= text.count else { return false }
            return text[index..<(index + p.count)].elementsEqual(p)  // XML is case-sensitive
        }
        func skip(past end: String) -> Bool {
            let e = Array(end.utf8)
            while index + e.count <= text.count {
                if Array(text[index..<(index + e.count)]) == e { index += e.count; return true }
                index += 1
            }
            return false
        }
        while true {
            skipSpace()
            if at("<?") {
                guard skip(past: "?>") else { return false }
            } else if at("<!--") {
                guard skip(past: "-->") else { return false }
            } else if at("<!DOCTYPE svg") {
                // An internal subset in brackets may hold `>`s of its own.
                while index < text.count, text[index] != 0x5B, text[index] != 0x3E { index += 1 }
                if index < text.count, text[index] == 0x5B { guard skip(past: "]") else { return false } }
                guard skip(past: ">") else { return false }
            } else {
                guard at("<svg"), index + 4 < text.count else { return false }
                let next = text[index + 4]
                return [0x20, 0x09, 0x0A, 0x0D, 0x3E, 0x2F].contains(next)  // `<svg` then space, `>` or `/`
            }
        }
    }

    /// The format an ISO-BMFF `ftyp` box names: the first of its brands (major, then
    /// compatible: `mif1` files name what they hold there) that an image format claims; else a
    /// video when the major brand is one of a video format's; nil for other ISO files.
    private static func isoBrandType<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> ImageFileType? {
        let head = Array(bytes.prefix(256))
        let boxSize = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        guard boxSize >= 16 else { return nil }
        var brands = [String(decoding: head[8..<12], as: UTF8.self)]
        var offset = 16
        while offset + 4 <= min(boxSize, head.count) {
            brands.append(String(decoding: head[offset..<(offset + 4)], as: UTF8.self))
            offset += 4
        }
        for brand in brands {
            for entry in FormatRegistry.entries {
                if case .isoBrands(let claimed) = entry.magic, claimed.contains(brand) { return entry.type }
            }
        }
        for entry in FormatRegistry.entries {
            if case .video(let prefixes, _) = entry.magic, prefixes.contains(where: { brands[0].hasPrefix($0) }) { return entry.type }
        }
        return nil
    }
}
