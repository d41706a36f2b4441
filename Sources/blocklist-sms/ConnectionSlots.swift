import NIOCore
import Synchronization

/// The `--max-connections` slots of a server and what happens when they are all taken: when a
/// new connection arrives, the oldest connection that has not finished sending its request (or
/// sits idle between requests) is closed to make room for it.
///
/// Without it, connections that send half a request head held every slot until their header
/// timeout, and a legitimate request waited in the kernel's queue behind them (issue 27, item
/// 8). A connection whose request has arrived whole is never closed for room: its answer is
/// written however long it takes. When every slot holds such a connection, the newcomer is
/// served as one over the limit and further ones wait in the kernel's queue, as before. Eviction was chosen over shrinking the header timeout under
/// pressure (Envoy's overload manager): it frees a slot exactly when one is needed, needs no
/// tuning, and a client sending at any honest speed keeps its connection unless a thousand
/// newer ones arrive before its head does.
final class ConnectionSlots: Sendable {
    /// One accepted connection.
    final class Slot: Sendable {
        let order: UInt64
        let channel: any Channel
        /// Whether it may be closed for room: no request of it has arrived whole and waits for
        /// its answer. Set on the connection's event loop, read by whichever loop needs room.
        let evictable = Atomic(true)

        init(order: UInt64, channel: any Channel) {
            self.order = order
            self.channel = channel
        }
    }

    private struct State {
        var next: UInt64 = 0
        var slots: [UInt64: Slot] = [:]
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    /// Registers a connection just accepted; it leaves when it closes. When it makes one more
    /// than `limit`, the oldest other evictable connection is closed to make room for it; when
    /// there is none, it stays as the one over the limit (the accept gate lets in at most one
    /// more than `limit`, so further ones wait in the kernel's queue).
    ///
    /// - Complexity: O(connections) when over the limit, else O(1).
    func register(_ channel: any Channel) -> Slot {
        let (slot, victim) = state.withLock { state -> (Slot, Slot?) in
            state.next += 1
            let slot = Slot(order: state.next, channel: channel)
            state.slots[slot.order] = slot
            guard state.slots.count > limit else { return (slot, nil) }
            let evictable = state.slots.values.filter { $0 !== slot && $0.evictable.load(ordering: .relaxed) }
            guard let oldest = evictable.min(by: { $0.order < $1.order }) else { return (slot, nil) }
            state.slots[oldest.order] = nil
            return (slot, oldest)
        }
        victim?.channel.close(promise: nil)
        channel.closeFuture.whenComplete { _ in
            _ = self.state.withLock { $0.slots.removeValue(forKey: slot.order) }
        }
        return slot
    }
}
