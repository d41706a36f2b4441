/// The failures an app's extensions met, kept in the App Group for the app to show: an extension
/// runs where nobody sees its errors, so each one it cannot recover from is recorded here, with
/// when and which extension.
///
/// One small file, `failures.log`: a line per failure (`SECONDS<TAB>EXTENSION<TAB>SENTENCE`), the
/// newest ``keep`` lines, rewritten beside its place and renamed, so that a kill leaves the old
/// file or the new one. Any process of the app may record; two at once may lose one line of the
/// two, never the file.
public enum ExtensionFailures {
    /// One recorded failure.
    public struct Entry: Sendable, Equatable {
        /// When, in seconds since 1970.
        public var time: Int64
        /// Which extension, as it named itself (its shard's file name, `MessageFilter`, …).
        public var source: String
        /// The error's sentence.
        public var sentence: String

        public init(time: Int64, source: String, sentence: String) {
            self.time = time
            self.source = source
            self.sentence = sentence
        }
    }

    /// How many lines the file keeps, the newest.
    public static let keep = 100

    /// `DIRECTORY/failures.log`.
    public static func path(in directory: String) -> String { AppGroupLayout.failures(in: directory) }

    /// Records a failure. Recording never throws: an extension that cannot write its failure has
    /// no one else to tell.
    public static func record(_ sentence: String, source: String, time: Int64, in directory: String) {
        var entries = read(in: directory)
        entries.append(Entry(time: time, source: oneLine(source), sentence: oneLine(sentence)))
        let lines = entries.suffix(keep).map { "\($0.time)\t\($0.source)\t\($0.sentence)\n" }.joined()
        let path = path(in: directory)
        let aside = directory + "/.failures.log.new"
        FileDescriptor.removeCreated(aside)
        do throws(BlocklistError) {
            try FileDescriptor.writeNewFile(aside, Array(lines.utf8), sync: false)
            try FileDescriptor.rename(aside, over: path)
        } catch {
            FileDescriptor.removeCreated(aside)
        }
    }

    /// The recorded failures, oldest first; none when there is no file or it cannot be read. A
    /// line that is not a record is skipped.
    public static func read(in directory: String) -> [Entry] {
        guard let bytes = try? FileDescriptor.readWholeFile(path(in: directory), limit: 1 << 20) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let time = Int64(fields[0]) else { return nil }
            return Entry(time: time, source: String(fields[1]), sentence: String(fields[2]))
        }
    }

    /// Removes the record once the app has shown it.
    public static func clear(in directory: String) {
        FileDescriptor.removeCreated(path(in: directory))
    }

    /// `text` with its tabs and line breaks made spaces, and at most 1,000 UTF-8 bytes.
    private static func oneLine(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            let kept: Unicode.Scalar = scalar.properties.generalCategory == .control ? " " : scalar
            bytes += UTF8.width(kept)
            if bytes > 1000 { break }
            scalars.append(kept)
        }
        return String(scalars)
    }
}
