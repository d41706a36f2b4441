import BlocklistCore

extension BlocklistError.Code {
    /// Another process holds the lock this operation needs (a set, a store, a staging directory).
    package static let busy = Self(named: "busy")
}
