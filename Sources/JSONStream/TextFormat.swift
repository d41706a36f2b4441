/// What a text input is when it is not UTF-8 text: the one reading of a file's first bytes that
/// every reader of lists, numbers, rules and JSON shares.
package enum TextFormat {
    /// What a file that starts with `head` (its first 8 bytes or more, or all of a shorter file) is, when
    /// it is neither text nor gzip but something people export or compress lists into: its
    /// magic bytes, and the command that makes it readable. Otherwise nil.
    package static func unreadable(_ first: some Collection<UInt8>, name: String) -> (what: String, fix: String)? {
        let head = Array(first.prefix(8))
        func starts(_ bytes: [UInt8]) -> Bool { head.starts(with: bytes) }
        // The file's name in the commands, when a shell takes it as it is.
        let plain = name.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
                || Array("/._-+,=:@%".utf8).contains($0)
        }
        let file = plain && !name.isEmpty ? name : "FILE"
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) {
            return (
                "xz-compressed (it starts with xz's magic bytes, whatever its name says)",
                "decompress it first (xz -dc \(file) > \(file).txt)"
            )
        }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) {
            return (
                "zstd-compressed (it starts with zstd's magic bytes)",
                "decompress it first (zstd -dc \(file) > \(file).txt)"
            )
        }
        if starts([0x42, 0x5A, 0x68]), head.count >= 4, (0x31...0x39).contains(head[3]) {
            return (
                "bzip2-compressed (it starts with BZh)",
                "decompress it first (bzip2 -dc \(file) > \(file).txt)"
            )
        }
        if starts([0x50, 0x4B, 0x03, 0x04]) {
            return ("a zip archive (an .xlsx or .zip file)", "export the sheet as CSV, or unzip it, and give that file")
        }
        if head.count >= 2, head[0] == 0x78, [0x01, 0x9C, 0xDA].contains(head[1]) {
            return ("a raw zlib stream", "compress it with gzip instead, or give it uncompressed")
        }
        // A byte-order mark, then the zeros of ASCII in 16- or 32-bit units (UTF-32's mark
        // starts as UTF-16LE's, so it is tried first).
        let bytes = head
        let encodings: [(mark: [UInt8]?, zeros: [Bool]?, name: String, iconv: String)] = [
            ([0xFF, 0xFE, 0x00, 0x00], nil, "UTF-32LE", "UTF-32"),
            ([0x00, 0x00, 0xFE, 0xFF], nil, "UTF-32BE", "UTF-32"),
            ([0xFF, 0xFE], nil, "UTF-16LE", "UTF-16"), ([0xFE, 0xFF], nil, "UTF-16BE", "UTF-16"),
            (nil, [false, true, true, true], "UTF-32LE", "UTF-32LE"),
            (nil, [true, true, true, false], "UTF-32BE", "UTF-32BE"),
            (nil, [false, true, false, true], "UTF-16LE", "UTF-16LE"),
            (nil, [true, false, true, false], "UTF-16BE", "UTF-16BE"),
        ]
        for encoding in encodings {
            if let mark = encoding.mark, starts(mark) {
                return (
                    "\(encoding.name) text (it starts with a byte-order mark)",
                    "convert it to UTF-8 first (iconv -f \(encoding.iconv) -t UTF-8 \(file) > \(file).txt)"
                )
            }
            if let zeros = encoding.zeros, bytes.count >= 4, zip(bytes, zeros).allSatisfy({ ($0 == 0) == $1 }) {
                return (
                    "\(encoding.name) text (every \(encoding.name.hasPrefix("UTF-32") ? "character is four bytes, three of them 0" : "other byte is 0"))",
                    "convert it to UTF-8 first (iconv -f \(encoding.iconv) -t UTF-8 \(file) > \(file).txt)"
                )
            }
        }
        return nil
    }

    /// The sentence for a JSON input that is not UTF-8 text (UTF-16 or UTF-32, compressed, an
    /// archive), naming what it is and the command that converts it; nil for anything else.
    package static func notUTF8JSON(_ bytes: some Collection<UInt8>, name: String) -> String? {
        guard let format = unreadable(bytes, name: name) else { return nil }
        return "\(name) is \(format.what), and JSON is read as UTF-8: \(format.fix); nothing was read."
    }
}
