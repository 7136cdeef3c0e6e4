import EaselSupport
import Foundation
import Testing

@Suite("Binary records") struct BinaryRecordTests {
    @Test func fieldsAreLittleEndianAndReadsStopAtTheEnd() {
        var writer = RecordWriter()
        writer.append(text: "EVR1")
        writer.append(UInt16(0x0102))
        writer.append(UInt32(0x0304_0506))
        writer.append(1.5)
        let id = UUID()
        writer.append(id)
        writer.pad(to: 40)
        #expect(writer.count == 40)
        #expect(Array(writer.bytes[4..<6]) == [0x02, 0x01], "little-endian on every machine")
        writer.bytes.withUnsafeBytes { raw in
            var reader = RecordReader(raw)
            #expect(reader.expect(text: "EVR1"))
            #expect(reader.read(UInt16.self) == 0x0102 && reader.read(UInt32.self) == 0x0304_0506)
            #expect(reader.readDouble() == 1.5 && reader.readUUID() == id)
            #expect(reader.remainingCount == 6)
            #expect(reader.read(UInt64.self) == nil, "a read past the end is nil, not a crash")
            #expect(reader.skip(6) && reader.read(UInt8.self) == nil && reader.read(count: 1) == nil)
        }
        var raw = [UInt8](repeating: 0, count: 16)
        raw.withUnsafeMutableBytes { buffer in
            buffer.baseAddress!.storeLittleEndian(UInt32(7), at: 3)
            #expect(UnsafeRawPointer(buffer.baseAddress!).loadLittleEndian(UInt32.self, at: 3) == 7)
        }
        #expect(raw[3] == 7)
    }
}
