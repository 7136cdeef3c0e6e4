import EaselSupport
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
        var header = RecordWriter(capacity: headerBytes)
        header.append(text: "EPX1")
        header.append(UInt16(image.width))
        header.append(UInt16(image.height))
        header.append(UInt8(image.pixelFormat == .rgba8 ? 1 : 2))
        header.append(UInt8(image.isKnownOpaque ? 1 : 0))
        header.pad(to: 16)
        header.append(sourceID)
        var data = Data(capacity: headerBytes + image.rowBytes * image.height)
        data.append(contentsOf: header.bytes)
        image.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }

    static func decode(_ data: Data, pixelFormat: Bitmap.PixelFormat) -> (bitmap: Bitmap, sourceID: UUID)? {
        guard data.count > headerBytes else { return nil }
        return data.withUnsafeBytes { raw -> (Bitmap, UUID)? in
            var reader = RecordReader(raw)
            guard reader.expect(text: "EPX1"), let width16 = reader.read(UInt16.self), let height16 = reader.read(UInt16.self),
                  reader.read(UInt8.self) == (pixelFormat == .rgba8 ? 1 : 2), let opaque = reader.read(UInt8.self),
                  reader.skip(6), let sourceID = reader.readUUID() else { return nil }
            let (width, height) = (Int(width16), Int(height16))
            guard width > 0, height > 0 else { return nil }
            var bitmap = Bitmap(width: width, height: height, pixelFormat: pixelFormat)
            guard reader.remainingCount == bitmap.rowBytes * height else { return nil }
            bitmap.withUnsafeMutableBytes { $0.copyMemory(from: reader.remaining) }
            if opaque == 1 { bitmap.markOpaque() }
            return (bitmap, sourceID)
        }
    }
}
