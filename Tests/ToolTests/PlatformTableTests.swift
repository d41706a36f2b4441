import Foundation
import TestSupport
import Testing

/// docs/PLATFORM.md gives each SDK declaration the handlers use as Apple declares it; the
/// stand-ins the handlers compile against here must carry exactly those declarations, so that a
/// handler that compiles here compiles against the SDK (issue 44).
@Suite struct PlatformTableTests {
    static let table = (try? String(contentsOfFile: packageRoot.path + "/docs/PLATFORM.md", encoding: .utf8)) ?? ""

    /// The Swift declarations of a framework's section: each code span of a row's first cell
    /// that declares something.
    static func declarations(of framework: String) -> [String] {
        guard let start = table.range(of: "\n## " + framework + "\n") else { return [] }
        let rest = table[start.upperBound...]
        let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        var found: [String] = []
        for line in section.split(separator: "\n") where line.hasPrefix("| ") {
            let cell = line.dropFirst(2).components(separatedBy: " | ")[0]
            for (index, span) in cell.components(separatedBy: "`").enumerated() where index % 2 == 1 {
                if ["func ", "var ", "weak var ", "class var ", "typealias ", "protocol ", "init(", "struct "].contains(
                    where: span.hasPrefix
                ) {
                    found.append(span)
                }
            }
        }
        return found
    }

    /// A declaration as compared: access and override modifiers dropped, accessors dropped,
    /// white space collapsed, none inside parentheses or before a colon.
    static func normalized(_ text: String) -> String {
        var text = text.replacingOccurrences(of: #"\{ get( set)? \}"#, with: "", options: .regularExpression)
        for word in ["open ", "public ", "override ", "final "] {
            text = text.replacingOccurrences(of: word, with: "")
        }
        text = text.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        for (spaced, tight) in [(" :", ":"), ("( ", "("), (" )", ")"), (", )", ")")] {
            text = text.replacingOccurrences(of: spaced, with: tight)
        }
        return text.trimmingCharacters(in: .whitespaces)
    }

    @Test(arguments: [
        ("CallKit", "CallKit", 15), ("IdentityLookup (SMS and Call Reporting)", "IdentityLookup", 15),
        ("os", "LoggerStandIn", 6),
    ])
    func theStandInsCarryTheTablesDeclarations(section: String, module: String, least: Int) throws {
        let declarations = Self.declarations(of: section)
        #expect(declarations.count >= least, "docs/PLATFORM.md has \(declarations.count) declarations for \(section)")
        let standIn = try String(
            contentsOfFile: packageRoot.path + "/Tests/SDKStandIns/\(module)/\(module).swift",
            encoding: .utf8
        )
        let source = Self.normalized(standIn)
        for declaration in declarations {
            // An Objective-C protocol's requirement is imported twice, with a completion handler
            // and as `async`; a conforming type implements one, and a Swift protocol can declare
            // only one of them: the stand-in's protocols carry the completion form.
            if declaration.hasPrefix("func handle(") && declaration.contains(" async ") { continue }
            #expect(source.contains(Self.normalized(declaration)), "the \(module) stand-in lacks \(declaration)")
        }
    }

    /// The comparison fails on a declaration that differs from the stand-in's by one attribute.
    @Test func aMissingSendableIsFound() throws {
        let standIn = Self.normalized(
            "open func completeRequest(completionHandler completion: ((Bool) -> Void)? = nil) {}"
        )
        #expect(
            !standIn.contains(
                Self.normalized("func completeRequest(completionHandler completion: (@Sendable (Bool) -> Void)? = nil)")
            )
        )
    }
}
