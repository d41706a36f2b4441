import BlocklistCore

/// Where `ShardDelta.apply` hands the blocking runs of its result, hashed already: a shard
/// writer. `consume` takes the first `count` runs of a buffer and returns the buffer to fill next.
protocol RunSink: AnyObject {
    func consume(_ runs: UnsafeMutableBufferPointer<NumberRun>, count: Int) throws(BlocklistError)
        -> UnsafeMutableBufferPointer<NumberRun>
    /// Waits for every run handed on; after it, the writer is the caller's again.
    func finish() throws(BlocklistError)
}

/// Writes the runs on the calling thread.
final class DirectRunSink: RunSink {
    let writer: ShardWriter
    private let buffer: UnsafeMutableBufferPointer<NumberRun>

    init(writer: ShardWriter, capacity: Int) {
        self.writer = writer
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    /// The buffer to fill first.
    var first: UnsafeMutableBufferPointer<NumberRun> { buffer }

    func consume(_ runs: UnsafeMutableBufferPointer<NumberRun>, count: Int) throws(BlocklistError)
        -> UnsafeMutableBufferPointer<NumberRun>
    {
        try writer.append(contentsOf: UnsafeBufferPointer(rebasing: runs[0..<count]))
        return runs
    }

    func finish() throws(BlocklistError) {}
}

/// Writes the runs on a second thread while the caller decodes, merges and hashes the next
/// ones: rewriting a shard is two serial chains (decoding the base and hashing the result;
/// encoding the result) that each take about half the time, and a phone has cores to spare.
/// (Hashing on a third thread, beside the writer, was slower on two cores: 35–43 ms against
/// 46–55 ms, mean of 10 rewrites of 1,000,000 runs.) Three buffers go round:
/// the caller fills one while the thread empties another. Memory is fixed: the buffers and a
/// 256 KiB stack, allocated once per shard.
///
/// If the thread's writer fails, the caller's next `consume` (or `finish`) throws its error; if
/// the caller fails, `cancel` stops the thread before the writer is touched again.
final class ThreadedRunSink: RunSink {
    private let direct: DirectRunSink
    private let slots: [UnsafeMutableBufferPointer<NumberRun>]
    private var counts: [Int]
    // Guarded by `mutex`: slots filled and not yet emptied run from `emptied` to `filled`.
    private var filled = 0
    private var emptied = 0
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

    /// Whether the mutex and the condition were made, and so are destroyed by `deinit`.
    private var mutexMade = false
    private var conditionMade = false

    /// Starts the thread; nil if the system refuses a mutex, a condition or a thread (the caller
    /// then writes on its own thread). What was made is released once, by `deinit`.
    ///
    /// - Parameter refusing: for tests, the step the system is made to refuse.
    static func start(
        writer: ShardWriter,
        capacity: Int,
        refusing: LaunchStep? = nil
    ) -> ThreadedRunSink? {
        let sink = ThreadedRunSink(writer: writer, capacity: capacity)
        return sink.launch(refusing: refusing) ? sink : nil
    }

    /// What starting the thread takes from the system, in order.
    enum LaunchStep: CaseIterable {
        case mutex, condition, attributes, thread
    }

    private init(writer: ShardWriter, capacity: Int) {
        direct = DirectRunSink(writer: writer, capacity: 0)
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

    /// Hands `runs` (the slot the caller was given last) to the thread and waits for a free one.
    func consume(_ runs: UnsafeMutableBufferPointer<NumberRun>, count: Int) throws(BlocklistError)
        -> UnsafeMutableBufferPointer<NumberRun>
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        counts[filled % slots.count] = count
        filled += 1
        pthread_cond_broadcast(changed)
        while filled - emptied == slots.count && failure == nil {
            pthread_cond_wait(changed, mutex)
        }
        if let failure { throw failure }
        return slots[filled % slots.count]
    }

    func finish() throws(BlocklistError) {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
        join()
        if let failure { throw failure }
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

    /// The thread: empties slots in order until the caller closes the pipe and none is left,
    /// or a write fails.
    private func drain() {
        pthread_mutex_lock(mutex)
        while true {
            while emptied == filled && !closed && failure == nil {
                pthread_cond_wait(changed, mutex)
            }
            if failure != nil || emptied == filled {
                break
            }
            let index = emptied % slots.count
            let count = counts[index]
            pthread_mutex_unlock(mutex)
            var error: BlocklistError?
            do {
                _ = try direct.consume(slots[index], count: count)
            } catch let thrown {
                error = thrown
            }
            pthread_mutex_lock(mutex)
            if let error, failure == nil { failure = error }
            emptied += 1
            pthread_cond_broadcast(changed)
        }
        pthread_mutex_unlock(mutex)
    }
}
