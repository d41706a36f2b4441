import BlocklistCore
import BlocklistSystem
import CSQLite
import CallDirectoryHosting
internal import LibC

/// One extension request in progress: its transaction, the rules, the host's output.
struct Request {
    let store: CallDirectoryStore
    let identifier: String
    let incremental: Bool
    let options: ReloadOptions
    /// Entries the extension holds now, inside the transaction.
    private(set) var count: Int64
    private(set) var added: Int64 = 0
    private(set) var removed: Int64 = 0
    /// Additions, removals and removeAll calls so far.
    private(set) var calls: Int64 = 0
    private(set) var peakKiB = 0
    private var lastAdded: Int64?
    private var completed = false
    private var cancelReason: String?
    private var cancelled: Bool { cancelReason != nil }
    private var inTransaction = false
    private var extensionID: Int64 = 0
    private var insert: SQLiteStatement?
    private var insertBatch: SQLiteStatement?
    private var deleteOne: SQLiteStatement?
    /// Additions checked but not yet stored; written `batchSize` at a time by one statement.
    private var pending: [Int64] = []
    private static let batchSize = 512
    // Identification entries: their own order, count and capacity.
    private(set) var identificationCount: Int64
    private(set) var identificationAdded: Int64 = 0
    private(set) var identificationRemoved: Int64 = 0
    private var lastIdentified: Int64?
    private var label: String?
    private var insertIdentification: SQLiteStatement?
    private var deleteIdentification: SQLiteStatement?

    init(
        store: CallDirectoryStore,
        identifier: String,
        incremental: Bool,
        previousCount: Int64,
        previousIdentificationCount: Int64 = 0,
        options: ReloadOptions
    ) {
        self.store = store
        self.identifier = identifier
        self.incremental = incremental
        self.options = options
        count = incremental ? previousCount : 0
        identificationCount = incremental ? previousIdentificationCount : 0
    }

    private func unknown(_ error: BlocklistError) -> CallDirectoryError {
        CallDirectoryError(.unknown, "\(identifier): \(error.message)")
    }

    /// Opens the transaction; a non-incremental request starts from an empty list.
    mutating func begin() throws(CallDirectoryError) {
        do {
            let database = store.database
            let find = try database.prepare("SELECT id FROM extensions WHERE identifier = ?1")
            try find.bind(.text(identifier))
            guard try find.step() else {
                throw CallDirectoryError(.noExtensionFound, "No extension \(identifier) is registered.")
            }
            extensionID = find.integer(0)
            try database.execute("BEGIN IMMEDIATE")
            inTransaction = true
            if !incremental {
                try database.prepare("DELETE FROM blocking_entries WHERE extension_id = ?1").bind(.integer(extensionID))
                    .run()
                try database.prepare("DELETE FROM identification_entries WHERE extension_id = ?1").bind(
                    .integer(extensionID)
                ).run()
            }
            insertIdentification = try database.prepare(
                "INSERT INTO identification_entries (extension_id, number, label) VALUES (?1, ?2, ?3)"
            )
            deleteIdentification = try database.prepare(
                "DELETE FROM identification_entries WHERE extension_id = ?1 AND number = ?2"
            )
            insert = try database.prepare("INSERT INTO blocking_entries (extension_id, number) VALUES (?1, ?2)")
            try insert!.bind(.integer(extensionID), .integer(0))
            let rows = (0..<Self.batchSize).map { "(?1, ?\($0 + 2))" }.joined(separator: ", ")
            insertBatch = try database.prepare("INSERT INTO blocking_entries (extension_id, number) VALUES " + rows)
            try insertBatch!.bind(.integer(extensionID))
            pending.reserveCapacity(Self.batchSize)
            deleteOne = try database.prepare("DELETE FROM blocking_entries WHERE extension_id = ?1 AND number = ?2")
            try deleteOne!.bind(.integer(extensionID), .integer(0))
        } catch let error as CallDirectoryError {
            throw error
        } catch let error as BlocklistError {
            throw unknown(error)
        } catch {
            throw CallDirectoryError(.unknown, "\(identifier): \(error)")
        }
    }

    /// Reads and applies the host's records until it exits; watches its memory meanwhile.
    ///
    /// - Returns: the host's peak resident memory in KiB.
    mutating func run(_ child: ChildProcess, progress: (Int64) -> Void) throws(CallDirectoryError) -> Int {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        var filled = 0
        var lastProgress: Int64 = 0
        let clock = ContinuousClock()
        var lastCheck = clock.now
        do {
            while true {
                if child.waitForOutput(milliseconds: 10) {
                    let read = try child.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                    if read == 0 { break }
                    filled += read
                    let consumed = try apply(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
                    if consumed < filled {
                        UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(filled - consumed)]).copyMemory(
                            from: UnsafeRawBufferPointer(rebasing: buffer[consumed..<filled])
                        )
                    }
                    filled -= consumed
                    if completed || cancelled {
                        // The host waits for us now: its final figures are readable until we let go.
                        try checkMemory(child.peakResidentKiB() ?? 0, child)
                        child.release()
                    }
                    if calls - lastProgress >= 65_536 {
                        lastProgress = calls
                        progress(lastProgress)
                    }
                }
                if clock.now - lastCheck >= .milliseconds(5) {
                    lastCheck = clock.now
                    try checkMemory(child.peakResidentKiB() ?? 0, child)
                }
            }
            child.release()
            try child.wait()
            if let reason = cancelReason {
                throw CallDirectoryError(.unknown, "\(identifier): the extension cancelled its request: \(reason)")
            }
        } catch let error as CallDirectoryError {
            child.kill()
            try? child.wait()
            throw error
        } catch {
            child.kill()
            try? child.wait()
            throw unknown(error as? BlocklistError ?? BlocklistError(.io, "\(error)"))
        }
        guard child.termSignal == 0 else {
            throw CallDirectoryError(
                .loadingInterrupted,
                "\(identifier): the extension was killed by signal \(child.termSignal) after \(added) additions; nothing was saved."
            )
        }
        guard completed else {
            throw CallDirectoryError(
                .loadingInterrupted,
                "\(identifier): the extension exited (status \(child.exitStatus)) without completing its request; nothing was saved."
            )
        }
        progress(calls)
        return peakKiB
    }

    private mutating func checkMemory(_ residentKiB: Int, _ child: ChildProcess) throws(CallDirectoryError) {
        peakKiB = max(peakKiB, residentKiB)
        if residentKiB > options.memoryBudgetKiB {
            child.kill()
            throw CallDirectoryError(
                .loadingInterrupted,
                "\(identifier): the extension used \(residentKiB) KiB, over its memory budget of \(options.memoryBudgetKiB) KiB, and was killed; nothing was saved."
            )
        }
    }

    /// Applies every whole record in `bytes`; returns how many bytes that was.
    private mutating func apply(_ bytes: UnsafeRawBufferPointer) throws(CallDirectoryError) -> Int {
        var offset = 0
        while bytes.count - offset >= RequestWire.recordHeaderSize {
            guard let operation = RequestWire.Operation(rawValue: bytes[offset]) else {
                throw CallDirectoryError(
                    .unknown,
                    "\(identifier): the extension sent an unknown operation \(bytes[offset])."
                )
            }
            let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self)))
            let payload = operation.carriesBytes ? count : 8 * count
            guard count <= RequestWire.maximumBatch * 8 else {
                throw CallDirectoryError(.unknown, "\(identifier): the extension sent a malformed request record.")
            }
            guard bytes.count - offset >= RequestWire.recordHeaderSize + payload else { break }
            let body = UnsafeRawBufferPointer(
                rebasing: bytes[
                    (offset + RequestWire.recordHeaderSize)..<(offset + RequestWire.recordHeaderSize + payload)
                ]
            )
            guard !completed, !cancelled else {
                throw CallDirectoryError(
                    .unknown,
                    "\(identifier): the extension called the context after completeRequest."
                )
            }
            func number(_ index: Int) -> Int64 {
                Int64(littleEndian: body.loadUnaligned(fromByteOffset: 8 * index, as: Int64.self))
            }
            switch operation {
            case .add:
                for index in 0..<count { try add(number(index)) }
            case .remove:
                try storePending()
                for index in 0..<count { try remove(number(index)) }
            case .removeAll:
                try storePending()
                try removeAll()
            case .complete:
                try storePending()
                completed = true
            case .cancel:
                cancelReason = String(decoding: body, as: UTF8.self)
            case .label:
                try storePending()
                label = String(decoding: body, as: UTF8.self)
            case .addIdentification:
                try storePending()
                for index in 0..<count { try identify(number(index)) }
            case .removeIdentification:
                try storePending()
                for index in 0..<count { try removeIdentification(number(index)) }
            case .removeAllIdentification:
                try storePending()
                try removeAllIdentification()
            }
            offset += RequestWire.recordHeaderSize + payload
        }
        return offset
    }

    private mutating func add(_ number: Int64) throws(CallDirectoryError) {
        if let last = lastAdded, number <= last {
            throw number == last
                ? CallDirectoryError(.duplicateEntries, "\(identifier): entry \(added) repeats \(number).")
                : CallDirectoryError(
                    .entriesOutOfOrder,
                    "\(identifier): entry \(added) (\(number)) is not above the previous entry \(last); entries must be strictly ascending."
                )
        }
        lastAdded = number
        added += 1
        calls += 1
        count += 1
        let (total, scope) =
            options.capacityScope == .perExtension ? (count, "the extension holds") : (added, "the request adds")
        if total > options.capacity {
            throw CallDirectoryError(
                .maximumEntriesExceeded,
                "\(identifier): entry \(added - 1) (\(number)) makes \(total) entries that \(scope), over the maximum of \(options.capacity)."
            )
        }
        pending.append(number)
        if pending.count == Self.batchSize { try storePending() }
    }

    /// Writes the pending additions: a full batch with one statement, otherwise (or to find which
    /// entry a failed batch repeats) one at a time.
    private mutating func storePending() throws(CallDirectoryError) {
        defer { pending.removeAll(keepingCapacity: true) }
        if pending.count == Self.batchSize {
            let code = pending.withUnsafeBufferPointer { insertBatch!.runReturningCode(binding: $0, from: 2) }
            if code == sqliteDone { return }
            guard isConstraintViolation(code) else {
                throw CallDirectoryError(
                    .unknown,
                    "\(identifier): storing entries \(added - Int64(pending.count)) to \(added - 1) failed: \(insertBatch!.lastErrorMessage)."
                )
            }
            // SQLite rolled the whole statement back; the loop below names the repeated entry.
        }
        for (offset, number) in pending.enumerated() {
            let entry = added - Int64(pending.count) + Int64(offset)
            let code = insert!.runReturningCode(binding: number, at: 2)
            guard code == sqliteDone else {
                if isConstraintViolation(code) {
                    throw CallDirectoryError(
                        .duplicateEntries,
                        "\(identifier): entry \(entry) (\(number)) is already stored (UNIQUE constraint failed: PhoneNumberBlockingEntry)."
                    )
                }
                throw CallDirectoryError(
                    .unknown,
                    "\(identifier): storing entry \(entry) (\(number)) failed: \(insert!.lastErrorMessage)."
                )
            }
        }
    }

    private mutating func identify(_ number: Int64) throws(CallDirectoryError) {
        guard let label, !label.isEmpty else {
            throw CallDirectoryError(
                .unknown,
                "\(identifier): identification entry \(identificationAdded) (\(number)) has no label."
            )
        }
        if let last = lastIdentified, number <= last {
            throw number == last
                ? CallDirectoryError(
                    .duplicateEntries,
                    "\(identifier): identification entry \(identificationAdded) repeats \(number)."
                )
                : CallDirectoryError(
                    .entriesOutOfOrder,
                    "\(identifier): identification entry \(identificationAdded) (\(number)) is not above the previous one, \(last); entries must be strictly ascending."
                )
        }
        lastIdentified = number
        identificationAdded += 1
        identificationCount += 1
        calls += 1
        let (total, scope) =
            options.capacityScope == .perExtension
            ? (identificationCount, "the extension holds") : (identificationAdded, "the request adds")
        if total > options.capacity {
            throw CallDirectoryError(
                .maximumEntriesExceeded,
                "\(identifier): identification entry \(identificationAdded - 1) (\(number)) makes \(total) identification entries that \(scope), over the maximum of \(options.capacity)."
            )
        }
        do {
            try insertIdentification!.bind(.integer(extensionID), .integer(number), .text(label)).run()
        } catch {
            if store.database.isConstraintError {
                throw CallDirectoryError(
                    .duplicateEntries,
                    "\(identifier): identification entry \(identificationAdded - 1) (\(number)) is already stored (UNIQUE constraint failed: PhoneNumberIdentificationEntry)."
                )
            }
            throw unknown(error)
        }
    }

    private mutating func removeIdentification(_ number: Int64) throws(CallDirectoryError) {
        guard incremental else {
            throw CallDirectoryError(
                .unexpectedIncrementalRemoval,
                "\(identifier): removal of identification entry \(number) in a non-incremental request; it must only add."
            )
        }
        do {
            try deleteIdentification!.bind(.integer(extensionID), .integer(number)).run()
        } catch {
            throw unknown(error)
        }
        guard store.database.changes == 1 else {
            throw CallDirectoryError(
                .unexpectedIncrementalRemoval,
                "\(identifier): removal of identification entry \(number), which is not stored."
            )
        }
        calls += 1
        identificationCount -= 1
        identificationRemoved += 1
    }

    private mutating func removeAllIdentification() throws(CallDirectoryError) {
        guard incremental else {
            throw CallDirectoryError(
                .unexpectedIncrementalRemoval,
                "\(identifier): removeAllIdentificationEntries in a non-incremental request; it must only add."
            )
        }
        do {
            try store.database.prepare("DELETE FROM identification_entries WHERE extension_id = ?1").bind(
                .integer(extensionID)
            ).run()
        } catch {
            throw unknown(error)
        }
        calls += 1
        identificationRemoved += identificationCount
        identificationCount = 0
        lastIdentified = nil
    }

    private mutating func remove(_ number: Int64) throws(CallDirectoryError) {
        guard incremental else {
            throw CallDirectoryError(
                .unexpectedIncrementalRemoval,
                "\(identifier): removal of \(number) in a non-incremental request; it must only add."
            )
        }
        let code = deleteOne!.runReturningCode(binding: number, at: 2)
        guard code == sqliteDone else {
            throw CallDirectoryError(
                .unknown,
                "\(identifier): removing \(number) failed: \(deleteOne!.lastErrorMessage)."
            )
        }
        let changes = Int64(store.database.changes)
        calls += 1
        removed += changes
        count -= changes
    }

    private mutating func removeAll() throws(CallDirectoryError) {
        guard incremental else {
            throw CallDirectoryError(
                .unexpectedIncrementalRemoval,
                "\(identifier): removeAllBlockingEntries in a non-incremental request; it must only add."
            )
        }
        do {
            try store.database.prepare("DELETE FROM blocking_entries WHERE extension_id = ?1").bind(
                .integer(extensionID)
            ).run()
        } catch {
            throw unknown(error)
        }
        removed += count
        calls += 1
        count = 0
        lastAdded = nil
    }

    /// Records the load and commits: from here the new entries are what the extension holds.
    mutating func commit(checksum: String, milliseconds: Int64, peakKiB: Int) throws(CallDirectoryError) {
        do {
            try store.database.prepare(
                """
                UPDATE extensions SET state = 'loaded', needs_full_reload = 0, loaded_checksum = ?2, loaded_count = ?3,
                    last_load_at = ?4, last_duration_ms = ?5, peak_memory_kib = ?6, last_error = NULL WHERE id = ?1
                """
            ).bind(
                .integer(extensionID),
                .text(checksum),
                .integer(count),
                .integer(Int64(time(nil))),
                .integer(milliseconds),
                .integer(Int64(peakKiB))
            ).run()
            try store.database.execute("COMMIT")
            inTransaction = false
        } catch {
            throw unknown(error)
        }
    }

    /// Rolls the request back and records the failure; the next request will be non-incremental.
    mutating func fail(_ error: CallDirectoryError, milliseconds: Int64, peakKiB: Int) {
        if inTransaction { try? store.database.execute("ROLLBACK") }
        inTransaction = false
        guard extensionID != 0 else { return }
        try? store.database.prepare(
            """
            UPDATE extensions SET state = 'failed', needs_full_reload = 1, last_load_at = ?2, last_duration_ms = ?3,
                peak_memory_kib = ?4, last_error = ?5 WHERE id = ?1
            """
        ).bind(
            .integer(extensionID),
            .integer(Int64(time(nil))),
            .integer(milliseconds),
            .integer(Int64(peakKiB)),
            .text(error.description)
        ).run()
    }
}
