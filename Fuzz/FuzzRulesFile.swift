// A libFuzzer target for the rules file people write (`sms compile`'s input, JSON): any bytes are
// refused with a MessageFilterError or accepted; accepted rules are within the limits, load the
// same a second time, compile to a file the extension's reader accepts with as many rules, and
// classify messages without crashing or looping, each decision naming a rule that gives its
// action. Built with Scripts/fuzz.sh rules-json, which links it with MessageFilterCompiler
// and the modules it imports, built under -sanitize=fuzzer,address.

import Foundation
import MessageFilterCompiler
import MessageFilterCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRulesFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let file: RulesFile
    do {
        file = try RulesFile.load(bytes: bytes, source: "fuzz.json")
    } catch {
        precondition(!error.message.isEmpty, "a refusal without a sentence")
        return 0
    }
    let again = try? RulesFile.load(bytes: bytes, source: "fuzz.json")
    precondition(again?.rules == file.rules, "the same bytes loaded twice gave different rules")
    let compiled = RulesCompiler.compile(file.rules)
    let rules: CompiledRules
    do {
        rules = try CompiledRules(bytes: compiled, name: "fuzz.blsms")
    } catch {
        preconditionFailure("accepted rules compiled to a file the reader refuses: \(error)")
    }
    precondition(rules.ruleCount == file.rules.count, "\(rules.ruleCount) compiled rules of \(file.rules.count)")
    let classifier = MessageClassifier(rules: rules, regexCacheSize: 2)
    for (sender, body) in [
        ("+15550100", "You have WON! http://bit.ly/x1 code 123456"), ("BANK", "Ｗin\u{200B} big\u{202E} STOP"),
        ("x", ""), ("\u{0421}LAIM", "\u{0441}laim \u{1D41C}\u{1D425}a\u{0456}m"),
        ("", String(repeating: "a", count: 300)),
    ] {
        let decision = classifier.classify(sender: sender, body: body)
        if let rule = decision.rule {
            precondition(rule < rules.ruleCount && rules.rule(rule).action == decision.action)
        } else {
            precondition(decision.action == .none)
        }
    }
    return 0
}
