import Foundation
import TestSupport
import Testing

/// docs/ARCHITECTURE.md's module table is the module graph: every library target of Package.swift
/// has a row, each row's imports name exactly the target's dependencies within the package, and
/// each row says which extension (or the tools) it serves.
@Suite struct ArchitectureTests {
    static let root = packageRoot

    /// Package.swift as SwiftPM reads it (`swift package dump-package`, which evaluates only the
    /// root manifest; a scratch path of its own keeps it off the running build's lock).
    static func manifest() throws -> [[String: Any]] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("dump-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let result = try runProcess(
            "/usr/bin/env",
            ["swift", "package", "--package-path", root.path, "--scratch-path", scratch, "dump-package"]
        )
        try #require(result.status == 0, "swift package dump-package failed")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        return try #require(json["targets"] as? [[String: Any]])
    }

    /// Each library target of Package.swift and the package targets it depends on (products of
    /// other packages are not package targets).
    static func packageGraph() throws -> [String: Set<String>] {
        let targets = try manifest()
        let names = Set(targets.compactMap { $0["name"] as? String })
        var graph: [String: Set<String>] = [:]
        for target in targets where target["type"] as? String == "regular" {
            let name = try #require(target["name"] as? String)
            var dependencies: Set<String> = []
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                let reference = (dependency["byName"] ?? dependency["target"]) as? [Any]
                if let dependencyName = reference?.first as? String, names.contains(dependencyName) {
                    dependencies.insert(dependencyName)
                }
            }
            graph[name] = dependencies
        }
        return graph
    }

    /// Where each target's sources are, as Package.swift says (`path`, `exclude`).
    static func layout() throws -> [String: (path: String?, exclude: [String])] {
        var layout: [String: (path: String?, exclude: [String])] = [:]
        for target in try manifest() {
            guard let name = target["name"] as? String else { continue }
            layout[name] = (target["path"] as? String, target["exclude"] as? [String] ?? [])
        }
        return layout
    }

    /// The modules `module`'s sources import, indented ones (inside `#if`) included.
    static func imports(of module: String, layout: [String: (path: String?, exclude: [String])] = [:]) throws
        -> Set<String>
    {
        var imported: Set<String> = []
        let place = layout[module]
        for (_, text) in try PortableModuleTests.sources(of: module, path: place?.path, excluding: place?.exclude ?? [])
        {
            for line in PortableModuleTests.code(text) {
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                    words[..<index].allSatisfy({ $0.hasPrefix("@") || ["public", "package", "internal"].contains($0) })
                else { continue }
                imported.insert(String(words[index + 1]))
            }
        }
        return imported
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
            #if !os(Linux)
                // The SDK stand-ins and the handlers they compile are targets on Linux only.
                if cells[0] == "the tests (Linux)" { continue }
            #endif
            #expect(
                [
                    "Call Directory", "set storage", "Message Filter", "Notification Service", "distribution",
                    "the tools", "the tests", "the tests (Linux)", "every module",
                ]
                .contains(cells[0]),
                "\(name) serves \(cells[0])"
            )
            graph[name] = Set(imports)
        }
        return graph
    }

    /// Each library target imports exactly the package targets Package.swift gives it: no
    /// dependency unused, and no module reached through another's re-export.
    @Test func importLinesMatchPackageSwift() throws {
        let package = try Self.packageGraph()
        let layout = try Self.layout()
        let modules = Set(package.keys).union(["CZlib", "CSQLite"])
        #expect(package.count >= 10)
        for (name, dependencies) in package {
            let imported = try Self.imports(of: name, layout: layout).intersection(modules)
            #expect(
                imported == dependencies,
                "\(name) imports \(imported.sorted()); Package.swift gives \(dependencies.sorted())"
            )
        }
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
