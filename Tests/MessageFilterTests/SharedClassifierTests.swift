import Dispatch
import Foundation
import MessageFilterCompiler
import MessageFilterCore
import Testing

/// `SharedClassifier` (issue 44, item 3): what a Message Filter extension calls from any thread.
@Suite struct SharedClassifierTests {
    static let rules = [
        MessageRule(name: "prize", target: .body, match: .contains, value: "you won", action: .junk),
        MessageRule(name: "code", target: .body, match: .regex, value: #"\b\d{6}\b"#, action: .transaction),
        MessageRule(name: "bank", target: .sender, match: .prefix, value: "+8215", action: .allow),
    ]

    static func compiledRules() throws -> CompiledRules {
        var file = RulesFile(rules: rules)
        try file.check(source: "test")
        return try CompiledRules(bytes: RulesCompiler.compile(file.rules), name: "test")
    }

    /// Many threads at once get the decisions one classifier gives alone.
    @Test func concurrentCallersGetWhatOneThreadGets() throws {
        let rules = try Self.compiledRules()
        let shared = SharedClassifier { rules }
        let alone = MessageClassifier(rules: rules)
        let bodies = (0..<400).map { index in
            ["you won a car \(index)", "your code is \(100_000 + index)", "see you at \(index)", "code \(index)"][
                index % 4
            ]
        }
        let senders = (0..<400).map { $0 % 3 == 0 ? "+821512345" : "+821099999" }
        let expected = zip(senders, bodies).map { alone.classify(sender: $0, body: $1) }
        final class Results: @unchecked Sendable {
            var decisions: [MessageClassifier.Decision?]
            init(count: Int) { decisions = Array(repeating: nil, count: count) }
        }
        let results = Results(count: bodies.count)
        // Each index is written by one iteration only.
        DispatchQueue.concurrentPerform(iterations: bodies.count) { index in
            results.decisions[index] = shared.classify(sender: senders[index], body: bodies[index])
        }
        #expect(results.decisions.map { $0 } == expected.map { $0 })
        #expect(Set(expected.map(\.action)) == [.junk, .transaction, .allow, .none])
    }

    /// Until rules load it answers nil and tries again at the next call; then they stay.
    @Test func rulesLoadAtTheFirstCallThatFindsThem() throws {
        final class Source: @unchecked Sendable {
            let lock = NSLock()
            var rules: CompiledRules?
            var loads = 0
        }
        let source = Source()
        let shared = SharedClassifier {
            source.lock.withLock {
                source.loads += 1
                return source.rules
            }
        }
        #expect(shared.classify(sender: "+1", body: "you won") == nil)
        #expect(shared.classify(sender: "+1", body: "you won") == nil)
        source.lock.withLock { source.rules = try? Self.compiledRules() }
        #expect(shared.classify(sender: "+1", body: "you won")?.action == .junk)
        #expect(shared.classify(sender: "+1", body: "hello")?.action == MessageAction.none)
        #expect(source.lock.withLock { source.loads } == 3)
    }
}
