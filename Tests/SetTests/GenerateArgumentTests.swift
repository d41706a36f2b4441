import SetStorage
import TestSupport
import Testing

@testable import BlocklistCore
@testable import CommandSupport

/// generate's argument parser against a model of its grammar written apart from it: random
/// argument vectors from the tokens users type (every option, in both forms, with good, bad,
/// negative, empty and dash values, unknown options and stray words).
@Suite struct GenerateArgumentTests {
    static let flags = ["no-exclusions", "skip-invalid", "no-sync", "json", "force"]
    static let values = [
        "pattern", "exclude", "range-size", "capacity", "numbers", "allow", "allow-pattern", "labels", "list",
        "default-country", "layout", "output",
    ]
    static let numeric: Set = ["range-size", "capacity", "default-country"]
    static let files: Set = ["numbers", "allow", "labels", "list"]
    static let words = [
        "+1###", "+2##", "1###", "+82x0###", "+0##", "000", "5", "-5", "0", "abc", "-", "", "x", "n.txt", "range",
        "packed", "--json",
        "99999999999999999999", "+33", "=", "-o",
    ]

    enum Expected: Equatable { case help, version, refused, parsed }

    /// What the grammar says of `vector`, ignoring the spec's own validation (checked after).
    static func model(_ vector: [String]) -> Expected {
        if vector.contains("--help") || vector.contains("-h") { return .help }
        if vector.contains("--version") { return .version }
        var index = 0
        while index < vector.count {
            let argument = vector[index]
            index += 1
            var name: String
            var inline: String?
            if argument == "--" { return index < vector.count ? .refused : .parsed }
            if argument.hasPrefix("-o=") {
                name = "output"
                inline = String(argument.dropFirst(3))
            } else if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[argument.index(argument.startIndex, offsetBy: 2)..<equals])
                inline = String(argument[argument.index(after: equals)...])
            } else if argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
            } else if argument == "-o" {
                name = "output"
            } else {
                return .refused
            }
            if flags.contains(name) {
                if inline != nil { return .refused }
                continue
            }
            guard values.contains(name) else { return .refused }
            let value: String
            if let inline {
                value = inline
            } else {
                guard index < vector.count else { return .refused }
                value = vector[index]
                index += 1
                if value.hasPrefix("-") && !numeric.contains(name) && !(files.contains(name) && value == "-") {
                    return .refused
                }
            }
            if numeric.contains(name),
                Int64(value.hasPrefix("+") && name == "default-country" ? String(value.dropFirst()) : value) == nil
            {
                return .refused
            }
            if name == "pattern" || name == "allow-pattern", (try? BlockPattern(parsing: value)) == nil {
                return .refused
            }
            if name == "layout" && value != "range" && value != "packed" { return .refused }
        }
        return .parsed
    }

    @Test func parserAgreesWithAModelOfItsGrammar() {
        var random = SplitMix64(state: 0x6E4E)
        var counts: [Expected: Int] = [:]
        for _ in 0..<20_000 {
            var vector: [String] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0: vector.append("--" + Self.flags.randomElement(using: &random)!)
                case 1...4: vector.append("--" + Self.values.randomElement(using: &random)!)
                case 5:
                    vector.append(
                        "--" + Self.values.randomElement(using: &random)! + "=" + Self.words.randomElement(
                            using: &random
                        )!
                    )
                case 6:
                    vector.append(
                        ["--help", "-h", "--version", "--bogus", "-x", "-o", "--", "-o=x", "-o="].randomElement(
                            using: &random
                        )!
                    )
                default: vector.append(Self.words.randomElement(using: &random)!)
                }
            }
            var expected = Self.model(vector)
            let result = GenerateCommand.parse(vector)
            // The model reads the grammar; what passes it must then be a valid spec to run.
            if expected == .parsed {
                var options = GenerateOptions()
                var index = 0
                // Rebuild the spec the independent way: only patterns and numbers matter to it.
                func value(_ at: inout Int) -> String {
                    let argument = vector[at]
                    if let equals = argument.firstIndex(of: "="), argument.hasPrefix("-") {
                        return String(argument[argument.index(after: equals)...])
                    }
                    at += 1
                    return vector[at]
                }
                var valid = true
                while index < vector.count {
                    let argument = vector[index]
                    if argument == "--" { break }
                    let name =
                        argument == "-o" || argument.hasPrefix("-o=")
                        ? "output" : String(argument.dropFirst(2).prefix { $0 != "=" })
                    if Self.values.contains(name) {
                        let text = value(&index)
                        switch name {
                        case "pattern": try? options.addPattern(text)
                        case "allow-pattern": try? options.addAllowPattern(text)
                        case "exclude": options.exclusions.append(text)
                        case "range-size": options.rangeSize = Int64(text)!
                        case "capacity": options.capacity = Int64(text)!
                        case "default-country":
                            options.defaultCountry = Int64(text.hasPrefix("+") ? String(text.dropFirst()) : text)!
                        case "layout": options.layout = Manifest.Layout(rawValue: text)!
                        case "output": options.output = text
                        case "numbers": options.numbers.append(text)
                        case "allow": options.allow.append(text)
                        case "labels": options.labels.append(text)
                        default: options.lists.append(text)
                        }
                    } else {
                        switch name {
                        case "no-exclusions": options.noExclusions = true
                        case "skip-invalid": options.skipInvalid = true
                        case "no-sync": options.noSync = true
                        case "json": options.json = true
                        default: options.force = true
                        }
                    }
                    index += 1
                }
                if options.output.isEmpty || options.listPaths.filter({ $0 == "-" }).count > 1
                    || (try? options.spec()) == nil
                {
                    valid = false
                }
                if !valid { expected = .refused }
                if valid, case .success(.run(let parsed)) = result {
                    #expect(parsed == options, "\(vector)")
                }
            }
            counts[expected, default: 0] += 1
            switch (expected, result) {
            case (.help, .success(.help)), (.version, .success(.version)), (.refused, .failure),
                (.parsed, .success(.run)):
                break
            default: Issue.record("\(vector): the model says \(expected), the parser \(result)")
            }
        }
        // Every kind of outcome came up often enough to mean something.
        for kind in [Expected.help, .version, .refused, .parsed] {
            #expect(counts[kind, default: 0] > 300, "\(kind): \(counts)")
        }
    }
}
