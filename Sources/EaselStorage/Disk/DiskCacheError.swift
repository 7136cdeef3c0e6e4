import EaselSupport
/// Why a disk cache operation failed.
public enum DiskCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file system has no space left (ENOSPC, EDQUOT, or SQLite reported a full database).
    case diskFull(path: String)
    /// The process may not write where the cache lives (EACCES, EPERM, EROFS).
    case permissionDenied(path: String)
    /// Any other I/O failure, with the `errno` that caused it.
    case ioError(operation: String, path: String, errno: Int32)
    /// The index database failed in a way that is not a full disk.
    case index(message: String)
    /// The value is larger than the cache's byte limit and can never be stored.
    case valueTooLarge(size: Int, limit: Int)
    /// The cache directory could not be created or is not a directory.
    case invalidDirectory(path: String)
    /// The index was written by another version of Easel with another schema. It is left alone
    /// (that version may be using it); remove the cache directory to start afresh.
    case incompatibleIndex(path: String, found: Int, expected: Int)
    /// `removeValues(withKeyPrefix:)` was given an empty prefix (`removeAll` empties the cache).
    case invalidKeyPrefix

    public var description: String {
        switch self {
        case .diskFull(let path): "disk full while writing \(path)"
        case .permissionDenied(let path): "permission denied for \(path)"
        case .ioError(let operation, let path, let code): "\(operation) failed for \(path): \(errnoDescription(code))"
        case .index(let message): "cache index error: \(message)"
        case .valueTooLarge(let size, let limit): "value of \(size) bytes exceeds the byte limit of \(limit)"
        case .invalidDirectory(let path): "not a usable cache directory: \(path)"
        case .incompatibleIndex(let path, let found, let expected):
            "\(path) has index schema \(found); this version of Easel uses \(expected). Remove the cache directory to start afresh"
        case .invalidKeyPrefix: "an empty key prefix would remove every entry; use removeAll"
        }
    }

    /// Maps an `errno` from a file operation to the case callers can act on.
    static func posix(_ code: Int32, operation: String, path: String) -> DiskCacheError {
        switch code {
        case Errno.noSpace.code, Errno.quotaExceeded.code: .diskFull(path: path)
        case Errno.accessDenied.code, Errno.notPermitted.code, Errno.readOnlyFileSystem.code: .permissionDenied(path: path)
        default: .ioError(operation: operation, path: path, errno: code)
        }
    }

    /// Maps a SQLite failure to the case callers can act on.
    static func sqlite(_ error: SQLiteError, path: String) -> DiskCacheError {
        switch error.code & 0xFF {
        case 13 /* SQLITE_FULL */: .diskFull(path: path)
        case 8 /* SQLITE_READONLY */, 3 /* SQLITE_PERM */, 23 /* SQLITE_AUTH */: .permissionDenied(path: path)
        case 10 /* SQLITE_IOERR */: .ioError(operation: "index write", path: path, errno: Errno.io.code)
        default: .index(message: error.description)
        }
    }
}
