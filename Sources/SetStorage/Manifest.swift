import BlocklistCore

/// The index of a shard set: which files make up the current generation, what each holds, and the
/// spec that made them. `manifest.json` in the output directory; replacing it is the commit.
///
/// `ManifestWriter` writes it as a stream (so a 10,000-shard set never holds every record in
/// memory); `Manifest.decode` (ManifestReader.swift) is its one reader. `Codable` stays for the tests,
/// which hold that reader to JSONDecoder (`ManifestReaderTests`).
package struct Manifest: Codable, Hashable, Sendable {
    /// The file name in the output directory.
    package static let fileName = "manifest.json"
    /// What `format` says.
    package static let formatName = "blocklist-shard-set"
    /// The manifest version this library writes and the newest it reads.
    package static let currentVersion = 2

    /// One shard file.
    package struct Shard: Codable, Hashable, Sendable {
        /// The file's name inside the set directory.
        package var file: String
        /// From 1; extension `index` loads it.
        package var index: Int
        /// How many numbers it holds.
        package var count: Int64
        /// Its smallest number (0 if empty).
        package var first: Int64
        /// Its largest number (0 if empty).
        package var last: Int64
        /// The file's size.
        package var bytes: Int64
        /// The header's CRC-32 as 8 hex digits; it covers every byte of the file.
        package var checksum: String
        /// How many identification entries it holds (packed sets; absent means none).
        package var identified: Int64?
        /// The smallest number it covers (packed sets).
        package var lowerBound: Int64?

        package init(
            file: String,
            index: Int,
            count: Int64,
            first: Int64,
            last: Int64,
            bytes: Int64,
            checksum: String,
            identified: Int64? = nil,
            lowerBound: Int64? = nil
        ) {
            self.file = file
            self.index = index
            self.count = count
            self.first = first
            self.last = last
            self.bytes = bytes
            self.checksum = checksum
            self.identified = identified
            self.lowerBound = lowerBound
        }
    }

    /// How a set's shards divide the numbers.
    package enum Layout: String, Codable, Hashable, Sendable {
        /// Shard i holds candidate ranks [(i-1)·rangeSize, i·rangeSize) of the spec's patterns.
        case range
        /// Shards hold consecutive number intervals, filled up to capacity.
        case packed
    }

    /// One list file given to `generate`.
    package struct Input: Codable, Hashable, Sendable {
        /// numbers, allow, labels or list.
        package var kind: String
        /// The path as given, made absolute (`-` for standard input).
        package var path: String
        /// Bytes read from it.
        package var bytes: Int64
        /// Lines read, and how many were skipped as invalid (`--skip-invalid`).
        package var lines: Int64
        package var skipped: Int64
        /// The SHA-256 of its bytes as read (64 hex digits), so that `verify` can tell whether
        /// it changed; absent in sets made before it was recorded.
        package var sha256: String?

        package init(kind: String, path: String, bytes: Int64, lines: Int64, skipped: Int64, sha256: String? = nil) {
            self.kind = kind
            self.path = path
            self.bytes = bytes
            self.lines = lines
            self.skipped = skipped
            self.sha256 = sha256
        }
    }

    /// The spec, as given to `generate`.
    package struct Spec: Codable, Hashable, Sendable {
        package var patterns: [BlockPattern]
        package var exclusions: [String]
        package var rangeSize: Int64
        package var capacity: Int64
        /// Packed sets: the layout, the allow patterns and the list files.
        package var layout: Layout?
        package var allowPatterns: [BlockPattern]?
        package var inputs: [Input]?
        /// Packed sets: the country code national numbers got, and whether invalid lines were
        /// skipped, so that `verify` can read the inputs again the same way.
        package var defaultCountry: Int64?
        package var skipInvalid: Bool?

        package init(
            patterns: [BlockPattern],
            exclusions: [String],
            rangeSize: Int64,
            capacity: Int64,
            layout: Layout?,
            allowPatterns: [BlockPattern]?,
            inputs: [Input]?,
            defaultCountry: Int64? = nil,
            skipInvalid: Bool? = nil
        ) {
            self.patterns = patterns
            self.exclusions = exclusions
            self.rangeSize = rangeSize
            self.capacity = capacity
            self.layout = layout
            self.allowPatterns = allowPatterns
            self.inputs = inputs
            self.defaultCountry = defaultCountry
            self.skipInvalid = skipInvalid
        }

        /// A spec with no patterns: where a writer carries the spec as raw JSON instead
        /// (`manifestSpecJSON`), and what a reader fills in key by key.
        package static let empty = Spec(
            patterns: [],
            exclusions: [],
            rangeSize: 0,
            capacity: 0,
            layout: nil,
            allowPatterns: nil,
            inputs: nil
        )

        package init(_ spec: BlockSpec) {
            patterns = spec.patterns
            exclusions = spec.exclusions
            rangeSize = spec.rangeSize
            capacity = spec.capacity
            layout = nil
            allowPatterns = nil
            inputs = nil
        }

        /// The spec, validated again.
        package func blockSpec() throws(BlocklistError) -> BlockSpec {
            try BlockSpec(patterns: patterns, exclusions: exclusions, rangeSize: rangeSize, capacity: capacity)
        }
    }

    /// Always "blocklist-shard-set".
    package var format: String
    /// The manifest version.
    package var version: Int
    /// A unique name for this generation.
    package var generation: String
    /// The directory, inside the output directory, that holds this generation's shards.
    package var directory: String
    /// When the set was generated, in seconds since 1970.
    package var createdAt: Int64
    /// The spec that made the set.
    package var spec: Spec
    /// The sum of the shards' counts.
    package var totalEntries: Int64
    /// The sum of the shards' sizes.
    package var totalBytes: Int64
    /// The shards, by index.
    package var shards: [Shard]

    /// The path of shard `shard` when the set is in `outputDirectory`.
    package func path(of shard: Shard, in outputDirectory: String) -> String {
        outputDirectory + "/" + directory + "/" + shard.file
    }

    /// Checks what JSON decoding cannot: format, version, safe names, indexes in order.
    package func validate(path: String) throws(BlocklistError) {
        func fail(_ what: String) -> BlocklistError { BlocklistError(.manifestMismatch, "\(path): \(what).") }
        guard format == Self.formatName else { throw fail("format is \"\(format)\", expected \"\(Self.formatName)\"") }
        guard version >= 1 else { throw fail("version \(version) is not a manifest version") }
        guard version <= Self.currentVersion else {
            throw BlocklistError(
                .unsupportedVersion,
                "\(path) is manifest version \(version), newer than the version \(Self.currentVersion) this tool reads; update blocklist."
            )
        }
        guard Self.isPlainName(directory) else {
            throw fail(
                "directory \"\(directory)\" is not a plain name inside the output directory; refusing to follow it"
            )
        }
        for (position, shard) in shards.enumerated() {
            guard Self.isPlainName(shard.file) else {
                throw fail(
                    "shard \(shard.index) names the file \"\(shard.file)\", which is not a plain name inside the set directory; refusing to follow it"
                )
            }
            guard shard.index == position + 1 else {
                throw fail("entry \(position + 1) of shards has index \(shard.index)")
            }
        }
    }

    /// A name with no path separator that is not ".", ".." or hidden.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }
}
