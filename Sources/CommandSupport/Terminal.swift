/// Human output helpers: stderr, TTY detection, number formatting.
import BlocklistCore
internal import LibC
import ListImport

package enum Terminal {
    package static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Writes `text` to standard error, unbuffered.
    package static func error(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var done = 0
            while done < bytes.count {
                let n = write(2, bytes.baseAddress! + done, bytes.count - done)
                if n <= 0 { return }
                done += n
            }
        }
    }

    /// A decimal with `places` digits after the point, its whole part grouped: 1,840.1.
    package static func fixed(_ value: Double, _ places: Int) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (value * scale).rounded()
        let whole = Int64(scaled / scale)
        let fraction = Int64((abs(scaled) - Double(abs(whole)) * scale).rounded())
        guard places > 0 else { return Figures.grouped(whole) }
        let text = String(fraction)
        return (value < 0 && whole == 0 ? "-" : "") + Figures.grouped(whole) + "."
            + String(repeating: "0", count: places - text.count) + text
    }

    /// 7340032 → "7.0 MiB".
    package static func bytes(_ value: Int64) -> String {
        if value < 1024 { return "\(Figures.grouped(value)) B" }
        if value < 1024 * 1024 { return fixed(Double(value) / 1024, 1) + " KiB" }
        return fixed(Double(value) / 1_048_576, 1) + " MiB"
    }

    /// The line `generate` draws while it reads its lists: the file, its lines and the numbers
    /// kept so far, the rate, and, for a regular file (whose size is known; not a pipe), a bar,
    /// the share read and the time left at the rate so far.
    ///
    /// - Parameters:
    ///   - fileSeconds: seconds since this file's first line.
    ///   - runSeconds: seconds since the first file's first line.
    package static func readingLine(_ progress: ReadingProgress, fileSeconds: Double, runSeconds: Double) -> String {
        let rate = runSeconds > 0 ? Double(progress.totalLines) / runSeconds : 0
        var text =
            "reading \(progress.name): \(Figures.counted(progress.lines, "line")), "
            + "\(Figures.counted(progress.kept, "number")) kept"
        if rate > 0 { text += ", \(Figures.grouped(Int64(rate))) lines/s" }
        guard let size = progress.size, size > 0 else { return text }
        // Read ahead (gzip reads its input in blocks): the share is of bytes handed over, and a
        // finished file is whole.
        let done = progress.finished ? size : min(progress.bytesRead, size)
        text += ", \(done * 100 / size)%"
        if done > 0, done < size, fileSeconds > 0 {
            let left = Double(size - done) / (Double(done) / fileSeconds)
            text += ", ~\(Figures.grouped(Int64(left.rounded(.up)))) s left"
        }
        return bar(done: done, total: size, width: 20) + " " + text
    }

    /// A one-line progress bar, redrawn in place.
    package static func progressBar(done: Int64, total: Int64, width: Int = 30, label: String) -> String {
        progressLines([bar(done: done, total: total, width: width) + " " + label])
    }

    /// "[#####-----]" for `done` of `total`.
    package static func bar(done: Int64, total: Int64, width: Int) -> String {
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let filled = Int((fraction * Double(width)).rounded(.down))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
    }

    /// Lines drawn in place: each is cleared to its end and the cursor returns to the first one.
    package static func progressLines(_ lines: [String]) -> String {
        "\r" + lines.joined(separator: "\u{1B}[K\n") + "\u{1B}[K"
            + (lines.count > 1 ? "\u{1B}[\(lines.count - 1)A\r" : "")
    }

    /// Erases what `progressLines` drew.
    package static let clearProgress = "\r\u{1B}[J"
}

extension Duration {
    package var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}

/// `text` padded with spaces to `width` columns, on the left with `right` (then followed by one
/// space), for tables.
package func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return right ? fill + text + " " : text + fill
}
