import Foundation
import TestSupport
import Testing

/// docs/ARCHITECTURE.md's error table against the sources: every error type declared in
/// Sources is a row, in the module that declares it, and what a row carries is of a lower tier,
/// so that carrying runs one way.
@Suite struct ErrorTypeTests {
    struct Row {
        let module: String
        let tier: Int
        let carries: [String]
    }

    /// The table's rows, by type name.
    static func table() throws -> [String: Row] {
        let page = try String(
            contentsOf: packageRoot.appendingPathComponent("docs/ARCHITECTURE.md"),
            encoding: .utf8
        )
        let table = page.components(separatedBy: "| error type | module | tier | what it is | carries |")[1]
            .components(separatedBy: "\n\n")[0]
        var rows: [String: Row] = [:]
        for line in table.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let name = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let carries =
                cells[4] == "nothing"
                ? []
                : cells[4].components(separatedBy: ", ").map {
                    $0.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                }
            rows[name] = Row(module: cells[1], tier: try #require(Int(cells[2]), "\(name)'s tier"), carries: carries)
        }
        return rows
    }

    /// Every type declared as conforming to `Error` under Sources, with the module that declares
    /// it (the handler sources are the ExtensionHandlers target).
    static func declared() throws -> [String: String] {
        let sources = packageRoot.appendingPathComponent("Sources")
        let pattern = try NSRegularExpression(
            pattern:
                #"^\s*(?:(?:public|package|internal|private|fileprivate|final)\s+)*(?:struct|enum|class|actor)\s+(\w+)\s*:[^{]*\b(?:Localized)?Error\b"#,
            options: [.anchorsMatchLines]
        )
        var found: [String: String] = [:]
        let files = FileManager.default.enumerator(atPath: sources.path)!
        while let relative = files.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(relative), encoding: .utf8)
            let module =
                relative.hasPrefix("AppProject/Handlers/")
                ? "ExtensionHandlers" : String(relative.split(separator: "/")[0])
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name = String(text[Range(match.range(at: 1), in: text)!])
                found[name] = module
            }
        }
        return found
    }

    @Test func everyErrorTypeIsARowInItsModule() throws {
        let rows = try Self.table()
        let declared = try Self.declared()
        #expect(declared.count >= 10, "found \(declared.count) error types")
        #expect(Set(rows.keys) == Set(declared.keys), "table \(rows.keys.sorted()), sources \(declared.keys.sorted())")
        for (name, module) in declared {
            #expect(
                rows[name]?.module == module,
                "\(name) is declared in \(module), the table says \(rows[name]?.module ?? "nothing")"
            )
        }
    }

    @Test func carryingRunsOneWay() throws {
        let rows = try Self.table()
        #expect(rows["UpdateError"]?.carries.contains("BlocklistError") == true)
        for (name, row) in rows {
            for carried in row.carries {
                let tier = try #require(rows[carried]?.tier, "\(name) carries \(carried), which is not a row")
                #expect(tier < row.tier, "\(name) (tier \(row.tier)) carries \(carried) (tier \(tier))")
            }
        }
    }

    /// No tier 1 or 0 error is built to carry a tier 2 error: `BlocklistError(..., underlying:)`
    /// is never given an `UpdateError`, `MessageFilterError` or `CallDirectoryError`.
    @Test func noLowerErrorIsBuiltAroundAHigherOne() throws {
        let rows = try Self.table()
        let higher = rows.filter { $0.value.tier == 2 }.map(\.key)
        let sources = packageRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)!
        var checked = 0
        while let relative = files.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let lines = try String(contentsOf: sources.appendingPathComponent(relative), encoding: .utf8)
                .split(separator: "\n").map(String.init)
            for (index, line) in lines.enumerated() where line.contains("catch let error as ") {
                // A catch clause for a tier 2 type, followed within its block by a BlocklistError
                // that carries the caught error.
                guard let type = higher.first(where: { line.contains("catch let error as \($0)") }) else { continue }
                checked += 1
                let block = lines[(index + 1)..<min(lines.count, index + 6)].prefix { !$0.contains("} catch") }
                for statement in block where statement.contains("BlocklistError(") {
                    #expect(
                        !statement.contains("underlying: error"),
                        "\(relative):\(index + 2) wraps a \(type) in a BlocklistError"
                    )
                }
            }
        }
        #expect(checked >= 1, "no catch of a tier 2 error was read")
    }
}
