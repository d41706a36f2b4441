import BlocklistCore
internal import LibC

/// Where `ShardDelta.apply` hands the blocking runs of its result: a shard writer and a content
/// hasher. `consume` takes the first `count` runs of a buffer and returns the buffer to fill next.
protocol RunSink: AnyObject {
    func consume(_ runs: UnsafeMutableBufferPointer<NumberRun>, count: Int) throws(BlocklistError)
        -> UnsafeMutableBufferPointer<NumberRun>
    /// Waits for every run handed on; after it, the writer and the hasher are the caller's again.
    func finish() throws(BlocklistError)
    /// The hasher, having taken every run handed on (after `finish`).
    var hasher: ContentHasher { get }
}

/// Writes and hashes the runs on the calling thread.
final class DirectRunSink: RunSink {
    let writer: ShardWriter
    var hasher: ContentHasher
    private let buffer: UnsafeMutableBufferPointer<NumberRun>

    init(writer: ShardWriter, hasher: ContentHasher, capacity: Int) {
        self.writer = writer
        self.hasher = hasher
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    /// The buffer to fill first.
    var first: UnsafeMutableBufferPointer<NumberRun> { buffer }

    func consume(_ runs: UnsafeMutableBufferPointer<NumberRun>, count: Int) throws(BlocklistError)
        -> UnsafeMutableBufferPointer<NumberRun>
    {
        let done = UnsafeBufferPointer(rebasing: runs[0..<count])
        try writer.append(contentsOf: done)
        hasher.blocking(contentsOf: done)
        return runs
    }

    func finish() throws(BlocklistError) {}
}

/// Writes the runs on a second thread while the caller decodes and merges the next ones, and
/// hashes them on whichever thread would otherwise wait. Rewriting a shard is three serial
/// chains: decoding the base, encoding the result, and SHA-256 over its runs (16 bytes each).
/// The thread encodes; the hash goes a buffer at a time, in order, to the thread that is ahead:
/// the writer hashes each buffer it has encoded unless the caller got there first, and the
/// caller, when every buffer is taken, hashes the oldest one not hashed instead of waiting. So
/// the two chains balance whichever is slower (on two cores, a mean of 31–38 ms for 1,000,000
/// runs in six rounds of 10, against 32–48 ms with the caller hashing every buffer; a third
/// thread for the hash was slower still, 46–55 ms). Three buffers go round; a buffer is free
/// again once it is both encoded and hashed. Memory is fixed: the buffers and a 256 KiB stack,
/// allocated once per shard.
///
/// If the thread's writer fails, the caller's next `consume` (or `finish`) throws its error; if
/// the caller fails, `cancel` stops the thread before the writer is touched again.
final class ThreadedRunSink: RunSink {
    private let direct: DirectRunSink
    private let slots: [UnsafeMutableBufferPointer<NumberRun>]
    private var counts: [Int]
    // Guarded by `mutex`: buffers handed on (`filled`), encoded and hashed, each counted from
    // the first; buffer n is in slot n % 3. At most one thread hashes at a time (`hashing`).
    private var filled = 0
    private var encoded = 0
    private var hashed = 0
    private var hashing = false
    private var closed = false
    private var failure: BlocklistError?
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    #if canImport(Darwin)
        private var thread: pthread_t?
    #else
        private var thread = pthread_t()
    #endif
    private var running = false
    /// Touched only by the thread that claimed the hash (`hashing`), or after `finish`.
    private var contentHasher: ContentHasher

    var hasher: ContentHasher { contentHasher }

    /// Whether the mutex and the condition were made, and so are destroyed by `deinit`.
    private var mutexMade = false
    private var conditionMade = false

    /// Starts the thread; nil if the system refuses a mutex, a condition or a thread (the caller
    /// then writes on its own thread). What was made is released once, by `deinit`.
    ///
    /// - Parameter refusing: for tests, the step the system is made to refuse.
    static func start(
        writer: ShardWriter,
        hasher: ContentHasher,
        capacity: Int,
        refusing: LaunchStep? = nil
    ) -> ThreadedRunSink? {
        let sink = ThreadedRunSink(writer: writer, hasher: hasher, capacity: capacity)
        return sink.launch(refusing: refusing) ? sink : nil
    }

    /// What starting the thread takes from the system, in order.
    enum LaunchStep: CaseIterable {
        case mutex, condition, attributes, thread
    }

    private init(writer: ShardWriter, hasher: ContentHasher, capacity: Int) {
        direct = DirectRunSink(writer: writer, hasher: hasher, capacity: 0)
        contentHasher = hasher
        slots = (0..<3).map { _ in .allocate(capacity: capacity) }
        counts = [0, 0, 0]
        mutex = .allocate(capacity: 1)
        changed = .allocate(capacity: 1)
    }

    private func launch(refusing: LaunchStep?) -> Bool {
        mutexMade = refusing != .mutex && pthread_mutex_init(mutex, nil) == 0
        guard mutexMade else { return false }
        conditionMade = refusing != .condition && pthread_cond_init(changed, nil) == 0
        guard conditionMade else { return false }
        var attributes = pthread_attr_t()
        guard refusing != .attributes, pthread_attr_init(&attributes) == 0 else { return false }
        defer { pthread_attr_destroy(&attributes) }
        _ = pthread_attr_setstacksize(&attributes, 256 << 10)
        // The thread holds the sink until it ends; `finish` or `cancel` ends it.
        guard refusing != .thread else { return false }
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(
            &thread,
            &attributes,
            { context in
                #if canImport(Darwin)
                    let sink = Unmanaged<ThreadedRunSink>.fromOpaque(context).takeRetainedValue()
                #else
                    let sink = Unmanaged<ThreadedRunSink>.fromOpaque(context!).takeRetainedValue()
                #endif
                sink.drain()
                return nil
            },
            context
        )
        guard started == 0 else {
            Unmanaged<ThreadedRunSink>.fromOpaque(context).release()
            return false
        }
        running = true
        return true
    }

    deinit {
        cancel()
        if conditionMade { pthread_cond_destroy(changed) }
        if mutexMade { pthread_mutex_destroy(mutex) }
        changed.deallocate()
        mutex.deallocate()
        for slot in slots { slot.deallocate() }
    }

    /// The buffer to fill first.
    var first: UnsafeMutableBufferPointer<NumberRun> { slots[0] }

    /// Hands `runs` (the slot the caller was given last) to the thread and waits for a free one,
    /// hashing the oldest buffer not hashed while it waits, if no one else is.
    func consume(_ runs: UnsafeMutableBufferPointer<NumberRun>, count: Int) throws(BlocklistError)
        -> UnsafeMutableBufferPointer<NumberRun>
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        counts[filled % slots.count] = count
        filled += 1
        pthread_cond_broadcast(changed)
        while filled - min(encoded, hashed) == slots.count && failure == nil {
            if !hashNextLocked(through: filled) { pthread_cond_wait(changed, mutex) }
        }
        if let failure { throw failure }
        return slots[filled % slots.count]
    }

    /// Waits for the thread, hashing what it has not, and joins it.
    func finish() throws(BlocklistError) {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_broadcast(changed)
        while hashed < filled && failure == nil {
            if !hashNextLocked(through: filled) { pthread_cond_wait(changed, mutex) }
        }
        pthread_mutex_unlock(mutex)
        join()
        if let failure { throw failure }
    }

    /// With `mutex` held: if no thread is hashing and buffer `hashed` is below `limit`, hashes
    /// it with the mutex released, and returns true; false if there was nothing to claim.
    private func hashNextLocked(through limit: Int) -> Bool {
        guard !hashing, hashed < limit else { return false }
        hashing = true
        let index = hashed % slots.count
        let count = counts[index]
        pthread_mutex_unlock(mutex)
        contentHasher.blocking(contentsOf: UnsafeBufferPointer(rebasing: slots[index][0..<count]))
        pthread_mutex_lock(mutex)
        hashed += 1
        hashing = false
        pthread_cond_broadcast(changed)
        return true
    }

    /// Stops the thread without waiting for the runs still queued.
    func cancel() {
        guard running else { return }
        pthread_mutex_lock(mutex)
        closed = true
        if failure == nil { failure = BlocklistError(.io, "\(direct.writer.path): the rewrite was stopped.") }
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
        join()
    }

    private func join() {
        guard running else { return }
        running = false
        #if canImport(Darwin)
            if let thread { pthread_join(thread, nil) }
        #else
            pthread_join(thread, nil)
        #endif
    }

    /// The thread: encodes buffers in order, and hashes each it has encoded before the next
    /// unless the caller got there first, until the caller closes the pipe and every buffer is
    /// encoded (the caller hashes any left), or a write fails.
    private func drain() {
        pthread_mutex_lock(mutex)
        while failure == nil {
            if hashNextLocked(through: encoded) { continue }
            if encoded < filled {
                let index = encoded % slots.count
                let count = counts[index]
                pthread_mutex_unlock(mutex)
                var error: BlocklistError?
                do {
                    try direct.writer.append(contentsOf: UnsafeBufferPointer(rebasing: slots[index][0..<count]))
                } catch let thrown {
                    error = thrown
                }
                pthread_mutex_lock(mutex)
                if let error, failure == nil { failure = error }
                encoded += 1
                pthread_cond_broadcast(changed)
            } else if closed {
                break
            } else {
                pthread_cond_wait(changed, mutex)
            }
        }
        pthread_mutex_unlock(mutex)
    }
}
