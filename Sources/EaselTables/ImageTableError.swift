import EaselSupport
import EaselCodecs
import EaselStorage
import Foundation

/// Everything that can go wrong in image tables and the image table cache.
public enum ImageTableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process (or another `ImageTable` in this one) has the table open: tables are
    /// never shared, see `ImageTable`.
    case inUseByAnotherProcess(path: String)
    /// The table could not grow: the file system is full. Entries already stored stay readable.
    case diskFull(path: String)
    /// A file operation failed.
    case ioError(operation: String, path: String, errno: Int32)
    /// No format has this name.
    case unknownFormat(String)
    /// Two formats share a name.
    case duplicateFormat(String)
    /// An image larger than the format's entry.
    case imageDoesNotFit(width: Int, height: Int, format: String)
    /// Every entry is being read (pinned) and none may be replaced; try again once readers let go.
    case allEntriesInUse(format: String)
    /// No source provider is set and the entity has no file URL for the format.
    case noSource(format: String)
    /// The source provider failed.
    case sourceFailed(format: String, reason: String)
    /// The source could not be decoded.
    case decodingFailed(format: String, error: CodecError)
    /// A processor or custom drawing step failed.
    case processingFailed(format: String, reason: String)
    /// The disk cache behind a `.diskCache` format failed.
    case diskCacheFailed(DiskCacheError)
    /// The request was cancelled: its completion never carries an image.
    case cancelled
    /// The table (or the cache holding it) was closed.
    case closed(path: String)

    public var description: String {
        switch self {
        case .inUseByAnotherProcess(let path): "image table \(path) is open in another process or instance"
        case .diskFull(let path): "disk full: image table \(path) cannot grow"
        case .ioError(let operation, let path, let code): "\(operation) failed for \(path): \(String(cString: strerror(code)))"
        case .unknownFormat(let name): "no image format named \(name)"
        case .duplicateFormat(let name): "two image formats are named \(name)"
        case .imageDoesNotFit(let width, let height, let format): "a \(width)×\(height) image does not fit format \(format)"
        case .allEntriesInUse(let format): "every entry of format \(format) is in use"
        case .noSource(let format): "no source provider and no file URL for format \(format)"
        case .sourceFailed(let format, let reason): "the source for format \(format) failed: \(reason)"
        case .decodingFailed(let format, let error): "the source for format \(format) cannot be decoded: \(error)"
        case .processingFailed(let format, let reason): "processing for format \(format) failed: \(reason)"
        case .diskCacheFailed(let error): "disk cache: \(error)"
        case .cancelled: "cancelled"
        case .closed(let path): "image table \(path) is closed"
        }
    }

    static func posix(_ code: Int32, operation: String, path: String) -> ImageTableError {
        switch code {
        case Errno.noSpace.code, Errno.quotaExceeded.code, Errno.fileTooLarge.code: .diskFull(path: path)
        default: .ioError(operation: operation, path: path, errno: code)
        }
    }
}
