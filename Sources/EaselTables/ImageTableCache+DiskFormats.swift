import EaselCodecs
import EaselStorage
import Foundation

extension ImageTableCache {
    // MARK: Disk cache formats

    func diskKey(_ entity: UUID, _ format: ImageFormat) -> String {
        "\(format.name)/\(format.processingIdentifier)/\(entity.uuidString)"
    }

    func diskImage(for entity: some ImageEntity, format: ImageFormat) throws(ImageTableError) -> Bitmap? {
        guard let diskCache else { return nil }
        let data: Data?
        do { data = try diskCache.data(forKey: diskKey(entity.entityID, format)) } catch { throw Self.storageError(error) }
        guard let data, let record = PixelRecord.decode(data, pixelFormat: format.pixelFormat),
              record.sourceID == entity.sourceImageID else { return nil }
        return record.bitmap
    }

    static func storageError(_ error: any Error) -> ImageTableError {
        if let error = error as? DiskCacheError { return .diskCacheFailed(error) }
        return .ioError(operation: "disk cache", path: "", errno: EIO)
    }
}

/// A `.diskCache` format's entry: a 32-byte header, then the pixels with 64-byte rows.
///
///     0 4 "EPX1"   4 2 width   6 2 height   8 1 pixel format (1 RGBA8, 2 Gray8)   9 1 opaque
///     10 6 zero    16 16 source image UUID
enum PixelRecord {
    static let headerBytes = 32

    static func encode(_ image: Bitmap, sourceID: UUID) -> Data {
        var data = Data(count: headerBytes + image.rowBytes * image.height)
        data.withUnsafeMutableBytes { raw in
            raw.copyBytes(from: Array("EPX1".utf8))
            raw.storeBytes(of: UInt16(image.width).littleEndian, toByteOffset: 4, as: UInt16.self)
            raw.storeBytes(of: UInt16(image.height).littleEndian, toByteOffset: 6, as: UInt16.self)
            raw[8] = image.pixelFormat == .rgba8 ? 1 : 2
            raw[9] = image.isKnownOpaque ? 1 : 0
            raw.storeBytes(of: sourceID.uuid, toByteOffset: 16, as: uuid_t.self)
            image.withUnsafeBytes { pixels in
                UnsafeMutableRawBufferPointer(rebasing: raw[headerBytes...]).copyMemory(from: pixels)
            }
        }
        return data
    }

    static func decode(_ data: Data, pixelFormat: Bitmap.PixelFormat) -> (bitmap: Bitmap, sourceID: UUID)? {
        guard data.count > headerBytes else { return nil }
        return data.withUnsafeBytes { raw -> (Bitmap, UUID)? in
            guard Array(raw[0..<4]) == Array("EPX1".utf8), raw[8] == (pixelFormat == .rgba8 ? 1 : 2) else { return nil }
            let width = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt16.self)))
            let height = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 6, as: UInt16.self)))
            guard width > 0, height > 0 else { return nil }
            var bitmap = Bitmap(width: width, height: height, pixelFormat: pixelFormat)
            guard data.count == headerBytes + bitmap.rowBytes * height else { return nil }
            bitmap.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[headerBytes...])) }
            if raw[9] == 1 { bitmap.markOpaque() }
            return (bitmap, UUID(uuid: raw.loadUnaligned(fromByteOffset: 16, as: uuid_t.self)))
        }
    }
}
