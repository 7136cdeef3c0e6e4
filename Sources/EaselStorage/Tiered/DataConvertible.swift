import Foundation

/// A value that can be rebuilt from bytes read from a disk cache (Haneke's `DataConvertible`).
public protocol DataConvertible {
    /// Rebuilds a value from `data`.
    /// - Throws: when the bytes do not hold such a value; the cache then treats them as a miss.
    static func convertFromData(_ data: Data) throws -> Self
}

/// A value that can be written to a disk cache as bytes (Haneke's `DataRepresentable`).
public protocol DataRepresentable {
    /// Encodes the value as the bytes a disk cache stores.
    /// - Throws: when the value cannot be encoded; the set that needed the bytes then fails.
    func asData() throws -> Data
}

/// Bytes are stored as they are.
extension Data: DataConvertible, DataRepresentable {
    public static func convertFromData(_ data: Data) throws -> Data { data }
    /// Returns the bytes themselves.
    public func asData() throws -> Data { self }
}

/// Strings are stored as UTF-8.
extension String: DataConvertible, DataRepresentable {
    public static func convertFromData(_ data: Data) throws -> String {
        guard let string = String(data: data, encoding: .utf8) else { throw DataConversionError.invalidUTF8 }
        return string
    }

    /// Returns the string's UTF-8 bytes.
    public func asData() throws -> Data { Data(utf8) }
}

/// Any `Codable` type becomes cacheable as JSON by declaring the conformance with no body:
/// `extension Profile: DataConvertible, DataRepresentable {}`.
extension DataConvertible where Self: Decodable {
    public static func convertFromData(_ data: Data) throws -> Self {
        try JSONDecoder().decode(Self.self, from: data)
    }
}

extension DataRepresentable where Self: Encodable {
    /// Encodes the value as JSON with a default `JSONEncoder`.
    public func asData() throws -> Data { try JSONEncoder().encode(self) }
}

/// Arrays and dictionaries of `Codable` values are cacheable as JSON out of the box.
extension Array: DataConvertible, DataRepresentable where Element: Codable {}
extension Dictionary: DataConvertible, DataRepresentable where Key: Codable, Value: Codable {}

/// Why cached bytes could not be converted back to a value.
public enum DataConversionError: Error, Sendable, Equatable {
    /// The bytes are not valid UTF-8, so they hold no `String`.
    case invalidUTF8
}
