import EaselSupport
import EaselCodecs
import EaselStorage
import Foundation

/// Where everything is in a table file (see the layout at the top of this file).
struct TableGeometry: Equatable {
    static let headerBytes = 4096
    static let recordBytes = 64
    static let pageBytes = 4096
    static let magic: UInt64 = 0x4C42_5454_4C45_5341  // "EASELTBL" little-endian
    static let layoutVersion: UInt32 = 1

    let width: Int
    let height: Int
    let pixelFormatCode: UInt32
    let entryStride: Int
    let entriesPerChunk: Int
    let metadataBytes: Int
    let chunkBytes: Int
    let processingHash: UInt64

    init(format: ImageFormat) {
        width = format.width
        height = format.height
        pixelFormatCode = format.pixelFormat == .rgba8 ? 1 : 2
        entryStride = format.entryByteCount
        entriesPerChunk = max(1, min(4096, (4 << 20) / entryStride))
        metadataBytes = Self.roundUp(entriesPerChunk * Self.recordBytes)
        chunkBytes = metadataBytes + Self.roundUp(entriesPerChunk * entryStride)
        processingHash = Checksum.compute(Data(format.processingIdentifier.utf8))
    }

    static func roundUp(_ bytes: Int) -> Int { (bytes + pageBytes - 1) / pageBytes * pageBytes }

    func recordOffset(slot: Int) -> Int {
        Self.headerBytes + slot / entriesPerChunk * chunkBytes + slot % entriesPerChunk * Self.recordBytes
    }

    func pixelOffset(slot: Int) -> Int {
        Self.headerBytes + slot / entriesPerChunk * chunkBytes + metadataBytes + slot % entriesPerChunk * entryStride
    }

    /// The file size that holds slots `0..<slots` (page-rounded).
    func fileBytes(forSlots slots: Int) -> Int {
        guard slots > 0 else { return Self.headerBytes }
        return Self.roundUp(pixelOffset(slot: slots - 1) + entryStride)
    }

    /// How many whole slots a file of `size` bytes holds.
    func slots(inFileOf size: Int) -> Int {
        guard size > Self.headerBytes else { return 0 }
        let chunks = (size - Self.headerBytes) / chunkBytes
        let rest = (size - Self.headerBytes) % chunkBytes
        let partial = rest > metadataBytes ? (rest - metadataBytes) / entryStride : 0
        return chunks * entriesPerChunk + min(entriesPerChunk, partial)
    }

    private func headerBytes() -> [UInt8] {
        var header = RecordWriter(capacity: 72)
        header.append(Self.magic)
        header.append(Self.layoutVersion)
        header.append(UInt32(Self.headerBytes))
        header.append(UInt32(width))
        header.append(UInt32(height))
        header.append(pixelFormatCode)
        header.append(UInt32(entriesPerChunk))
        header.append(UInt64(entryStride))
        header.append(UInt64(metadataBytes))
        header.append(UInt64(chunkBytes))
        header.append(processingHash)
        header.append(header.bytes.withUnsafeBytes { Checksum.compute($0) })
        return header.bytes
    }

    func writeHeader(to fd: Int32, path: String) throws(ImageTableError) {
        let header = headerBytes()
        let failure: Errno? = header.withUnsafeBytes { bytes in
            do throws(Errno) { try SystemCalls.write(fd, bytes, at: 0) } catch { return error }
            return nil
        }
        if let failure { throw .posix(failure.code, operation: "write header", path: path) }
    }

    /// True when the file's header describes exactly this geometry and processing.
    func matchesHeader(of fd: Int32) -> Bool {
        var found = [UInt8](repeating: 0, count: 72)
        let read = found.withUnsafeMutableBytes { try? SystemCalls.read(fd, into: $0, at: 0) }
        return read == found.count && found == headerBytes()
    }
}
