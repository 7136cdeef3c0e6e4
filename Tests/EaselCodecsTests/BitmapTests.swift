import EaselCodecs
import Testing

@Suite("Bitmap")
struct BitmapTests {
    @Test(arguments: [1, 15, 16, 17, 100, 1_000])
    func rowsAreAlignedTo64Bytes(width: Int) {
        for format in [Bitmap.PixelFormat.rgba8, .gray8] {
            let bitmap = Bitmap(width: width, height: 3, pixelFormat: format)
            #expect(bitmap.rowBytes % 64 == 0)
            #expect(bitmap.rowBytes >= width * format.bytesPerPixel)
            #expect(bitmap.rowBytes < width * format.bytesPerPixel + 64)
            bitmap.withUnsafeBytes { #expect(Int(bitPattern: $0.baseAddress) % 64 == 0) }
        }
    }

    @Test func copiesShareUntilWritten() {
        var original = Bitmap(width: 4, height: 4, pixelFormat: .rgba8)
        original.withUnsafeMutableBytes { $0[0] = 7 }
        var copy = original
        let sharedBefore = original.withUnsafeBytes { a in copy.withUnsafeBytes { b in a.baseAddress == b.baseAddress } }
        #expect(sharedBefore) // reading or copying never copies pixels
        copy.withUnsafeMutableBytes { $0[0] = 9 }
        #expect(original.pixel(x: 0, y: 0)[0] == 7)
        #expect(copy.pixel(x: 0, y: 0)[0] == 9)
        #expect(!original.hasSamePixels(as: copy))
    }
}
