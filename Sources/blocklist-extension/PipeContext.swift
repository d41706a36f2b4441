import BlocklistCore
import CallDirectoryHosting
internal import LibC

/// The simulator's `CallDirectoryContext`: batches the extension's calls into `RequestWire` records
/// on a pipe to the system process, which enforces CallKit's rules. One fixed 32 KiB buffer.
final class PipeContext: CallDirectoryContext {
    let isIncremental: Bool
    private let fd: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: RequestWire.recordHeaderSize + 8 * RequestWire.maximumBatch,
        alignment: 8
    )
    /// The operation of the numbers waiting in the buffer; `nil` when none wait.
    private var operation: RequestWire.Operation?
    private var count = 0
    /// Set once a write fails (the system went away); later calls do nothing.
    private(set) var broken = false

    /// Entry calls left before this process kills itself (`--crash-after`), to let tests crash
    /// the extension at entry k; `nil` for never.
    private var callsBeforeCrash: Int64?

    init(fd: Int32, isIncremental: Bool, crashAfter: Int64? = nil) {
        self.fd = fd
        self.isIncremental = isIncremental
        callsBeforeCrash = crashAfter
    }

    @inline(__always)
    private func tick() {
        guard let left = callsBeforeCrash else { return }
        if left == 0 { kill(getpid(), SIGKILL) }
        callsBeforeCrash = left - 1
    }

    deinit { buffer.deallocate() }

    func addBlockingEntry(withNextSequentialPhoneNumber phoneNumber: Int64) {
        tick()
        append(.add, phoneNumber)
    }
    func removeBlockingEntry(withPhoneNumber phoneNumber: Int64) {
        tick()
        append(.remove, phoneNumber)
    }
    func removeAllBlockingEntries() { record(.removeAll) }
    func removeIdentificationEntry(withPhoneNumber phoneNumber: Int64) {
        tick()
        append(.removeIdentification, phoneNumber)
    }
    func removeAllIdentificationEntries() { record(.removeAllIdentification) }

    /// The label the simulator applies to identification additions; sent when it changes. The
    /// loader hands the same `String` for a whole run, so the common case compares storage.
    private var currentLabel: String?

    func addIdentificationEntry(withNextSequentialPhoneNumber phoneNumber: Int64, label: String) {
        tick()
        if label != currentLabel {
            currentLabel = label
            sendBytes(.label, label)
        }
        append(.addIdentification, phoneNumber)
    }

    /// Sends the completion; `expired` is `true` when the system went away before it (CallKit's
    /// meaning: nothing this request sent was stored).
    func completeRequest(completionHandler completion: (@Sendable (_ expired: Bool) -> Void)?) {
        record(.complete)
        completion?(broken)
    }

    /// Ends the request with an error, as `cancelRequest(withError:)` does.
    func cancelRequest(reason: String) { sendBytes(.cancel, reason) }

    private func sendBytes(_ op: RequestWire.Operation, _ text: String) {
        flush()
        var text = text
        text.withUTF8 { bytes in
            let length = min(bytes.count, buffer.count - RequestWire.recordHeaderSize)
            buffer[0] = op.rawValue
            buffer.storeBytes(of: UInt32(length).littleEndian, toByteOffset: 1, as: UInt32.self)
            UnsafeMutableRawBufferPointer(rebasing: buffer[RequestWire.recordHeaderSize...]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[0..<length])
            )
            send(RequestWire.recordHeaderSize + length)
        }
    }

    @inline(__always)
    private func append(_ op: RequestWire.Operation, _ number: Int64) {
        if op != operation || count == RequestWire.maximumBatch {
            flush()
            operation = op
        }
        buffer.storeBytes(
            of: number.littleEndian,
            toByteOffset: RequestWire.recordHeaderSize + 8 * count,
            as: Int64.self
        )
        count += 1
    }

    private func record(_ op: RequestWire.Operation) {
        flush()
        buffer[0] = op.rawValue
        buffer.storeBytes(of: UInt32(0), toByteOffset: 1, as: UInt32.self)
        send(RequestWire.recordHeaderSize)
    }

    func flush() {
        guard count > 0, let operation else { return }
        buffer[0] = operation.rawValue
        buffer.storeBytes(of: UInt32(count).littleEndian, toByteOffset: 1, as: UInt32.self)
        send(RequestWire.recordHeaderSize + 8 * count)
        count = 0
        self.operation = nil
    }

    private func send(_ length: Int) {
        var done = 0
        while done < length && !broken {
            let n = write(fd, buffer.baseAddress! + done, length - done)
            if n < 0 {
                if errno == EINTR { continue }
                broken = true
            } else {
                done += n
            }
        }
    }
}
