import EaselSupport
import EaselStorage
import Foundation
import Testing

@Suite("Checksum")
struct ChecksumTests {
    /// Published XXH64 test vectors.
    @Test(arguments: [
        ("", UInt64(0), UInt64(0xEF46_DB37_51D8_E999)),
        ("a", 0, 0xD24E_C4F1_A98C_6E5B),
        ("abc", 0, 0x44BC_2CF5_AD77_0999),
        ("Nobody inspects the spammish repetition", 0, 0xFBCE_A83C_8A37_8BF1),
    ])
    func matchesXXH64(text: String, seed: UInt64, expected: UInt64) {
        #expect(Checksum.compute(Array(text.utf8), seed: seed) == expected)
    }

    @Test func everyLengthAndAlignmentIsCovered() {
        let bytes = Array(randomData(300))
        var seen = Set<UInt64>()
        for length in 0...bytes.count { seen.insert(Checksum.compute(Array(bytes[0..<length]))) }
        #expect(seen.count == bytes.count + 1)
        // The same bytes at another alignment give the same checksum.
        #expect(Checksum.compute(Array(bytes[1..<101])) == Checksum.compute(Array(Array(bytes[1..<101]))))
    }
}
