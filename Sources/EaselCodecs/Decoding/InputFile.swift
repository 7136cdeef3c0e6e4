import CInput
import Foundation

/// An image file read for decoding with as little memory as its decoder allows.
///
/// A regular file is mapped read-only instead of read into memory, and the JPEG, PNG and TIFF
/// decoders, and WebP's when it shrinks a still, hand the pages they have read past back to the
/// kernel as they go: a 100 MB PNG thumbnailed through a shrinking decode costs the rows being
/// decoded, not 100 MB. (Pages of a mapped file are the kernel's page cache: even where a
/// decoder keeps them, as GIF's does, the kernel can take them back under pressure, which it
/// cannot do with a copy.) Anything
/// that is not a regular file — a pipe, a device, standard input — is read into memory as
/// before, and so is a file when 256 are mapped at once.
///
/// A file that shrinks while it is mapped cannot end the process: what is read past its new end
/// is zeros, and ``decoding(_:)`` answers ``Failure/changedWhileRead(path:)`` instead of
/// whatever was made of them; so it does for a file whose size or times changed while it was
/// read. (A change between two reads of a page that leaves size and times as they were cannot be
/// seen; nor can it when a file is read into memory.) A caller writes what it made of the file
/// only after ``decoding(_:)`` has returned.
public struct InputFile: Sendable {
    /// Why a file could not be read.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file could not be opened or read (`reason`: the system's).
        case unreadable(path: String, reason: String)
        /// The file shrank while it was read: the image made of it would not be the file's.
        case changedWhileRead(path: String)

        /// The path and what went wrong, in words.
        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "\(path): \(reason)"
            case .changedWhileRead(let path): "\(path) changed while it was read"
            }
        }
    }

    /// Where the file is.
    public let path: String
    /// Its bytes (a read-only mapping when ``isMapped``).
    public let data: Data
    /// Whether the file is mapped rather than read into memory.
    public let isMapped: Bool

    /// Opens the file at `path`, refusing one of more than `limit` bytes before reading it
    /// (``CodecError/inputTooLarge(bytes:limit:)``: a huge file, or a device such as /dev/zero,
    /// is never read whole).
    public init(path: String, limit: Int) throws {
        try self.init(path: path, limit: limit, descriptor: nil)
    }

    /// The file open as `descriptor` (for reading; the caller keeps and closes it), found at
    /// `path` (what ``changedWhileRead`` looks at again and errors name): for a caller that
    /// checked what it opened (a server confining reads to a directory).
    public init(descriptor: Int32, path: String, limit: Int) throws {
        try self.init(path: path, limit: limit, descriptor: descriptor)
    }

    private init(path: String, limit: Int, descriptor: Int32?) throws {
        self.path = path
        var size = 0
        var error: Int32 = 0
        let mapped = descriptor.map { easel_input_map_descriptor($0, limit, &size, &error) } ?? easel_input_map(path, limit, &size, &error)
        if let start = mapped {
            data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: start), count: size,
                        deallocator: .custom { start, size in easel_input_unmap(start.assumingMemoryBound(to: UInt8.self), size) })
            isMapped = true
            return
        }
        switch error {
        case EFBIG: throw CodecError.inputTooLarge(bytes: size, limit: limit)
        // Not a regular file, an empty one, no slot free, a file system that cannot map it: read
        // as a stream, bounded.
        case EINVAL, ENOSPC, ENODEV: break
        default: throw Failure.unreadable(path: path, reason: String(cString: strerror(error)))
        }
        do {
            let handle = try descriptor.map { FileHandle(fileDescriptor: $0, closeOnDealloc: false) } ?? FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { if descriptor == nil { try? handle.close() } }
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw Failure.unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
        guard data.count <= limit else { throw CodecError.inputTooLarge(bytes: data.count, limit: limit) }
        isMapped = false
    }

    /// Whether the mapped file changed while it was read: it shrank under a read (what was read
    /// past its new end was zeros), or its size or modification time is no longer what it was
    /// when it was mapped (written in place, cut and written again): `wasCutShort(_:)`, which
    /// looks at the file through the descriptor kept with the mapping. (A file replaced under
    /// its name is no change: the mapping is the old file's, whole.)
    public var changedWhileRead: Bool {
        guard isMapped else { return false }
        return Self.wasCutShort(data)
    }

    /// Whether `data` is (a slice of) a mapped input file that shrank while it was read (what
    /// was read past its new end was zeros) or whose size or times changed since it was mapped
    /// (written in place). False for any other memory.
    public static func wasCutShort(_ data: Data) -> Bool {
        data.withUnsafeBytes { $0.baseAddress.map { easel_input_changed($0) != 0 } ?? false }
    }

    /// Whether `data` is (a slice of) a mapped input file.
    public static func isMapped(_ data: Data) -> Bool {
        data.withUnsafeBytes { $0.baseAddress.map { easel_input_is_mapped($0) != 0 } ?? false }
    }

    /// Hands every page of `data`, when it is a mapped input file, back to the kernel (a header
    /// was read and the decode that reads it again may be a while): a mapping waiting for its
    /// decode holds no memory. Nothing for any other memory.
    public static func handBack(_ data: Data) {
        data.withUnsafeBytes { if let start = $0.baseAddress { easel_input_release_all(start) } }
    }

    /// What `body` makes of the file's bytes; ``Failure/changedWhileRead(path:)`` instead,
    /// whatever `body` returned or threw, when the file shrank while it ran.
    public func decoding<T>(_ body: (Data) throws -> T) throws -> T {
        let result = Result { try body(data) }
        if changedWhileRead { throw Failure.changedWhileRead(path: path) }
        return try result.get()
    }
}
