import BlocklistCore
import JSONStream

/// Writes a manifest as pretty JSON, one shard at a time, through one fixed buffer.
///
/// `generate` must stay within an extension-sized memory budget however many shards it writes,
/// so it cannot build the whole document (or every `Manifest.Shard`) first and encode it at the
/// end, and it links no Foundation. The document has a fixed shape and its strings are validated
/// names, digits and hex, so it is written field by field; `"format"` comes first, which makes
/// `OutputDirectory.manifestSignature` the second line. `ManifestWriterTests` decode its output
/// with `JSONDecoder` and compare it with the records written.
///
/// ```
/// {
///   "format" : "blocklist-shard-set",
///   "version" : 1, "generation" : …, "directory" : …, "createdAt" : …, "spec" : { … },
///   "shards" : [
///     { "file" : "shard-01.blk", "index" : 1, "count" : …, "first" : …, "last" : …, "bytes" : …, "checksum" : "…" },
///   ],
///   "totalEntries" : …, "totalBytes" : …
/// }
/// ```
package final class ManifestWriter {
    private let file: FileDescriptor
    private let buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    /// One string escaped at a time, its capacity kept.
    private var scratch: [UInt8] = []
    private var written: Int64 = 0
    private var shardCount = 0
    private var totalEntries: Int64 = 0
    private var totalBytes: Int64 = 0

    /// Creates `path` (which must not exist) and writes everything before the first shard.
    package init(
        path: String,
        generation: String,
        directory: String,
        createdAt: Int64,
        spec: Manifest.Spec,
        specJSON: [UInt8]? = nil
    ) throws(BlocklistError) {
        file = try FileDescriptor.createExclusive(path)
        buffer = .allocate(byteCount: 16 * 1024, alignment: 8)
        try append("{\n")
        try field("format", string: Manifest.formatName)
        try field("version", Int64(Manifest.currentVersion))
        try field("generation", string: generation)
        try field("directory", string: directory)
        try field("createdAt", createdAt)
        if let specJSON {
            // A publication's spec, as its signed snapshot carries it (one JSON object).
            try append("  \"spec\" : ")
            try append(String(decoding: specJSON, as: UTF8.self))
            try append(",\n  \"shards\" : [")
            return
        }
        try append("  \"spec\" : {\n    \"patterns\" : ")
        try list(spec.patterns)
        try append(",\n    \"exclusions\" : ")
        try list(spec.exclusions)
        try append(",\n    \"rangeSize\" : \(spec.rangeSize),\n    \"capacity\" : \(spec.capacity)")
        if let layout = spec.layout {
            try append(",\n    \"layout\" : \"\(layout.rawValue)\"")
        }
        if let country = spec.defaultCountry {
            try append(",\n    \"defaultCountry\" : \(country)")
        }
        if let skip = spec.skipInvalid {
            try append(",\n    \"skipInvalid\" : \(skip)")
        }
        if let allow = spec.allowPatterns {
            try append(",\n    \"allowPatterns\" : ")
            try list(allow)
        }
        if let inputs = spec.inputs {
            try append(",\n    \"inputs\" : [")
            for (position, input) in inputs.enumerated() {
                try append(position == 0 ? "\n      { \"kind\" : " : ",\n      { \"kind\" : ")
                try string(input.kind)
                try append(", \"path\" : ")
                try string(input.path)
                try append(", \"bytes\" : \(input.bytes), \"lines\" : \(input.lines), \"skipped\" : \(input.skipped)")
                if let digest = input.sha256 {
                    try append(", \"sha256\" : ")
                    try string(digest)
                }
                try append(" }")
            }
            try append(inputs.isEmpty ? "]" : "\n    ]")
        }
        try append("\n  },\n  \"shards\" : [")
    }

    deinit { buffer.deallocate() }

    /// Appends one shard record.
    package func add(_ shard: Manifest.Shard) throws(BlocklistError) {
        try append(shardCount == 0 ? "\n    { \"file\" : " : ",\n    { \"file\" : ")
        try string(shard.file)
        try append(
            ", \"index\" : \(shard.index), \"count\" : \(shard.count), \"first\" : \(shard.first), \"last\" : \(shard.last)"
        )
        try append(", \"bytes\" : \(shard.bytes), \"checksum\" : ")
        try string(shard.checksum)
        if let identified = shard.identified { try append(", \"identified\" : \(identified)") }
        if let lowerBound = shard.lowerBound { try append(", \"lowerBound\" : \(lowerBound)") }
        try append(" }")
        shardCount += 1
        totalEntries += shard.count
        totalBytes += shard.bytes
    }

    /// Writes the totals and the closing brace, flushes, and optionally syncs the file.
    package func finish(sync: Bool) throws(BlocklistError) {
        try append(shardCount == 0 ? "],\n" : "\n  ],\n")
        try append("  \"totalEntries\" : \(totalEntries),\n  \"totalBytes\" : \(totalBytes)\n}\n")
        try flush()
        if sync { try file.sync() }
    }

    private func field(_ key: String, string value: String) throws(BlocklistError) {
        try append("  \"\(key)\" : ")
        try string(value)
        try append(",\n")
    }

    private func field(_ key: String, _ value: Int64) throws(BlocklistError) {
        try append("  \"\(key)\" : \(value),\n")
    }

    private func list(_ values: [some CustomStringConvertible]) throws(BlocklistError) {
        try append("[")
        for (offset, value) in values.enumerated() {
            try append(offset == 0 ? " " : ", ")
            try string(value.description)
        }
        try append(values.isEmpty ? "]" : " ]")
    }

    /// A JSON string, escaped by `JSONText`, through one scratch buffer.
    private func string(_ value: String) throws(BlocklistError) {
        scratch.removeAll(keepingCapacity: true)
        JSONText.appendString(value, to: &scratch)
        try appendBytes(scratch)
    }

    private func append(_ text: String) throws(BlocklistError) {
        try appendBytes(text.utf8)
    }

    private func appendBytes(_ bytes: some Collection<UInt8>) throws(BlocklistError) {
        for byte in bytes {
            if used == buffer.count { try flush() }
            buffer[used] = byte
            used += 1
        }
    }

    private func flush() throws(BlocklistError) {
        try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<used]), at: written)
        written += Int64(used)
        used = 0
    }
}
