import EaselCodecs

/// A named kind of pre-processed image that an `ImageTableCache` stores: its size, pixel format,
/// the processing that turns a source image into one of its entries, and how many entries to keep.
///
/// ```swift
/// let thumb = ImageFormat(name: "thumb", family: "photos", width: 256, height: 256, fit: .fill,
///                         processors: [RoundedCorners(radius: 16)], maximumCount: 5_000)
/// ```
///
/// Formats of one `family` share a decode: an `ImageTableCache` makes every format of the
/// family from one decode when a source arrives for one of them (unless the source provider
/// says otherwise); an `ImagePipeline` answers the requested format first and makes the others
/// that its decode covers afterwards.
public struct ImageFormat: Sendable, CustomStringConvertible {
    /// Where a format's entries live.
    public enum Storage: String, Sendable, Hashable {
        /// A memory-mapped image table: zero-copy reads.
        case table
        /// Only the disk cache, as raw pixels: reading copies them out, nothing is mapped. For
        /// large or rarely used formats that should not take address space and table space.
        case diskCache
    }

    /// The format's name, unique within a cache: what requests name it by (`formatName`), and the
    /// base of its table's file name.
    public let name: String
    /// The group of formats made from one decode of a source; the format's own `name` unless given.
    public let family: String
    /// The entry size: processed images are at most this large.
    public let width: Int
    /// The entry height in pixels, 1…65535 (with `width`, the size processed images fit in).
    public let height: Int
    /// The pixel format entries are stored in; processed images are converted to it. RGBA8 by
    /// default.
    public var pixelFormat: Bitmap.PixelFormat = .rgba8
    /// `fit` keeps the aspect ratio inside the box (one side may be smaller, and sources smaller
    /// than the box keep their size); `fill` covers the box and crops the centre.
    public let fit: ResizeMode
    /// Run in order after the resize, e.g. `RoundedCorners`, `Grayscale`, `Flatten`.
    public var processors: [any ImageProcessor] = []
    /// Entries kept; beyond it the least recently used entry is replaced.
    public let maximumCount: Int
    /// Where the entries live: a memory-mapped table (the default) or only the disk cache.
    public let storage: Storage
    /// Bump it when the meaning of the processing changes in a way its parameters do not show
    /// (e.g. a custom drawing step changed): entries made by another version are dropped.
    public var version = 0

    /// A format named `name` whose entries are at most `width × height` pixels, in RGBA, with no
    /// processing after the resize, at version 0 (`pixelFormat`, `processors` and `version` are
    /// set on the value); traps on an empty name, a side outside 1…65535 or a `maximumCount`
    /// below 1.
    /// - Parameters:
    ///   - name: the name requests use, unique within a cache.
    ///   - family: the formats that share a decode; nil: the format's own name.
    ///   - width: the entry width in pixels.
    ///   - height: the entry height in pixels.
    ///   - fit: how sources are resized to the entry size.
    ///   - maximumCount: entries kept before the least recently used is replaced.
    ///   - storage: a memory-mapped table, or only the disk cache.
    public init(name: String, family: String? = nil, width: Int, height: Int, fit: ResizeMode = .fit, maximumCount: Int,
                storage: Storage = .table) {
        precondition(!name.isEmpty, "a format needs a name")
        precondition(width > 0 && height > 0 && width <= Int(UInt16.max) && height <= Int(UInt16.max),
                     "a format's size is 1...65535 on each side")
        precondition(maximumCount > 0, "a format keeps at least one entry")
        self.name = name
        self.family = family ?? name
        self.width = width
        self.height = height
        self.fit = fit
        self.maximumCount = maximumCount
        self.storage = storage
    }

    /// Describes everything that decides an entry's pixels; entries stored under another
    /// identifier are not this format's and are dropped when its table is opened.
    public var processingIdentifier: String {
        let steps = processors.isEmpty ? "" : "|" + processors.identifier
        return "\(width)x\(height),\(fit.rawValue),\(pixelFormat),v\(version)\(steps)"
    }

    /// Bytes of one entry's pixels at most (64-byte rows).
    public var entryByteCount: Int { Bitmap.rowBytes(width: width, pixelFormat: pixelFormat) * height }

    public var description: String { "\(name) (\(family), \(processingIdentifier))" }

    /// The smallest decoded size of a `sourceWidth × sourceHeight` source that still makes this
    /// format exact: what shrink-on-load may decode to.
    public func minimumSourceSize(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
        Resize(width: width, height: height, mode: fit).minimumSourceSize(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
    }

    /// `minimumSourceSize` for an image with this header (a vector planned at its planning size).
    public func minimumSourceSize(of info: ImageInfo) -> (width: Int, height: Int) {
        Resize(width: width, height: height, mode: fit).minimumSourceSize(of: info)
    }

    /// Turns a source image into this format's entry: resize, then `processors`, then the
    /// pixel format. Exactly what an `ImageTableCache` stores for this format.
    /// - Throws: `ImageTableError.imageDoesNotFit` when a processor makes the image larger than
    ///   the format, or the processor's own error.
    public func process(_ source: Bitmap) throws(ImageTableError) -> Bitmap {
        do {
            let resized = try Resize(width: width, height: height, mode: fit).process(source)
            return try fitted(processors.process(resized))
        } catch let error as ImageTableError {
            throw error
        } catch CodecError.cancelled {
            throw ImageTableError.cancelled
        } catch let error as CodecError {
            throw ImageTableError.processingFailed(format: name, reason: error.description)
        } catch {
            throw ImageTableError.processingFailed(format: name, reason: "\(error)")
        }
    }

    /// `bitmap` in this format's pixel format, checked to fit the entry.
    func fitted(_ bitmap: Bitmap) throws(ImageTableError) -> Bitmap {
        guard bitmap.width <= width, bitmap.height <= height else {
            throw ImageTableError.imageDoesNotFit(width: bitmap.width, height: bitmap.height, format: name)
        }
        return bitmap.converted(to: pixelFormat)
    }
}
