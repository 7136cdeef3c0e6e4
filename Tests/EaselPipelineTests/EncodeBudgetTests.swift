import EaselCodecs
@testable import EaselPipeline
import EaselSupport
import EaselTestSupport
import Foundation
import Synchronization
import Testing

/// Autoquality, best format and `max_bytes` share one work budget, and stop when nobody waits.
@Suite("Encode budget", .timeLimit(.minutes(2)))
struct EncodeBudgetTests {
    /// A noisy 160×120 image: hard to compress, so every search runs long.
    static let noise: Bitmap = {
        var bitmap = Bitmap(width: 160, height: 120, pixelFormat: .rgba8)
        var state: UInt32 = 12345
        bitmap.withUnsafeMutableBytes { bytes in
            for index in stride(from: 0, to: bytes.count, by: 4) {
                state = state &* 1_103_515_245 &+ 12345
                bytes[index] = UInt8(truncatingIfNeeded: state >> 16)
                bytes[index + 1] = UInt8(truncatingIfNeeded: state >> 8)
                bytes[index + 2] = UInt8(truncatingIfNeeded: state >> 24)
                bytes[index + 3] = 255
            }
        }
        bitmap.markOpaque()
        return bitmap
    }()

    @Test func bestFormatWithAutoqualityAndMaxBytesStaysWithinTheBudget() throws {
        // The attack of the audit: aq, a bound no quality meets, and three formats (31 encodes before).
        let encoding = ImageEncoding(.jpeg, maxBytes: 200, autoQuality: AutoQuality(target: 0.0001), bestOf: [.jpeg, .webp, .avif])
        let (data, _, encodes) = try StillEncoder(encoding: encoding, rights: nil).encode(Self.noise)
        #expect(!data.isEmpty)
        #expect(encodes <= StillEncoder.encodeBudget, "\(encodes) encodes")
    }

    @Test func aCancelledSearchStopsBeforeItsNextEncode() {
        let flag = CancellationFlag()
        flag.raise()
        let encoding = ImageEncoding(.jpeg, autoQuality: AutoQuality(target: 0.0001), bestOf: [.jpeg, .webp])
        #expect(throws: CodecError.cancelled) {
            try WorkCancellation.run(with: flag) { try StillEncoder(encoding: encoding, rights: nil).encode(Self.noise) }
        }
    }

    @Test func aSearchCancelledMidwayStopsWithinOneEncode() {
        // Cancelled while its first encode runs (as a deadline or the last requester leaving
        // would): the search ends before a second (of the several it would make).
        let flag = CancellationFlag()
        let seen = Mutex(0)
        var encoder = StillEncoder(encoding: ImageEncoding(.jpeg, autoQuality: AutoQuality(target: 0.0001), bestOf: [.jpeg, .webp]), rights: nil)
        encoder.afterEncode = { count in
            seen.withLock { $0 = count }
            if count == 1 { flag.raise() }
        }
        #expect(throws: CodecError.cancelled) {
            try WorkCancellation.run(with: flag) { try encoder.encode(Self.noise) }
        }
        #expect(seen.withLock { $0 } == 1, "encodes made: \(seen.withLock { $0 })")
    }
}
