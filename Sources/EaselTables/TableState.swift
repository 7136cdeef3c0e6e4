#if canImport(Glibc)
import EaselSupport
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
import EaselCodecs
import EaselStorage
import Foundation

/// The in-memory picture of a table: which slot holds which entity, pins, and the LRU list.
struct TableState {
    enum Status: UInt8 {
        /// No entry; in `free`.
        case free
        /// Reserved by a `setImage` that is copying pixels into it.
        case writing
        /// Holds an entry, in `index` and the LRU list.
        case valid
        /// Removed or replaced while pinned; freed when the last reader lets go.
        case retired
    }

    struct Slot {
        var entity = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var source = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        var checksum: UInt64 = 0
        var sequence: UInt64 = 0
        var width: UInt16 = 0
        var height: UInt16 = 0
        var opaque = false
        var status = Status.free
        /// Checksum checked since the table was opened (always true for entries written since).
        var verified = false
        var pins: Int32 = 0
        var previous: Int32 = -1
        var next: Int32 = -1
    }

    var slots: [Slot] = []
    var index: [UUID: Int32] = [:]
    /// Free slots; the lowest number is taken first.
    var free: [Int32] = []
    /// Most recently used.
    var head: Int32 = -1
    /// Least recently used.
    var tail: Int32 = -1
    /// The next access sequence number.
    var clock: UInt64 = 1
    /// After the file failed to grow, writes replace old entries until then.
    var growthRetry = ContinuousClock.now
    /// `close()` was called: no new writes or reads.
    var closed = false
    /// Writes that reserved a slot and have not published it yet (`close()` waits for them).
    var writers = 0

    /// Reads every record of slots `0..<slotCount`: valid ones become entries (the higher
    /// sequence wins when a crash left two for one entity), the rest free slots.
    static func load(base: UnsafeMutableRawPointer, geometry: TableGeometry, slotCount: Int) -> TableState {
        var state = TableState()
        state.slots = Array(repeating: Slot(), count: slotCount)
        state.index.reserveCapacity(slotCount)
        var live: [(sequence: UInt64, slot: Int32)] = []
        for slotNumber in 0..<slotCount {
            let record = UnsafeRawPointer(base + geometry.recordOffset(slot: slotNumber))
            guard let slot = Record.read(record, geometry: geometry) else { continue }
            if let other = state.index[slot.entity] {
                let loser = state.slots[Int(other)].sequence > slot.sequence ? Int32(slotNumber) : other
                memset(base + geometry.recordOffset(slot: Int(loser)), 0, TableGeometry.recordBytes)
                if loser == Int32(slotNumber) { continue }
                state.slots[Int(other)].status = .free
            }
            state.slots[slotNumber] = slot
            state.index[slot.entity] = Int32(slotNumber)
            live.append((slot.sequence, Int32(slotNumber)))
        }
        live.sort { $0.sequence < $1.sequence }
        for (sequence, slot) in live where state.slots[Int(slot)].status == .valid {
            state.pushFront(slot)
            state.clock = max(state.clock, sequence &+ 1)
        }
        for slotNumber in (0..<slotCount).reversed() where state.slots[slotNumber].status == .free {
            state.free.append(Int32(slotNumber))
        }
        return state
    }

    /// Makes `slot` the most recently used and records the access in its record.
    mutating func touch(_ slot: Int32, base: UnsafeMutableRawPointer, geometry: TableGeometry, write: Bool = false) {
        if head != slot {
            unlink(slot)
            pushFront(slot)
        }
        let sequence = clock
        clock &+= 1
        slots[Int(slot)].sequence = sequence
        let record = base + geometry.recordOffset(slot: Int(slot))
        record.storeBytes(of: sequence.littleEndian, toByteOffset: 40, as: UInt64.self)
        record.storeBytes(of: UInt32(truncatingIfNeeded: time(nil)).littleEndian, toByteOffset: 48, as: UInt32.self)
        // A new entry's record becomes valid last, after its pixels and sequence.
        if write { Record.write(slots[Int(slot)], to: record) }
    }

    /// Takes a valid entry out of the index and LRU list and zeroes its record; the slot is
    /// free, or retired while pinned.
    mutating func detach(_ slot: Int32, base: UnsafeMutableRawPointer, geometry: TableGeometry) {
        let index = Int(slot)
        self.index.removeValue(forKey: slots[index].entity)
        unlink(slot)
        memset(base + geometry.recordOffset(slot: index), 0, TableGeometry.recordBytes)
        if slots[index].pins > 0 {
            slots[index].status = .retired
        } else {
            slots[index].status = .free
            free.append(slot)
        }
    }

    mutating func pushFront(_ slot: Int32) {
        slots[Int(slot)].previous = -1
        slots[Int(slot)].next = head
        if head >= 0 { slots[Int(head)].previous = slot } else { tail = slot }
        head = slot
    }

    mutating func unlink(_ slot: Int32) {
        let previous = slots[Int(slot)].previous, next = slots[Int(slot)].next
        if previous >= 0 { slots[Int(previous)].next = next } else if head == slot { head = next }
        if next >= 0 { slots[Int(next)].previous = previous } else if tail == slot { tail = previous }
        slots[Int(slot)].previous = -1
        slots[Int(slot)].next = -1
    }
}

/// Reading and writing one 64-byte record.
enum Record {
    static func read(_ record: UnsafeRawPointer, geometry: TableGeometry) -> TableState.Slot? {
        let flags = UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 56, as: UInt16.self))
        guard flags & 1 != 0,
              UInt32(littleEndian: record.load(fromByteOffset: 60, as: UInt32.self)) == check(record) else { return nil }
        let width = UInt16(littleEndian: record.load(fromByteOffset: 52, as: UInt16.self))
        let height = UInt16(littleEndian: record.load(fromByteOffset: 54, as: UInt16.self))
        guard width > 0, height > 0, Int(width) <= geometry.width, Int(height) <= geometry.height else { return nil }
        return TableState.Slot(
            entity: UUID(uuid: record.loadUnaligned(fromByteOffset: 0, as: uuid_t.self)),
            source: UUID(uuid: record.loadUnaligned(fromByteOffset: 16, as: uuid_t.self)),
            checksum: UInt64(littleEndian: record.load(fromByteOffset: 32, as: UInt64.self)),
            sequence: UInt64(littleEndian: record.load(fromByteOffset: 40, as: UInt64.self)),
            width: width, height: height, opaque: flags & 2 != 0, status: .valid, verified: false)
    }

    /// Everything but the access fields; the check goes last.
    static func write(_ slot: TableState.Slot, to record: UnsafeMutableRawPointer) {
        record.storeBytes(of: slot.entity.uuid, toByteOffset: 0, as: uuid_t.self)
        record.storeBytes(of: slot.source.uuid, toByteOffset: 16, as: uuid_t.self)
        record.storeBytes(of: slot.checksum.littleEndian, toByteOffset: 32, as: UInt64.self)
        record.storeBytes(of: slot.width.littleEndian, toByteOffset: 52, as: UInt16.self)
        record.storeBytes(of: slot.height.littleEndian, toByteOffset: 54, as: UInt16.self)
        record.storeBytes(of: UInt16(slot.opaque ? 3 : 1).littleEndian, toByteOffset: 56, as: UInt16.self)
        record.storeBytes(of: UInt16(0), toByteOffset: 58, as: UInt16.self)
        record.storeBytes(of: check(UnsafeRawPointer(record)).littleEndian, toByteOffset: 60, as: UInt32.self)
    }

    static func check(_ record: UnsafeRawPointer) -> UInt32 {
        let seed = UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 52, as: UInt64.self))
        return UInt32(truncatingIfNeeded: Checksum.compute(UnsafeRawBufferPointer(start: record, count: 40), seed: seed))
    }
}
