/// Values by key, bounded in bytes: a value larger than the budget is not kept, and one that
/// would go past it empties the memo first (what it holds is cheap to make again: prepared
/// watermarks, drawn text marks).
package final class ByteBoundedMemo<Value: Sendable>: Sendable {
    private struct State {
        var entries: [String: Value] = [:]
        var bytes = 0
    }
    private let state = Locked(State())
    /// The budget in bytes.
    package let byteLimit: Int
    private let size: @Sendable (Value) -> Int

    /// A memo of at most `byteLimit` bytes, each value `size` bytes.
    package init(byteLimit: Int, size: @escaping @Sendable (Value) -> Int) {
        self.byteLimit = byteLimit
        self.size = size
    }

    package func value(forKey key: String) -> Value? { state.withLock { $0.entries[key] } }

    /// Keeps `value` unless the key already has one.
    package func keep(_ value: Value, forKey key: String) {
        let bytes = size(value)
        guard bytes <= byteLimit else { return }
        state.withLock { state in
            guard state.entries[key] == nil else { return }
            if state.bytes + bytes > byteLimit {
                state.entries.removeAll()
                state.bytes = 0
            }
            state.entries[key] = value
            state.bytes += bytes
        }
    }

    package func remove(_ key: String) {
        state.withLock { state in
            if let value = state.entries.removeValue(forKey: key) { state.bytes -= size(value) }
        }
    }
}
