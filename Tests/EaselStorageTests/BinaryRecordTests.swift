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
            let magic = reader.expect(text: "EVR1")
            let (small, medium) = (reader.read(UInt16.self), reader.read(UInt32.self))
            let (double, uuid) = (reader.readDouble(), reader.readUUID())
            #expect(magic && small == 0x0102 && medium == 0x0304_0506)
            #expect(double == 1.5 && uuid == id)
            #expect(reader.remainingCount == 6)
            let tooFar = reader.read(UInt64.self)
            #expect(tooFar == nil, "a read past the end is nil, not a crash")
            let skipped = reader.skip(6)
            let (byte, bytes) = (reader.read(UInt8.self), reader.read(count: 1))
            #expect(skipped && byte == nil && bytes == nil)
        }
        var raw = [UInt8](repeating: 0, count: 16)
        raw.withUnsafeMutableBytes { buffer in
            buffer.baseAddress!.storeLittleEndian(UInt32(7), at: 3)
            #expect(UnsafeRawPointer(buffer.baseAddress!).loadLittleEndian(UInt32.self, at: 3) == 7)
        }
        #expect(raw[3] == 7)
    }
}
