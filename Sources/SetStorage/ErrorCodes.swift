import BlocklistCore

extension BlocklistError.Code {
    /// A shard set disagrees with its manifest, or a manifest with the spec that made it.
    package static let manifestMismatch = Self(named: "manifest mismatch")
}
