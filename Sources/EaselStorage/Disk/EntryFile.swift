import EaselSupport
/// The format of an entry stored as its own file under `data/`.
///
/// ```
/// offset   size  field
///      0      n  the value, byte for byte
///      n      k  the key, UTF-8
///    n+k      4  key length k (UInt32, little endian)
///    n+k+4    4  reserved, zero
///    n+k+8    8  value length n (UInt64, little endian)
///    n+k+16   8  checksum of the value (XXH64, seed 0)
///    n+k+24   8  checksum of the key and the 24 bytes before this field (XXH64, seed 1)
///    n+k+32   8  magic "EASELv1\n"
/// ```
/// The value comes first so that a file handed out by `withFileURL` can be given as it is to
/// anything that reads a value from a path and stops at its end (image decoders, `sendfile`
/// with a length). The trailer lets the index be rebuilt from the files alone. A file is written
/// whole under `tmp/` and renamed into `data/`, so nobody sees it half-written; the checksums
/// catch a file damaged afterwards.
enum EntryFile {
    static let magic: [UInt8] = Array("EASELv1\n".utf8)
    /// Bytes after the key.
    static let fixedTrailerSize = 40

    struct Trailer: Equatable {
        var keyLength: Int
        var valueLength: Int
        var valueChecksum: UInt64
    }

    /// The key and fixed trailer that follow a value of `valueLength` bytes.
    static func trailer(key: String, valueLength: Int, valueChecksum: UInt64) -> [UInt8] {
        var trailer = RecordWriter(capacity: key.utf8.count + fixedTrailerSize)
        trailer.append(text: key)
        trailer.append(UInt32(key.utf8.count))
        trailer.append(UInt32(0))
        trailer.append(UInt64(valueLength))
        trailer.append(valueChecksum)
        trailer.append(trailer.bytes.withUnsafeBytes { Checksum.compute($0, seed: 1) })
        trailer.append(bytes: magic)
        return trailer.bytes
    }

    /// Parses the fixed last 40 bytes of a file; nil when the magic or lengths are impossible.
    static func parseFixedTrailer(_ raw: UnsafeRawBufferPointer, fileSize: Int) -> Trailer? {
        guard raw.count == fixedTrailerSize, raw[32...].elementsEqual(magic) else { return nil }
        var reader = RecordReader(raw)
        guard let keyLength = reader.read(UInt32.self).map(Int.init), reader.skip(4), let valueLength = reader.read(UInt64.self),
              let checksum = reader.read(UInt64.self) else { return nil }
        guard valueLength <= UInt64(fileSize), Int(valueLength) + keyLength + fixedTrailerSize == fileSize else { return nil }
        return Trailer(keyLength: keyLength, valueLength: Int(valueLength), valueChecksum: checksum)
    }

    /// Checks a whole trailer (key followed by the fixed part) against its own checksum and
    /// returns its fields and key.
    static func verifyTrailer(_ bytes: UnsafeRawBufferPointer, fileSize: Int) -> (Trailer, String)? {
        guard bytes.count >= fixedTrailerSize else { return nil }
        let fixed = UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - fixedTrailerSize)...])
        guard let trailer = parseFixedTrailer(fixed, fileSize: fileSize),
              trailer.keyLength + fixedTrailerSize == bytes.count else { return nil }
        let k = trailer.keyLength
        let stored = UnsafeRawPointer(bytes.baseAddress!).loadLittleEndian(UInt64.self, at: k + 24)
        guard stored == Checksum.compute(UnsafeRawBufferPointer(rebasing: bytes[0..<(k + 24)]), seed: 1) else { return nil }
        return (trailer, String(decoding: bytes[0..<k], as: UTF8.self))
    }
}
