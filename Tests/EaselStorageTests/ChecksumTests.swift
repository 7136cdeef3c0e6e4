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

    /// XXH3-64 (the checksum of inline values): xxHash's own values, and its AVX2 and baseline
    /// forms agreeing on every length class (0–16, 17–128, 129–240, long inputs with partial
    /// stripes and blocks) at every alignment.
    @Test func xxh3MatchesXXHashAndItsFormsAgree() {
        #expect(Checksum.xxh3(Data()) == 0x2D06_8005_38D3_94C2)
        #expect(Checksum.xxh3(Data("a".utf8)) == 0xE6C6_32B6_1E96_4E1F)
        #expect(Checksum.xxh3(Data("abc".utf8)) == 0x78AF_5F94_892F_3950)
        // Long inputs, from the system's libxxhash (0.8.1) on the same SplitMix64 bytes.
        #expect(Checksum.xxh3(randomData(200, seed: 42)) == 0xC004_8CA2_9BF7_940C)
        #expect(Checksum.xxh3(randomData(1_000, seed: 42)) == 0xC798_EBA6_A0B3_DC05)
        #expect(Checksum.xxh3(randomData(102_400, seed: 42)) == 0xA3F0_0212_E7D5_CD8E)
        #expect(Checksum.compute(randomData(102_400, seed: 42)) == 0x0220_E94B_AED6_755D)
        // On a processor without AVX2 both forms below are the baseline one: the comparison
        // then shows nothing, and the values above are what is checked.
        let bytes = [UInt8](randomData(110_000, seed: 9))
        let lengths = Array(0...300) + [1_023, 1_024, 1_025, 4_095, 4_096, 4_097, 102_400, 102_401, 109_990]
        bytes.withUnsafeBytes { all in
            for length in lengths {
                for offset in 0..<4 {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<offset + length])
                    let plain = Checksum.xxh3(slice, avx2: false)
                    #expect(Checksum.xxh3(slice, avx2: true) == plain, "length \(length), offset \(offset)")
                    #expect(Checksum.xxh3(slice) == plain)
                }
            }
        }
        // Different inputs, different sums (one flipped bit anywhere in a 100 KB value).
        var value = Data(bytes.prefix(102_400))
        let sum = Checksum.xxh3(value)
        for index in stride(from: 0, to: value.count, by: 9_973) {
            value[index] ^= 0x10
            #expect(Checksum.xxh3(value) != sum)
            value[index] ^= 0x10
        }
    }
}
