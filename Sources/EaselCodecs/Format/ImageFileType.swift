/// The container format of encoded image bytes, told by magic bytes, never by file name.
public enum ImageFileType: String, Sendable, Hashable, CustomStringConvertible {
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
    public var isVideo: Bool { self == .mp4 || self == .matroska }

    public var description: String { rawValue }

    /// The MIME type for HTTP responses.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .gif: "image/gif"
        case .avif: "image/avif"
        case .heic: "image/heic"
        case .bmp: "image/bmp"
        case .tiff: "image/tiff"
        case .svg: "image/svg+xml"
        case .jxl: "image/jxl"
        case .pdf: "application/pdf"
        case .ico: "image/x-icon"  // what browsers and imgproxy send; IANA's is image/vnd.microsoft.icon
        case .mp4: "video/mp4"
        case .matroska: "video/x-matroska"
        }
    }

    /// The format of `bytes`.
    /// AVIF and HEIC are told by the brands of their `ftyp` box (major, then compatible).
    /// - Throws: `CodecError.unsupportedFormat` for formats recognised but not decoded (JPEG
    ///   2000), `.unknownFormat` for anything else.
    public static func sniff<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(CodecError) -> ImageFileType {
        let head = Array(bytes.prefix(32))
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + prefix.count && Array(head[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("ftyp".utf8), at: 4), head.count >= 12, let type = isoBrandType(bytes) { return type }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return .matroska }
        // QuickTime files from before `ftyp` start with a top-level atom of their own.
        if head.count >= 16, starts(Array("moov".utf8), at: 4) || starts(Array("mdat".utf8), at: 4) || starts(Array("wide".utf8), at: 4) {
            return .mp4
        }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) || starts([0x49, 0x49, 0x2B, 0x00])
            || starts([0x4D, 0x4D, 0x00, 0x2B]) {
            return .tiff
        }
        if starts(Array("BM".utf8)), head.count >= 18,
           [12, 16, 40, 52, 56, 64, 108, 124].contains(Int(head[14]) | Int(head[15]) << 8 | Int(head[16]) << 16 | Int(head[17]) << 24) {
            return .bmp
        }
        if isSVG(bytes) { return .svg }
        if starts(Array("%PDF-".utf8)) { return .pdf }
        if starts([0x00, 0x00, 0x01, 0x00]) || starts([0x00, 0x00, 0x02, 0x00]), head.count >= 6, head[4] != 0 || head[5] != 0 {
            return .ico
        }
        if starts([0xFF, 0x0A]) || starts([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if starts([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]) { throw .unsupportedFormat("JPEG 2000") }
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

    /// AVIF or HEIC from an ISO-BMFF `ftyp` box: the major brand, else the compatible brands
    /// (`mif1` files name what they hold there); MP4 for a video's major brand; nil for other
    /// ISO files.
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
            switch brand {
            case "avif", "avis": return .avif
            case "heic", "heix", "heim", "heis", "hevc", "hevx": return .heic
            default: continue
            }
        }
        // No image brand: a video when the major brand is one of MP4's, QuickTime's or 3GP's.
        let video = ["iso", "mp4", "mp7", "avc1", "qt  ", "M4V", "3gp", "3g2", "dash", "mmp4", "MSNV", "f4v "]
        return video.contains { brands[0].hasPrefix($0) } ? .mp4 : nil
    }
}
