import CLazy
import EaselSupport
import Foundation

/// Why an image could not be read or written. Every refusal names its cause and, for limits,
/// the limit.
public enum CodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are an image format Easel recognises but does not decode (AVIF, HEIC, TIFF…).
    case unsupportedFormat(String)
    /// The bytes are not an image format Easel knows.
    case unknownFormat
    /// The image is damaged or truncated.
    case corrupt(format: ImageFileType, reason: String)
    /// The header declares a side of 0: the image has no pixels.
    case noPixels(width: Int, height: Int)
    /// The declared size exceeds `DecodingLimits.maxPixels`; nothing was allocated.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// A declared side exceeds `DecodingLimits.maxSide`; nothing was allocated.
    case sideTooLong(width: Int, height: Int, limit: Int)
    /// The input exceeds `DecodingLimits.maxInputBytes`.
    case inputTooLarge(bytes: Int, limit: Int)
    /// A progressive JPEG has more scans than `DecodingLimits.maxProgressiveScans`.
    case tooManyScans(limit: Int)
    /// An embedded ICC profile is larger than `DecodingLimits.maxProfileBytes`.
    case profileTooLarge(bytes: Int, limit: Int)
    /// An animation or sequence has more frames than `DecodingLimits.maxFrames`.
    case tooManyFrames(limit: Int)
    /// An animation's frames × canvas pixels exceed `DecodingLimits.maxAnimationPixels`.
    case tooManyAnimationPixels(limit: Int)
    /// Encoding failed (the library's message).
    case encodingFailed(format: ImageFileType, reason: String)
    /// The page (of a document) or frame (of an animation) asked for is not in the image: pages
    /// are numbered from 0, and `pages` is how many it has (1 for a format without pages).
    case noSuchPage(page: Int, pages: Int)
    /// A processor was given parameters that do not fit the image.
    case invalidParameters(String)
    /// The work was stopped: its deadline passed or nobody waits for it any more.
    case cancelled
    /// A document's renderer (librsvg, poppler), running in a worker process
    /// (`RenderIsolation`), crashed, passed its memory, CPU or time limit, or could not be
    /// started: the document costs this request, nothing more.
    case renderFailed(format: ImageFileType, reason: String)
    /// No render worker could be started (too many processes or descriptors, a missing
    /// executable): the server's trouble, not the document's.
    case rendererUnavailable(String)
    /// The library that reads or writes the format could not be loaded (it is loaded on first
    /// use: missing, or another version than easel was built for): the server's trouble, not the
    /// image's. `library` is its name (libavif, librsvg, Pango…), `reason` the loader's.
    case libraryUnavailable(library: String, reason: String)

    public var description: String {
        switch self {
        case .unsupportedFormat(let name): "unsupported image format: \(name)"
        case .unknownFormat: "not a known image format"
        case .corrupt(let format, let reason): "corrupt \(format) image: \(reason)"
        case .noPixels(let width, let height): "image has no pixels (its header says \(width)×\(height))"
        case .tooManyPixels(let width, let height, let limit):
            "image of \(width)×\(height) pixels exceeds the limit of \(limit) pixels"
        case .sideTooLong(let width, let height, let limit):
            "image of \(width)×\(height) pixels exceeds the limit of \(limit) pixels a side"
        case .inputTooLarge(let bytes, let limit): "input of \(bytes) bytes exceeds the limit of \(limit) bytes"
        case .tooManyScans(let limit): "progressive JPEG with more than \(limit) scans"
        case .profileTooLarge(let bytes, let limit): "ICC profile of \(bytes) bytes exceeds the limit of \(limit) bytes"
        case .tooManyFrames(let limit): "animation with more than \(limit) frames"
        case .tooManyAnimationPixels(let limit): "animation with more than \(limit) pixels over all its frames"
        case .encodingFailed(let format, let reason): "could not encode \(format): \(reason)"
        case .libraryUnavailable(let library, let reason): "\(library) could not be loaded: \(reason)"
        case .noSuchPage(let page, let pages): "no page \(page): the image has \(pages) page\(pages == 1 ? "" : "s") (numbered from 0)"
        case .invalidParameters(let reason): "invalid parameters: \(reason)"
        case .cancelled: "cancelled"
        case .renderFailed(let format, let reason): "could not render \(format): \(reason)"
        case .rendererUnavailable(let reason): "no renderer available: \(reason)"
        }
    }
}

/// Limits applied before and during decoding. Every one has a safe default.
public struct DecodingLimits: Sendable, Hashable {
    /// Largest width × height accepted, checked from the header before any pixel memory is
    /// allocated. Default 50 megapixels.
    public var maxPixels: Int
    /// Largest input accepted. Default 64 MiB.
    public var maxInputBytes: Int
    /// Most scans a progressive JPEG may have (a known way to make decoding slow). Default 100.
    public var maxProgressiveScans: Int = 100

    /// Largest embedded ICC profile accepted. Default 4 MiB (real profiles are a few KB; large
    /// CMYK ones reach hundreds).
    public var maxProfileBytes: Int = 4 << 20
    /// Most frames an animation or image sequence may have. Default 256.
    public var maxFrames: Int
    /// Most pixels an animation may have over all its frames (frames × canvas). Default 100
    /// million (e.g. 100 frames of 1000×1000).
    public var maxAnimationPixels: Int
    /// Most pixels one frame (the canvas) of an animation may have when it is read as an
    /// animation (`AnimationReader`): a still of the same size, or an animation answered as its
    /// first frame, is not refused (imgproxy's `max_animation_frame_resolution`). Default: no
    /// limit beyond `maxPixels`.
    public var maxAnimationFramePixels: Int = .max

    /// Most elements a vector document (SVG) may have, counted before it is parsed. Default
    /// 100,000.
    public var maxVectorElements: Int = 100_000
    /// Most pixels a JPEG XL image may have (libjxl decodes in float planes, about 18 bytes a
    /// pixel, which it allocates itself): its memory cap. Default 25 million (about 450 MB).
    public var maxJPEGXLPixels: Int = 25_000_000
    /// Most pages a document (PDF) may have, counted before any page is read. Default 1,000.
    public var maxPages: Int = 1000

    /// Longest side accepted (width or height), checked from the header with `maxPixels`.
    /// Default: no limit beyond `maxPixels` (a caller with a use for one sets it, e.g. watermark
    /// images).
    public var maxSide: Int
    /// Longest video accepted, in seconds (a file that says it is longer is refused before any
    /// frame is decoded; 0 or less refuses every video that says how long it is). Default one
    /// hour.
    public var maxVideoDuration: Double = 3600
    /// Most streams (video, audio, subtitles…) a video file may have. Default 16.
    public var maxVideoStreams: Int = 16

    /// Limits with the given values; each one left out keeps its default (50 megapixels, 64 MiB of
    /// input, 256 frames, 100 million animation pixels, no limit on a side). The others (scans,
    /// profile bytes, vector elements, JPEG XL pixels, pages, an animation's frame, video) are
    /// set on the value.
    public init(maxPixels: Int = 50_000_000, maxInputBytes: Int = 64 << 20, maxFrames: Int = 256,
                maxAnimationPixels: Int = 100_000_000, maxSide: Int = .max) {
        self.maxPixels = maxPixels
        self.maxSide = maxSide
        self.maxInputBytes = maxInputBytes
        self.maxFrames = maxFrames
        self.maxAnimationPixels = maxAnimationPixels
    }

    /// Every limit at its default: what decoding applies when the caller gives no limits.
    public static let `default` = DecodingLimits()

    /// Each limit the tighter of the two.
    public func tightened(by other: DecodingLimits) -> DecodingLimits {
        var limits = DecodingLimits(maxPixels: min(maxPixels, other.maxPixels), maxInputBytes: min(maxInputBytes, other.maxInputBytes),
                                    maxFrames: min(maxFrames, other.maxFrames),
                                    maxAnimationPixels: min(maxAnimationPixels, other.maxAnimationPixels), maxSide: min(maxSide, other.maxSide))
        limits.maxProgressiveScans = min(maxProgressiveScans, other.maxProgressiveScans)
        limits.maxProfileBytes = min(maxProfileBytes, other.maxProfileBytes)
        limits.maxVectorElements = min(maxVectorElements, other.maxVectorElements)
        limits.maxJPEGXLPixels = min(maxJPEGXLPixels, other.maxJPEGXLPixels)
        limits.maxPages = min(maxPages, other.maxPages)
        limits.maxAnimationFramePixels = min(maxAnimationFramePixels, other.maxAnimationFramePixels)
        limits.maxVideoDuration = min(maxVideoDuration, other.maxVideoDuration)
        limits.maxVideoStreams = min(maxVideoStreams, other.maxVideoStreams)
        return limits
    }

    /// Checks a size read from a header, before anything is computed from it: each side at
    /// least 1 (`noPixels`), at most `maxSide`, and width × height within `maxPixels` (computed
    /// without overflow: header sides reach 2³²−1).
    /// - Throws: `CodecError.noPixels`, `.sideTooLong` or `.tooManyPixels`.
    public func check(width: Int, height: Int) throws(CodecError) {
        guard width >= 1, height >= 1 else { throw .noPixels(width: width, height: height) }
        guard width <= maxSide, height <= maxSide else { throw .sideTooLong(width: width, height: height, limit: maxSide) }
        guard let pixels = Int.checkedProduct(width, height), pixels <= maxPixels else {
            throw .tooManyPixels(width: width, height: height, limit: maxPixels)
        }
    }
}

/// The text of a NUL-terminated message buffer filled by a C shim.
func cMessage(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The text of a NUL-terminated message written through a pointer by a C shim.
func cMessage(_ pointer: UnsafeMutablePointer<CChar>) -> String {
    String(cString: UnsafePointer(pointer))
}

/// Throws `.libraryUnavailable` when a shim's `result` says its library could not be loaded
/// (`EASEL_LAZY_UNAVAILABLE`), with the shim's `message`.
func checkLibrary(_ result: Int32, library: String, message: String) throws(CodecError) {
    if result == EASEL_LAZY_UNAVAILABLE { throw .libraryUnavailable(library: library, reason: message) }
}

extension ImageFileType {
    /// The library loaded on first use that reads this format (`CodecError.libraryUnavailable`).
    var lazyLibrary: String {
        switch self {
        case .svg: "librsvg"
        case .pdf: "poppler"
        case .heic: "libheif"
        case .avif: "libavif"
        case .jxl: "libjxl"
        case .tiff: "libtiff"
        default: "the \(self) library"
        }
    }
}

/// Runs a C shim call over the bytes of `data` with a message buffer of `messageSize`.
/// A result of 0 becomes `CodecError.corrupt` with the shim's message, `EASEL_LAZY_UNAVAILABLE`
/// `.libraryUnavailable` (naming `library`, by default the format's `lazyLibrary`); any other
/// result is returned for the caller to interpret.
func callShim(_ data: Data, format: ImageFileType, library: String? = nil, messageSize: Int32,
              _ body: (UnsafePointer<UInt8>, Int, UnsafeMutablePointer<CChar>) -> Int32) throws -> Int32 {
    var message = [CChar](repeating: 0, count: Int(messageSize))
    let result: Int32 = data.withUnsafeBytes { raw in
        guard let base = raw.baseAddress, raw.count > 0 else { return 0 }
        return message.withUnsafeMutableBufferPointer { body(base.assumingMemoryBound(to: UInt8.self), raw.count, $0.baseAddress!) }
    }
    try checkLibrary(result, library: library ?? format.lazyLibrary, message: cMessage(message))
    guard result != 0 else {
        let text = cMessage(message)
        throw CodecError.corrupt(format: format, reason: text.isEmpty ? "empty or unreadable data" : text)
    }
    return result
}

/// `body` with the bytes of `data` (nil pointer and 0 when it is nil or empty).
func withOptionalBytes<R>(_ data: Data?, _ body: (UnsafePointer<UInt8>?, Int) -> R) -> R {
    guard let data, !data.isEmpty else { return body(nil, 0) }
    return data.withUnsafeBytes { body($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }
}
