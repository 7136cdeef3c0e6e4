// The image table file: one per format, named `<format name>.imagetable` (or
// `format-<hash>.imagetable` when the name is not a plain file name).
//
// Layout (all integers little-endian; offsets in bytes):
//
//   header        4096 bytes at 0
//     0   8  magic "EASELTBL"
//     8   4  layout version (1)
//     12  4  header size (4096)
//     16  4  format width          20  4  format height
//     24  4  pixel format (1 = RGBA8, 2 = Gray8)
//     28  4  entries per chunk (K)
//     32  8  entry stride (bytes of one entry's pixels, a multiple of 64)
//     40  8  metadata block size   48  8  chunk size
//     56  8  XXH64 of the format's processing identifier
//     64  8  XXH64 of bytes 0..<64
//   chunk 0, chunk 1, ...  each `chunk size` bytes, starting at 4096:
//     metadata block   K records of 64 bytes, padded to a multiple of 4096
//     entries          K × entry stride bytes of pixels (rows of 64-byte multiples), padded to 4096
//
//   record (64 bytes, slot s = chunk s / K, index s % K):
//     0  16 entity UUID            16 16 source image UUID
//     32  8 XXH64 of the entry's pixels (rowBytes(width) × height bytes)
//     40  8 access sequence (written in place on every read: the LRU order across reopenings)
//     48  4 last access, seconds since 1970 (written in place on every read)
//     52  2 width    54  2 height  (≤ the format's size)
//     56  2 flags (1 = valid, 2 = opaque)   58  2 zero
//     60  4 low 32 bits of XXH64(bytes 0..<40, seed: bytes 52..<60): torn records read as empty
//
// The file grows a chunk at a time with posix_fallocate, so every byte that is ever mapped and
// touched has disk blocks behind it: a full disk is an error from `setImage`, never a SIGBUS.
// The whole capacity (maximumCount slots) is mapped once at open, beyond the end of the file;
// only slots inside the file are ever touched, and a mapping that never moves keeps borrowed
// pixels valid while the file grows.
//
// Writing an entry: zero its record, copy the pixels, then write the record with the pixels'
// checksum. A process killed at any point leaves the slot empty (zeroed or torn record) or an
// entry whose checksum is verified the first time it is read after the table is reopened; a
// mismatch reads as missing. Replacing an entity's entry writes a new slot and zeroes the old
// record after the new one is complete (if both survive a crash, the higher sequence wins).
import EaselSupport
import EaselCodecs
import EaselStorage
import Foundation
import Logging

/// How an image table grows its file: the seam tests use to make the disk full.
package protocol TableFileOperations: Sendable {
    /// Gives `descriptor` disk blocks for `length` bytes at `offset` (growing the file); returns
    /// 0 or an `errno` value.
    func allocate(descriptor: Int32, offset: Int, length: Int) -> Int32
}

package struct SystemTableFileOperations: TableFileOperations {
    package init() {}
    package func allocate(descriptor: Int32, offset: Int, length: Int) -> Int32 {
        do throws(Errno) { try SystemCalls.allocate(descriptor, offset: offset, length: length) } catch { return error.code }
        return 0
    }
}

/// One format's memory-mapped store of pre-decoded entries (FastImageCache's image table).
///
/// ```swift
/// let table = try ImageTable(format: thumb, directory: cacheDirectory)
/// try table.setImage(thumbnail, for: photo.id, sourceID: photo.sourceID)
/// if let pixels = table.image(for: photo.id) { draw(pixels) }   // no decode, no copy
/// ```
///
/// - Reads return a `Bitmap` that borrows the mapped entry. While any copy of it is alive the
///   entry is pinned: it is never overwritten, even when it is evicted, deleted or replaced (a
///   replacement is written to another slot).
/// - At most `format.maximumCount` entries; beyond that the least recently read or written
///   unpinned entry is replaced.
/// - One process at a time: the table holds an exclusive `flock` on its file while open, and a
///   second `ImageTable` on the same file, in this or another process, is refused with
///   `ImageTableError.inUseByAnotherProcess`. Sharing would mean cross-process pins and LRU state
///   in shared memory, and a crashed process's pins could never be released safely.
/// - Safe to use from any number of threads and tasks at once. Calls do not block on I/O except
///   `setImage` growing the file (one `posix_fallocate` per chunk of about 4 MiB) and the first
///   read of an entry after opening, which reads its pixels to verify the checksum.
public final class ImageTable: BitmapMemoryOwner, @unchecked Sendable {
    // `@unchecked Sendable`: the mutable state is `state` and `allocatedBytes`, each reached only
    // inside its `Locked`; `base`, `mappedBytes` and `descriptor` never change after `init`, and
    // `descriptor` is used (and closed by `close()`) only inside `allocatedBytes`' lock, whose
    // value is -1 once it is closed.
    // The mapped bytes of a slot are written only by the one `setImage` that reserved it (status
    // `.writing`, invisible to readers) or, for records, inside `state`'s lock; readers reach a
    // slot only after that lock published it, and pin it so that it cannot be reserved again
    // until they let go.

    /// The format whose entries the table holds.
    public let format: ImageFormat
    /// The table's file.
    public let url: URL

    private let geometry: TableGeometry
    private let descriptor: Int32
    private let base: UnsafeMutableRawPointer
    private let mappedBytes: Int
    private let capacity: Int
    private let state: Locked<TableState>
    /// File bytes backed by disk blocks, -1 once closed; the lock also serialises growth and
    /// every use of `descriptor`.
    private let allocatedBytes: Locked<Int>
    private let fileOperations: any TableFileOperations
    private let logger: Logger

    /// Opens (creating if needed) the table for `format` in `directory`. Entries written by a
    /// format with other processing (`format.processingIdentifier`) or another size are dropped.
    public convenience init(format: ImageFormat, directory: URL) throws(ImageTableError) {
        try self.init(format: format, directory: directory, fileOperations: SystemTableFileOperations())
    }

    package init(format: ImageFormat, directory: URL, fileOperations: any TableFileOperations,
                 logger: Logger = Logger(label: "easel.tables")) throws(ImageTableError) {
        self.format = format
        self.fileOperations = fileOperations
        self.logger = logger
        geometry = TableGeometry(format: format)
        capacity = format.maximumCount
        url = directory.appendingPathComponent(Self.fileName(for: format.name))
        let path = url.path
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            let code = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code ?? Int(Errno.io.code)
            throw .posix(Int32(code), operation: "create directory", path: directory.path)
        }
        let fd: Int32
        do throws(Errno) { fd = try SystemCalls.open(path, .readWrite(create: true)) } catch { throw .posix(error.code, operation: "open", path: path) }
        var opened = false
        defer { if !opened { SystemCalls.close(fd) } }
        do {
            guard try SystemCalls.lock(fd, exclusive: true, wait: false) else { throw ImageTableError.inUseByAnotherProcess(path: path) }
        } catch let error as Errno {
            throw .posix(error.code, operation: "flock", path: path)
        } catch {
            throw .inUseByAnotherProcess(path: path)
        }
        var size = try Self.fileSize(fd, path: path)
        if size == 0 || !geometry.matchesHeader(of: fd) {
            if size > 0 { logger.notice("image table \(path) has another layout or processing; starting it empty") }
            do throws(Errno) { try SystemCalls.truncate(fd, to: 0) } catch { throw .posix(error.code, operation: "truncate", path: path) }
            let code = fileOperations.allocate(descriptor: fd, offset: 0, length: TableGeometry.headerBytes)
            guard code == 0 else { throw .posix(code, operation: "allocate", path: path) }
            try geometry.writeHeader(to: fd, path: path)
            size = TableGeometry.headerBytes
        }
        let capacityBytes = geometry.fileBytes(forSlots: capacity)
        var droppedSlots = 0..<0
        if size > capacityBytes {
            // maximumCount went down: the slots past it go, and so must their records that stay
            // in the file (in the metadata blocks of the chunks that remain).
            droppedSlots = capacity..<geometry.slots(inFileOf: size)
            do throws(Errno) { try SystemCalls.truncate(fd, to: capacityBytes) } catch { throw .posix(error.code, operation: "truncate", path: path) }
            size = capacityBytes
        }
        let pageSize = SystemCalls.pageSize
        mappedBytes = (capacityBytes + pageSize - 1) / pageSize * pageSize
        let mapping: UnsafeMutableRawPointer
        do throws(Errno) { mapping = try SystemCalls.mapShared(fd, length: mappedBytes) } catch { throw .posix(error.code, operation: "mmap", path: path) }
        for slot in droppedSlots where geometry.recordOffset(slot: slot) + TableGeometry.recordBytes <= size {
            (mapping + geometry.recordOffset(slot: slot)).initializeMemory(as: UInt8.self, repeating: 0, count: TableGeometry.recordBytes)
        }
        base = mapping
        descriptor = fd
        allocatedBytes = Locked(size)
        state = Locked(TableState.load(base: mapping, geometry: geometry, slotCount: min(capacity, geometry.slots(inFileOf: size))))
        opened = true
    }

    deinit {
        SystemCalls.unmap(base, length: mappedBytes)
        allocatedBytes.withLock { allocated in
            if allocated >= 0 { SystemCalls.close(descriptor) }
        }
    }

    /// Releases the table's file and its lock before returning, so that the table can be opened
    /// again at once, by this process or another. Waits for writes in progress; later writes
    /// throw `.closed` and later reads find nothing. Bitmaps already handed out stay valid: the
    /// mapping lives until the last of them and the table are gone. Calling it again does nothing.
    /// Blocking (it may wait for a write of one entry).
    public func close() {
        state.withLock { $0.closed = true }
        while state.withLock({ $0.writers }) > 0 { SystemCalls.yieldThread() }
        allocatedBytes.withLock { allocated in
            guard allocated >= 0 else { return }
            try? SystemCalls.flushMapping(base, length: mappedBytes, wait: false)
            SystemCalls.unlock(descriptor)
            SystemCalls.close(descriptor)
            allocated = -1
        }
    }

    /// True once `close()` was called.
    public var isClosed: Bool { state.withLock { $0.closed } }

    static func fileName(for formatName: String) -> String {
        let allowed = formatName.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        if allowed, formatName.utf8.count <= 100, formatName.first != "." {
            return formatName + ".imagetable"
        }
        let hash = Checksum.compute(Data(formatName.utf8))
        return "format-" + String(hash, radix: 16) + ".imagetable"
    }

    private static func fileSize(_ fd: Int32, path: String) throws(ImageTableError) -> Int {
        do throws(Errno) { return try SystemCalls.size(of: fd) } catch { throw .posix(error.code, operation: "stat", path: path) }
    }

    // MARK: Reading

    /// The entry of `entityID`, borrowing the mapped pixels (no copy, no decode), or nil when
    /// there is none, or when `sourceID` is given and the entry was made from another source.
    /// The entry stays pinned, and its pixels unchanged, until every copy of the bitmap is gone.
    public func image(for entityID: UUID, sourceID: UUID? = nil) -> Bitmap? {
        let found: (slot: Int32, info: TableState.Slot)? = state.withLock { state in
            guard !state.closed, let slot = state.index[entityID] else { return nil }
            let index = Int(slot)
            if let sourceID, state.slots[index].source != sourceID { return nil }
            state.slots[index].pins += 1
            if state.slots[index].verified { state.touch(slot, base: base, geometry: geometry) }
            return (slot, state.slots[index])
        }
        guard let found else { return nil }
        if !found.info.verified, !verify(found.slot, info: found.info) {
            bitmapDidRelease(token: Int(found.slot))
            return nil
        }
        // Size and flags of a pinned slot cannot change: reading them from the copy is exact.
        return Bitmap(unsafeBorrowing: base + geometry.pixelOffset(slot: Int(found.slot)), width: Int(found.info.width),
                      height: Int(found.info.height), pixelFormat: format.pixelFormat, isKnownOpaque: found.info.opaque,
                      owner: self, token: Int(found.slot))
    }

    /// True when the entry exists and its first read since opening is still to come: that read
    /// verifies the checksum, touching all its pixels (disk reads if they are not cached).
    public func needsVerification(_ entityID: UUID) -> Bool {
        state.withLock { state in
            guard let slot = state.index[entityID] else { return false }
            return !state.slots[Int(slot)].verified
        }
    }

    /// True when `entityID` has an entry (from `sourceID`, if given). Does not count as a read.
    public func contains(_ entityID: UUID, sourceID: UUID? = nil) -> Bool {
        state.withLock { state in
            guard let slot = state.index[entityID] else { return false }
            return sourceID == nil || state.slots[Int(slot)].source == sourceID
        }
    }

    /// The number of entries.
    public var count: Int { state.withLock { $0.index.count } }

    /// Entity IDs from the most to the least recently used.
    public func entityIDs() -> [UUID] {
        state.withLock { state in
            var result: [UUID] = []
            result.reserveCapacity(state.index.count)
            var slot = state.head
            while slot >= 0 {
                result.append(state.slots[Int(slot)].entity)
                slot = state.slots[Int(slot)].next
            }
            return result
        }
    }

    /// Checks an entry read for the first time since the table was opened; a mismatch removes it.
    private func verify(_ slot: Int32, info: TableState.Slot) -> Bool {
        let byteCount = Bitmap.rowBytes(width: Int(info.width), pixelFormat: format.pixelFormat) * Int(info.height)
        let actual = Checksum.compute(UnsafeRawBufferPointer(start: base + geometry.pixelOffset(slot: Int(slot)), count: byteCount))
        let intact = actual == info.checksum
        state.withLock { state in
            if intact {
                state.slots[Int(slot)].verified = true
                if state.slots[Int(slot)].status == .valid { state.touch(slot, base: base, geometry: geometry) }
            } else if state.slots[Int(slot)].status == .valid {
                state.detach(slot, base: base, geometry: geometry)
            }
        }
        if !intact { logger.warning("image table \(url.path): damaged entry in slot \(slot) removed") }
        return intact
    }

    public func bitmapDidRelease(token: Int) {
        state.withLock { state in
            let index = token
            state.slots[index].pins -= 1
            if state.slots[index].pins == 0, state.slots[index].status == .retired {
                state.slots[index].status = .free
                state.free.append(Int32(index))
            }
        }
    }

    // MARK: Writing

    /// Stores `image` as the entry of `entityID`, replacing any previous one (a reader holding
    /// the previous entry keeps its pixels). `image` must fit the format's size; it is converted
    /// to the format's pixel format.
    /// - Throws: `.imageDoesNotFit`; `.diskFull` when the file cannot grow and no entry can be
    ///   replaced instead (entries already stored stay readable; with entries present, a full
    ///   disk makes the table replace its least recently used entry, as at `maximumCount`);
    ///   `.allEntriesInUse` when the table is full of pinned entries.
    public func setImage(_ image: Bitmap, for entityID: UUID, sourceID: UUID) throws(ImageTableError) {
        let image = try format.fitted(image)
        let slot = try reserveSlot()
        let record = base + geometry.recordOffset(slot: Int(slot))
        record.initializeMemory(as: UInt8.self, repeating: 0, count: TableGeometry.recordBytes)
        let pixels = base + geometry.pixelOffset(slot: Int(slot))
        let byteCount = image.rowBytes * image.height
        image.withUnsafeBytes { pixels.copyMemory(from: $0.baseAddress!, byteCount: byteCount) }
        let checksum = Checksum.compute(UnsafeRawBufferPointer(start: pixels, count: byteCount))
        let width = UInt16(image.width), height = UInt16(image.height), opaque = image.isKnownOpaque
        state.withLock { state in
            let previous = state.index[entityID]
            state.slots[Int(slot)] = TableState.Slot(entity: entityID, source: sourceID, checksum: checksum,
                                                     width: width, height: height, opaque: opaque, status: .valid,
                                                     verified: true)
            state.pushFront(slot)
            // The new record is complete before the old one is zeroed: a crash in between leaves
            // both, and the higher sequence wins at the next open.
            state.touch(slot, base: base, geometry: geometry, write: true)
            if let previous { state.detach(previous, base: base, geometry: geometry) }
            state.index[entityID] = slot
            state.writers -= 1
        }
    }

    /// Removes the entry of `entityID`, if any. A reader holding it keeps its pixels.
    public func removeImage(for entityID: UUID) {
        state.withLock { state in
            if let slot = state.index[entityID] { state.detach(slot, base: base, geometry: geometry) }
        }
    }

    /// Removes every entry. The file keeps its size, and its space is reused by later entries.
    public func reset() {
        state.withLock { state in
            while state.head >= 0 { state.detach(state.head, base: base, geometry: geometry) }
        }
    }

    /// Writes the mapped pages to disk and waits (entries survive a power loss after this).
    public func flush() throws(ImageTableError) {
        let failure: ImageTableError? = allocatedBytes.withLock { allocated in
            guard allocated >= 0 else { return .closed(path: url.path) }
            do throws(Errno) {
                try SystemCalls.flushMapping(base, length: mappedBytes, wait: true)
            } catch where error != .noMemory {
                return .posix(error.code, operation: "msync", path: url.path)
            } catch {}
            do throws(Errno) { try SystemCalls.sync(descriptor) } catch { return .posix(error.code, operation: "fsync", path: url.path) }
            return nil
        }
        if let failure { throw failure }
    }

    /// A free slot, a new one (growing the file), or the least recently used unpinned entry's.
    private func reserveSlot() throws(ImageTableError) -> Int32 {
        var growthFailure: ImageTableError?
        while true {
            let decision: Reservation = state.withLock { state in
                if state.closed { return .closed }
                if let slot = state.free.popLast() {
                    state.slots[Int(slot)].status = .writing
                    state.writers += 1
                    return .slot(slot)
                }
                // Below the maximum the file grows. When it cannot (disk full) an old entry makes
                // room instead, and for a minute writes do not try to grow again unless every
                // entry is pinned.
                let below = state.slots.count < capacity
                if below, state.tail < 0 {
                    return growthFailure == nil ? .grow(from: state.slots.count) : .failed
                }
                if below, growthFailure == nil, ContinuousClock.now >= state.growthRetry {
                    return .grow(from: state.slots.count)
                }
                var candidate = state.tail
                while candidate >= 0, state.slots[Int(candidate)].pins > 0 { candidate = state.slots[Int(candidate)].previous }
                guard candidate >= 0 else {
                    return below && growthFailure == nil ? .grow(from: state.slots.count) : .full
                }
                state.detach(candidate, base: base, geometry: geometry)
                // An unpinned detached slot goes to the free list: take it back from there.
                _ = state.free.popLast()
                state.slots[Int(candidate)].status = .writing
                state.writers += 1
                return .slot(candidate)
            }
            switch decision {
            case .slot(let slot): return slot
            case .closed: throw .closed(path: url.path)
            case .full: throw growthFailure ?? .allEntriesInUse(format: format.name)
            case .failed: throw growthFailure ?? .allEntriesInUse(format: format.name)
            case .grow(let slots):
                do { try grow(from: slots) } catch {
                    // Until a minute has passed, writes replace old entries without trying again.
                    let hasEntries = state.withLock { state in
                        state.growthRetry = ContinuousClock.now + .seconds(60)
                        return state.tail >= 0
                    }
                    if hasEntries { logger.warning("image table \(url.path) cannot grow (\(error)); replacing old entries instead") }
                    growthFailure = error
                }
            }
        }
    }

    private enum Reservation { case slot(Int32), grow(from: Int), full, failed, closed }

    /// Allocates the next chunk, unless another writer already did.
    private func grow(from slots: Int) throws(ImageTableError) {
        let failure: ImageTableError? = allocatedBytes.withLock { allocated in
            guard allocated >= 0 else { return .closed(path: url.path) }
            guard state.withLock({ $0.slots.count }) == slots else { return nil }
            let newSlots = min(capacity, (slots / geometry.entriesPerChunk + 1) * geometry.entriesPerChunk)
            let end = geometry.fileBytes(forSlots: newSlots)
            if end > allocated {
                let code = fileOperations.allocate(descriptor: descriptor, offset: allocated, length: end - allocated)
                guard code == 0 else { return .posix(code, operation: "allocate", path: url.path) }
                allocated = end
            }
            // Records of these slots may survive from a time the table was larger (maximumCount
            // went down and up again): they must not come back.
            for slot in slots..<newSlots {
                (base + geometry.recordOffset(slot: slot)).initializeMemory(as: UInt8.self, repeating: 0, count: TableGeometry.recordBytes)
            }
            state.withLock { state in
                for slot in (slots..<newSlots).reversed() { state.free.append(Int32(slot)) }
                state.slots.append(contentsOf: repeatElement(TableState.Slot(), count: newSlots - slots))
            }
            return nil
        }
        if let failure { throw failure }
    }
}
