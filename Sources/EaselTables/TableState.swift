import EaselSupport
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
                (base + geometry.recordOffset(slot: Int(loser))).initializeMemory(as: UInt8.self, repeating: 0, count: TableGeometry.recordBytes)
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
        record.storeLittleEndian(sequence, at: 40)
        record.storeLittleEndian(UInt32(truncatingIfNeeded: Int(checked: WallClock.now())), at: 48)
        // A new entry's record becomes valid last, after its pixels and sequence.
        if write { Record.write(slots[Int(slot)], to: record) }
    }

    /// Takes a valid entry out of the index and LRU list and zeroes its record; the slot is
    /// free, or retired while pinned.
    mutating func detach(_ slot: Int32, base: UnsafeMutableRawPointer, geometry: TableGeometry) {
        let index = Int(slot)
        self.index.removeValue(forKey: slots[index].entity)
        unlink(slot)
        (base + geometry.recordOffset(slot: index)).initializeMemory(as: UInt8.self, repeating: 0, count: TableGeometry.recordBytes)
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
        let flags = record.loadLittleEndian(UInt16.self, at: 56)
        guard flags & 1 != 0, record.loadLittleEndian(UInt32.self, at: 60) == check(record) else { return nil }
        let width = record.loadLittleEndian(UInt16.self, at: 52)
        let height = record.loadLittleEndian(UInt16.self, at: 54)
        guard width > 0, height > 0, Int(width) <= geometry.width, Int(height) <= geometry.height else { return nil }
        return TableState.Slot(
            entity: record.loadUUID(at: 0), source: record.loadUUID(at: 16),
            checksum: record.loadLittleEndian(UInt64.self, at: 32), sequence: record.loadLittleEndian(UInt64.self, at: 40),
            width: width, height: height, opaque: flags & 2 != 0, status: .valid, verified: false)
    }

    /// Everything but the access fields; the check goes last.
    static func write(_ slot: TableState.Slot, to record: UnsafeMutableRawPointer) {
        record.storeUUID(slot.entity, at: 0)
        record.storeUUID(slot.source, at: 16)
        record.storeLittleEndian(slot.checksum, at: 32)
        record.storeLittleEndian(slot.width, at: 52)
        record.storeLittleEndian(slot.height, at: 54)
        record.storeLittleEndian(UInt16(slot.opaque ? 3 : 1), at: 56)
        record.storeLittleEndian(UInt16(0), at: 58)
        record.storeLittleEndian(check(UnsafeRawPointer(record)), at: 60)
    }

    static func check(_ record: UnsafeRawPointer) -> UInt32 {
        let seed = record.loadLittleEndian(UInt64.self, at: 52)
        return UInt32(truncatingIfNeeded: Checksum.compute(UnsafeRawBufferPointer(start: record, count: 40), seed: seed))
    }
}
