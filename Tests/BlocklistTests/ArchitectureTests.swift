import Foundation
import Testing

/// docs/ARCHITECTURE.md's module table is the module graph: every library target of Package.swift
/// has a row, each row's imports name exactly the target's dependencies within the package, and
/// each row says which extension (or the tools) it serves.
@Suite struct ArchitectureTests {
    static let root = PortableModuleTests.packageRoot

    /// Each library target of Package.swift and the package targets it depends on.
    static func packageGraph() throws -> [String: Set<String>] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var graph: [String: Set<String>] = [:]
        // `.target(` blocks: their name, then their dependencies' string literals (products are
        // written `.product(name: …)` and are not package targets).
        let blocks = manifest.components(separatedBy: ".target(").dropFirst()
        for block in blocks {
            let body = block.components(separatedBy: "\n        ),")[0] + "\n"
            guard let name = body.firstMatch(of: /name: "([^"]+)"/)?.1 else { continue }
            var dependencies: Set<String> = []
            if let list = body.firstMatch(of: /dependencies: \[([^\]]*)\]/)?.1 {
                let targets = String(list).replacing(/\.product\([^)]*\)/, with: "")
                for match in targets.matches(of: /"([A-Za-z-]+)"/) { dependencies.insert(String(match.1)) }
            }
            graph[String(name)] = dependencies
        }
        return graph
    }

    /// The module table's rows: module name and the package modules its imports column names.
    static func documentedGraph(known: Set<String>) throws -> [String: Set<String>] {
        let page = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let table = page.components(separatedBy: "| serves | module | its one job | imports |")[1].components(
            separatedBy: "\n\n"
        )[0]
        var graph: [String: Set<String>] = [:]
        for line in table.split(separator: "\n") where !line.hasPrefix("|---") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let imports = cells.last!.components(separatedBy: ", ").filter { known.contains($0) }
            #expect(
                [
                    "Call Directory", "set storage", "Message Filter", "Notification Service", "distribution",
                    "the tools",
                ]
                .contains(cells[0]),
                "\(name) serves \(cells[0])"
            )
            graph[name] = Set(imports)
        }
        return graph
    }

    @Test func theModuleTableMatchesPackageSwift() throws {
        let package = try Self.packageGraph()
        let documented = try Self.documentedGraph(known: Set(package.keys).union(package.values.flatMap { $0 }))
        #expect(package.count >= 10, "read \(package.count) targets from Package.swift")
        #expect(
            Set(documented.keys) == Set(package.keys),
            "documented \(documented.keys.sorted()), Package.swift \(package.keys.sorted())"
        )
        for (name, dependencies) in package {
            #expect(
                documented[name] == dependencies,
                "\(name): docs say \(documented[name]?.sorted() ?? []), Package.swift \(dependencies.sorted())"
            )
        }
    }
}
