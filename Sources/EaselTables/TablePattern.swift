import EaselSupport
import EaselCodecs
import EaselStorage
import Foundation

/// Deterministic test images for crash and concurrency tests: the pixels depend only on the
/// entity ID and size, so a reader can check it got exactly what a completed write stored.
package enum TablePattern {
    package static func image(for entityID: UUID, width: Int, height: Int, pixelFormat: Bitmap.PixelFormat = .rgba8) -> Bitmap {
        var bitmap = Bitmap(width: width, height: height, pixelFormat: pixelFormat)
        var generator = SplitMix64(seed: Checksum.compute(withUnsafeBytes(of: entityID.uuid) { Data($0) }))
        let used = width * pixelFormat.bytesPerPixel, rowBytes = bitmap.rowBytes
        bitmap.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                var x = 0
                while x < used {
                    let value = generator.next()
                    for byte in 0..<min(8, used - x) { bytes[y * rowBytes + x + byte] = UInt8(truncatingIfNeeded: value >> (byte * 8)) }
                    x += 8
                }
            }
        }
        return bitmap
    }

    /// The entity ID of the `index`th entry a seeded writer stores.
    package static func entityID(_ index: UInt64) -> UUID {
        var generator = SplitMix64(seed: index &+ 0x5EED)
        let a = generator.next(), b = generator.next()
        return withUnsafeBytes(of: (a, b)) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}
