import BlocklistCore
import UpdateCore

/// `index.html`, the publication's page for people (docs/USAGE.md, "The publication's page"):
/// `publish` writes it beside the signed files on every run, and a server or a CDN serves it
/// like them. Phones never read it.
///
/// One static file: the current generation, its numbers, labels and bytes; when each signed
/// file expires; every generation the publication holds with what it changed and the bytes of
/// its deltas; a chart of the set's size and the delta bytes across generations, in inline SVG.
/// No script, and nothing loaded from elsewhere (its Content-Security-Policy says so). Every
/// figure a program may want carries its exact value in a `data-value` attribute beside the
/// grouped text, so a test (or a monitor) reads the page as `publication status --json` reads
/// the files.
package enum PublicationPage {
    package static let fileName = "index.html"

    /// The first line of every page publish writes: what proves a later publish the file is its
    /// own to replace (an `index.html` without it is someone else's, and stays).
    package static let signature =
        "<!DOCTYPE html>\n<!-- written by blocklist publish, which rewrites it on every run -->\n"

    /// The page of `status`, as of `now` (seconds since 1970).
    package static func render(_ status: PublicationStatus, now: Int64) -> [UInt8] {
        var html = signature
        let current = status.generations.last { $0.generation == status.generation }
        html += """
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <title>Block list publication: generation \(status.generation)</title>
            <style>
            body { font: 15px/1.45 -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d1d1f; }
            h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
            table { border-collapse: collapse; width: 100%; } th, td { padding: .3rem .6rem; border-bottom: 1px solid #ddd; }
            th { text-align: left; font-weight: 600; } td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
            .muted { color: #6e6e73; } .soon { color: #b3261e; font-weight: 600; }
            .summary { display: flex; flex-wrap: wrap; gap: 1.5rem; margin: 1rem 0; }
            .summary div { min-width: 9rem; } .summary b { display: block; font-size: 1.4rem; }
            svg text { font-size: 11px; fill: #444; }
            </style>
            </head>
            <body>
            <h1>Block list publication</h1>
            <p class="muted">Generation <span data-field="generation" data-value="\(status.generation)">\(status.generation)</span>; this page was written at \(PublicationStatus.formatTime(now)) by <code>blocklist publish</code>. Phones read the signed files beside it, never this page.</p>

            """
        if let current {
            html += "<div class=\"summary\" data-generation=\"\(current.generation)\">\n"
            html += summaryFigure("numbers blocked", "numbers", current.numbers)
            html += summaryFigure("numbers labelled", "labels", current.labels)
            html += summaryFigure(
                current.shards == 1 ? "shard (extension)" : "shards (extensions)",
                "shards",
                Int64(current.shards)
            )
            html += summaryFigure("bytes of shards", "bytes", current.bytes)
            html += "</div>\n"
        }
        html += signedFiles(status, now: now)
        html += chart(status.generations)
        html += generationTable(status.generations)
        html += """
            <p class="muted">A phone reads <code>timestamp.json</code>, then the snapshot it names, then for each shard that changed since the generation it holds either the delta from that generation, when the publication has one, or the whole shard; each file is checked against its signed length and SHA-256.</p>
            </body>
            </html>

            """
        return Array(html.utf8)
    }

    private static func summaryFigure(_ caption: String, _ field: String, _ value: Int64) -> String {
        "<div><b data-field=\"\(field)\" data-value=\"\(value)\">\(Figures.grouped(value))</b>\(caption)</div>\n"
    }

    /// When each signed file expires: after that, phones refuse the publication.
    private static func signedFiles(_ status: PublicationStatus, now: Int64) -> String {
        var html = """
            <h2>Signed files</h2>
            <table>
            <tr><th>File</th><th>Of</th><th>Expires (UTC)</th><th>Left at writing</th><th>Renewed by</th></tr>

            """
        for role in status.roles {
            let file =
                role.name == "root"
                ? "root.json" : role.name == "snapshot" ? "\(role.version)/snapshot.json" : "timestamp.json"
            let of = role.name == "root" ? "version \(role.version)" : "generation \(role.version)"
            let renewal =
                role.name == "root"
                ? "<code>blocklist keys rotate</code>"
                : role.name == "snapshot" ? "a publish past half its lifetime" : "every publish"
            let left = role.expires - now
            let soon = left < (role.name == "timestamp" ? 6 * 3_600 : 7 * 86_400)
            html += """
                <tr data-role="\(role.name)"><td><code>\(file)</code></td><td data-field="version" data-value="\(role.version)">\(of)</td>\
                <td data-field="expires" data-value="\(role.expires)">\(PublicationStatus.formatTime(role.expires))</td>\
                <td\(soon ? " class=\"soon\"" : "")>\(PublicationStatus.formatDuration(left))</td><td>\(renewal)</td></tr>

                """
        }
        return html + "</table>\n"
    }

    /// The set's entries (numbers and labels) as a line, and each generation's delta bytes as
    /// bars, on two scales; inline SVG.
    private static func chart(_ generations: [PublicationStatus.Generation]) -> String {
        guard !generations.isEmpty else { return "" }
        let width = 720
        let height = 260
        let left = 80
        let right = 80
        let top = 20
        let bottom = 40
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let entries = generations.map { $0.numbers + $0.labels }
        let maxEntries = max(1, entries.max() ?? 1)
        let maxDelta = max(1, generations.map(\.deltaBytes).max() ?? 1)
        let anyDelta = generations.contains { $0.deltaBytes > 0 }
        let step = Double(plotWidth) / Double(generations.count)
        func x(_ index: Int) -> Int { left + Int((Double(index) + 0.5) * step) }
        func y(_ value: Int64, _ maximum: Int64) -> Int {
            top + plotHeight - Int(Double(plotHeight) * Double(value) / Double(maximum))
        }
        var svg = """
            <h2>Size across generations</h2>
            <svg role="img" aria-labelledby="chart-title" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" xmlns="http://www.w3.org/2000/svg">
            <title id="chart-title">Entries in the set (line, left scale) and delta bytes from the generation before (bars, right scale)</title>
            <line x1="\(left)" y1="\(top + plotHeight)" x2="\(left + plotWidth)" y2="\(top + plotHeight)" stroke="#999"/>
            <text x="\(left - 6)" y="\(top + 4)" text-anchor="end">\(Figures.grouped(maxEntries))</text>
            <text x="\(left - 6)" y="\(top + plotHeight)" text-anchor="end">0</text>
            <text x="\(left)" y="\(height - 6)">\(anyDelta ? "entries (line) · delta bytes (bars)" : generations.count == 1 ? "entries (line) · one generation so far" : "entries (line) · no deltas: every change was published as whole shards")</text>

            """
        if anyDelta {
            svg += """
                <text x="\(left + plotWidth + 6)" y="\(top + 4)">\(Figures.grouped(maxDelta)) B</text>
                <text x="\(left + plotWidth + 6)" y="\(top + plotHeight)">0 B</text>

                """
        }
        let barWidth = max(2, Int(step * 0.5))
        for (index, generation) in generations.enumerated() where generation.deltaBytes > 0 {
            let top = y(generation.deltaBytes, maxDelta)
            svg += """
                <rect data-generation="\(generation.generation)" data-delta-bytes="\(generation.deltaBytes)" x="\(x(index) - barWidth / 2)" y="\(top)" width="\(barWidth)" height="\(max(1, y(0, maxDelta) - top))" fill="#8ecae6"><title>generation \(generation.generation): \(Figures.grouped(generation.deltaBytes)) delta bytes</title></rect>

                """
        }
        let points = generations.indices.map { "\(x($0)),\(y(entries[$0], maxEntries))" }.joined(separator: " ")
        svg += "<polyline points=\"\(points)\" fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"2\"/>\n"
        for (index, generation) in generations.enumerated() {
            svg += """
                <circle data-generation="\(generation.generation)" data-entries="\(entries[index])" cx="\(x(index))" cy="\(y(entries[index], maxEntries))" r="4" fill="#1f6feb"><title>generation \(generation.generation): \(Figures.grouped(entries[index])) entries</title></circle>
                <text x="\(x(index))" y="\(top + plotHeight + 16)" text-anchor="middle">\(generation.generation)</text>

                """
        }
        return svg + "</svg>\n"
    }

    /// Every generation held, newest first, with what it changed since the one before it.
    private static func generationTable(_ generations: [PublicationStatus.Generation]) -> String {
        var html = """
            <h2>Generations</h2>
            <table>
            <tr><th>Generation</th><th>Numbers</th><th>Labels</th><th>Shards</th><th>Bytes</th><th>Changed since</th><th>Numbers +/−</th><th>Labels +/−</th><th>Changed shards</th><th>Delta bytes</th><th>Snapshot expires (UTC)</th></tr>

            """
        func cell(_ field: String, _ value: Int64, prefix: String = "") -> String {
            "<td class=\"n\" data-field=\"\(field)\" data-value=\"\(value)\">\(prefix)\(Figures.grouped(value))</td>"
        }
        for generation in generations.reversed() {
            html += "<tr data-generation=\"\(generation.generation)\"><td>\(generation.generation)</td>"
            html += cell("numbers", generation.numbers) + cell("labels", generation.labels)
            html += cell("shards", Int64(generation.shards)) + cell("bytes", generation.bytes)
            if let previous = generation.previous {
                html += "<td data-field=\"previous\" data-value=\"\(previous)\">\(previous)</td>"
                html += "<td class=\"n\">" + signed("added", generation.changes.added, "+")
                html += " / " + signed("removed", generation.changes.removed, "−") + "</td>"
                html += "<td class=\"n\">" + signed("labelsAdded", generation.changes.labelsAdded, "+")
                html += " / " + signed("labelsRemoved", generation.changes.labelsRemoved, "−") + "</td>"
                let shards = generation.changedShards.map(String.init).joined(separator: ", ")
                html +=
                    "<td data-field=\"changedShards\" data-value=\"\(shards)\">\(Self.ranges(generation.changedShards))</td>"
                html += cell("deltaBytes", generation.deltaBytes)
            } else {
                html += "<td class=\"muted\" colspan=\"5\">the oldest generation held</td>"
            }
            html +=
                "<td data-field=\"expires\" data-value=\"\(generation.expires)\">\(PublicationStatus.formatTime(generation.expires))</td></tr>\n"
        }
        return html + "</table>\n"
    }

    /// Shard numbers as runs: "none", "3", "1–4, 7".
    static func ranges(_ shards: [Int]) -> String {
        guard var start = shards.first else { return "none" }
        var runs: [String] = []
        var last = start
        for shard in shards.dropFirst() + [Int.min] {
            if shard == last + 1 {
                last = shard
                continue
            }
            runs.append(start == last ? "\(start)" : "\(start)–\(last)")
            (start, last) = (shard, shard)
        }
        return runs.joined(separator: ", ")
    }

    private static func signed(_ field: String, _ value: Int64, _ sign: String) -> String {
        "<span data-field=\"\(field)\" data-value=\"\(value)\">\(sign)\(Figures.grouped(value))</span>"
    }
}
