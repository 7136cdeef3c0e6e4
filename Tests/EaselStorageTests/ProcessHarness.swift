import EaselSupport
import EaselStorage
import Foundation

/// True when `data` is exactly what a completed `set` of `key` wrote (see `CrashPattern`).
func isIntact(_ data: Data, key: String) -> Bool {
    data == CrashPattern.value(key: key, length: data.count)
}
