/// A run of consecutive phone numbers: `start`, `start + 1`, …, `start + count - 1`.
///
/// The accepted numbers of a spec come in long runs (about 98,800 runs for the 98.5 million
/// default numbers), so the generator, the writer and the reader all work a run at a time.
public struct NumberRun: Hashable, Sendable, CustomStringConvertible {
    /// The first number.
    public var start: Int64
    /// How many numbers; at least 1.
    public var count: Int64

    @inlinable
    public init(start: Int64, count: Int64) {
        self.start = start
        self.count = count
    }

    /// The last number. Computed as `start + (count - 1)`, so a run that ends at `Int64.max`
    /// (which a hostile shard can spell) does not overflow.
    @inlinable
    public var last: Int64 { start + (count - 1) }

    /// The run made of `first...last`.
    @inlinable
    public init(first: Int64, last: Int64) {
        self.init(start: first, count: last - first + 1)
    }

    public var description: String { count == 1 ? "\(start)" : "\(start)...\(last)" }
}
