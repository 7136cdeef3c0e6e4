import EaselSupport
import Synchronization

/// Decoded pixels: 8 bits per channel, rows padded to a multiple of 64 bytes.
///
/// ```swift
/// var bitmap = Bitmap(width: 2, height: 1, pixelFormat: .rgba8)
/// bitmap.withUnsafeMutableBytes { $0[0] = 255 }          // copies first if shared
/// let red = bitmap.pixel(x: 0, y: 0)                     // [255, 0, 0, 0]
/// ```
///
/// A value type with copy-on-write storage: copies share the pixels until one of them is
/// written, so passing a bitmap around or reading it never copies. RGBA alpha is straight
/// (not premultiplied).
public struct Bitmap: Sendable {
    /// How a pixel is laid out.
    public enum PixelFormat: Sendable, Hashable, CustomStringConvertible {
        /// Red, green, blue, alpha; one byte each; straight alpha.
        case rgba8
        /// One byte of luminance.
        case gray8

        /// Bytes one pixel takes: 4 for RGBA8, 1 for Gray8.
        public var bytesPerPixel: Int {
            switch self {
            case .rgba8: 4
            case .gray8: 1
            }
        }

        public var description: String { self == .rgba8 ? "RGBA8" : "Gray8" }
    }

    /// Width in pixels (at least 1).
    public let width: Int
    /// Height in pixels, the number of rows (at least 1).
    public let height: Int
    /// How each pixel is laid out: RGBA8 or Gray8.
    public let pixelFormat: PixelFormat
    /// Bytes from one row to the next: a multiple of 64.
    public let rowBytes: Int
    private var storage: Storage
    /// True when every alpha value is known to be 255 (always for Gray8): resizing and other
    /// processing then skip premultiplication. Writing through `withUnsafeMutableBytes` clears
    /// it, since the writer may change alpha.
    public private(set) var isKnownOpaque: Bool

    /// Set by a decoder that shrank the image on load by a factor that does not divide its size:
    /// how much of this bitmap is image (`Resampler.Extent`), so that a resize maps exactly that.
    /// Writes keep it; a new bitmap (a crop, a rotation) starts without it.
    var imageExtent: Resampler.Extent?

    /// Row alignment, so that SIMD loads of any row start on a cache line.
    public static let rowAlignment = 64

    /// A bitmap of zero bytes (transparent black, or black).
    public init(width: Int, height: Int, pixelFormat: PixelFormat) {
        precondition(width > 0 && height > 0, "a bitmap has at least one pixel")
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        rowBytes = Self.rowBytes(width: width, pixelFormat: pixelFormat)
        storage = Storage(byteCount: rowBytes * height)
        isKnownOpaque = pixelFormat == .gray8
    }

    /// Pixel buffers up to `bytes` come from malloc (and so, with glibc tuned for a batch, from
    /// its arenas, reused from one image to the next) instead of being mapped and unmapped per
    /// bitmap. For batch tools that decode one image after another on every core; a server keeps
    /// the default (1 MiB), so that freed pixels go back to the system.
    public static func keepPixelBuffersInArenas(upTo bytes: Int) {
        Storage.mapThresholdStorage.store(max(1 << 20, bytes), ordering: .relaxed)
    }

    /// Records that every alpha value is 255 (decoders of opaque formats, `Flatten`).
    package mutating func markOpaque() { isKnownOpaque = true }

    /// The padded row size for `width` pixels.
    public static func rowBytes(width: Int, pixelFormat: PixelFormat) -> Int {
        let unpadded = width * pixelFormat.bytesPerPixel
        return (unpadded + rowAlignment - 1) / rowAlignment * rowAlignment
    }

    /// All `rowBytes × height` bytes, read-only, without copying.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage.pointer, count: storage.byteCount))
    }

    /// All bytes, writable; copies them first if another bitmap shares them.
    public mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        // Borrowed memory (an image table's entry) is never written through a bitmap.
        if storage.owner != nil || !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        isKnownOpaque = pixelFormat == .gray8
        return try body(UnsafeMutableRawBufferPointer(start: storage.pointer, count: storage.byteCount))
    }

    /// The bytes of one pixel (4 for RGBA8, 1 for Gray8).
    public func pixel(x: Int, y: Int) -> [UInt8] {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel out of bounds")
        let offset = y * rowBytes + x * pixelFormat.bytesPerPixel
        return withUnsafeBytes { Array($0[offset..<(offset + pixelFormat.bytesPerPixel)]) }
    }

    /// True when both hold the same pixels (padding ignored).
    public func hasSamePixels(as other: Bitmap) -> Bool {
        guard width == other.width, height == other.height, pixelFormat == other.pixelFormat else { return false }
        let used = width * pixelFormat.bytesPerPixel
        return withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in
                (0..<height).allSatisfy { y in
                    SystemCalls.bytesEqual(mine.baseAddress! + y * rowBytes, theirs.baseAddress! + y * other.rowBytes, count: used)
                }
            }
        }
    }
}

/// Owns memory that bitmaps borrow instead of copying, such as an image table's memory-mapped
/// entries. The owner keeps the memory valid and unchanged until it is told the bitmap let go.
public protocol BitmapMemoryOwner: AnyObject, Sendable {
    /// Called exactly once per borrowing bitmap storage, when the last bitmap sharing it goes
    /// away, with the `token` it was created with. Must not block for long and must not create
    /// or release bitmaps borrowing from this owner while holding a lock they also need.
    func bitmapDidRelease(token: Int)
}

extension Bitmap {
    /// A bitmap over memory it neither copies nor frees: `rowBytes(width:pixelFormat:) × height`
    /// bytes at `pointer`, which must be 64-byte aligned and stay valid and unmodified until
    /// `owner.bitmapDidRelease(token:)` is called. Writing through `withUnsafeMutableBytes`
    /// copies the pixels first, so the borrowed memory is only ever read.
    ///
    /// Creating one allocates a single small object and copies no pixels.
    public init(unsafeBorrowing pointer: UnsafeRawPointer, width: Int, height: Int, pixelFormat: PixelFormat,
                isKnownOpaque: Bool, owner: any BitmapMemoryOwner, token: Int) {
        precondition(width > 0 && height > 0, "a bitmap has at least one pixel")
        precondition(UInt(bitPattern: pointer) % UInt(Self.rowAlignment) == 0, "borrowed pixels must be 64-byte aligned")
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        rowBytes = Self.rowBytes(width: width, pixelFormat: pixelFormat)
        storage = Storage(borrowing: UnsafeMutableRawPointer(mutating: pointer), byteCount: rowBytes * height,
                          owner: owner, token: token)
        self.isKnownOpaque = isKnownOpaque || pixelFormat == .gray8
    }

    /// True when the pixels are borrowed from a `BitmapMemoryOwner` (not copied).
    public var isBorrowed: Bool { storage.owner != nil }
}

extension Bitmap {
    /// 64-byte-aligned pixel memory, owned (allocated here) or borrowed from a
    /// `BitmapMemoryOwner`.
    ///
    /// `@unchecked Sendable`: the bytes are written only through `Bitmap.withUnsafeMutableBytes`,
    /// which first makes sure this storage is owned and referenced by that one bitmap alone
    /// (copying it otherwise); storage shared between bitmaps, and so between threads, and
    /// borrowed storage are only ever read. `owner` and `token` never change.
    final class Storage: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        let byteCount: Int
        let owner: (any BitmapMemoryOwner)?
        let token: Int
        /// Mapped with `mmap` (large bitmaps) rather than allocated with malloc.
        let mapped: Bool

        /// Pixel buffers this large are mapped directly and unmapped when freed. From malloc,
        /// glibc would serve them from its arenas once its adaptive mmap threshold has risen, and
        /// a server decoding images on several threads would keep hundreds of megabytes of
        /// freed pixels that it never returns to the system. A batch (`easel thumbnail`) raises
        /// it with `Bitmap.keepPixelBuffersInArenas(upTo:)`: there each image would otherwise map,
        /// fault in and unmap its buffers, page faults and TLB shootdowns on every thread.
        static var mapThreshold: Int { mapThresholdStorage.load(ordering: .relaxed) }
        static let mapThresholdStorage = Atomic<Int>(1 << 20)

        init(borrowing pointer: UnsafeMutableRawPointer, byteCount: Int, owner: any BitmapMemoryOwner, token: Int) {
            self.pointer = pointer
            self.byteCount = byteCount
            self.owner = owner
            self.token = token
            mapped = false
        }

        init(byteCount: Int) {
            self.byteCount = byteCount
            owner = nil
            token = 0
            if byteCount >= Self.mapThreshold {
                // Zero-filled pages, faulted in at once; page-aligned, so 64-byte aligned.
                guard let memory = SystemCalls.mapAnonymous(length: byteCount) else {
                    fatalError("out of memory mapping \(byteCount) bytes of pixels")
                }
                pointer = memory
                mapped = true
                return
            }
            guard let memory = SystemCalls.allocateAligned(byteCount, alignment: Bitmap.rowAlignment) else {
                fatalError("out of memory allocating \(byteCount) bytes of pixels")
            }
            pointer = memory
            mapped = false
        }

        func copy() -> Storage {
            let copy = Storage(byteCount: byteCount)
            copy.pointer.copyMemory(from: pointer, byteCount: byteCount)
            return copy
        }

        deinit {
            if let owner {
                owner.bitmapDidRelease(token: token)
            } else if mapped {
                SystemCalls.unmap(pointer, length: byteCount)
            } else {
                SystemCalls.freeAligned(pointer)
            }
        }
    }
}
