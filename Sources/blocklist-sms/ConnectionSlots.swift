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
///
/// A connection whose answer waits on its peer to read (its channel is not writable) is closed
/// for room too, but only when no connection is still sending its request or idle: otherwise 80
/// connections that ask for a shard and never read held every slot of `updates serve`, and
/// nobody else was answered (issue 46). A phone that reads slowly keeps its download unless the
/// server is full of such connections, and resumes it with a Range request if it was closed.
final class ConnectionSlots: Sendable {
    /// One accepted connection.
    final class Slot: Sendable {
        let order: UInt64
        let channel: any Channel
        /// Whether it may be closed for room: no request of it has arrived whole and waits for
        /// its answer. Set on the connection's event loop, read by whichever loop needs room.
        let evictable = Atomic(true)
        /// Whether its answer waits on the peer to read: closed for room when no connection is
        /// `evictable`.
        let stalled = Atomic(false)

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
    /// than `limit`, the oldest other evictable connection is closed to make room for it, or
    /// failing one, the oldest whose answer is stalled; when there is none, it stays as the one
    /// over the limit (the accept gate lets in at most one
    /// more than `limit`, so further ones wait in the kernel's queue).
    ///
    /// - Complexity: O(connections) when over the limit, else O(1).
    func register(_ channel: any Channel) -> Slot {
        let (slot, victim) = state.withLock { state -> (Slot, Slot?) in
            state.next += 1
            let slot = Slot(order: state.next, channel: channel)
            state.slots[slot.order] = slot
            return (slot, Self.victim(in: &state, limit: limit, sparing: slot))
        }
        victim?.channel.close(promise: nil)
        channel.closeFuture.whenComplete { _ in
            _ = self.state.withLock { $0.slots.removeValue(forKey: slot.order) }
        }
        return slot
    }

    /// Called when a connection's answer stalls: while every slot is taken and one more connection
    /// waits (the one over the limit, with more in the kernel's queue behind it), the oldest
    /// evictable or stalled connection is closed, so that a server full of connections that
    /// never read lets the next one in. Without it a newcomer accepted before the others
    /// stalled waited behind them for good.
    func answerStalled() {
        let victim = state.withLock { Self.victim(in: &$0, limit: limit, sparing: nil) }
        victim?.channel.close(promise: nil)
    }

    /// The connection to close for room when more than `limit` are open, taken out of the
    /// slots: the oldest evictable other than `sparing`, or failing one, the oldest stalled.
    private static func victim(in state: inout State, limit: Int, sparing: Slot?) -> Slot? {
        guard state.slots.count > limit else { return nil }
        let others = state.slots.values.filter { $0 !== sparing }
        let oldest =
            others.filter { $0.evictable.load(ordering: .relaxed) }.min { $0.order < $1.order }
            ?? others.filter { $0.stalled.load(ordering: .relaxed) }.min { $0.order < $1.order }
        guard let oldest else { return nil }
        state.slots[oldest.order] = nil
        return oldest
    }
}
