// A libFuzzer target for the message filter's readers: compiled rules files, deferral
// responses, and deferral requests (StrictJSON, then Foundation's JSONDecoder as the server
// reads them). Any input must be refused with a MessageFilterError or accepted; accepted rules
// must then classify messages without crashing or looping. Built with Scripts/fuzz.sh rules,
// which links it with MessageFilterCore built under -sanitize=fuzzer,address.

internal import ByteCodecs
import Foundation
import MessageFilterCore

/// Scratch for inputs whose checksums the fuzzer cannot get right by itself.
nonisolated(unsafe) private var fixed = [UInt8](repeating: 0, count: 1 << 16)

/// The first byte picks a mode, so that the fuzzer gets past the checksums to the parsers:
/// 0: the rest is a compiled rules file as it is.
/// 1: the rest is a compiled rules file whose section and header CRCs are then made right.
/// 2: the rest is a deferral server's response body.
/// 3: the rest is a deferral request body, as `sms serve` reads it (DeferralProtocol).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCompiledRules(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    switch data[0] % 4 {
    case 3:
        readRequest(UnsafeRawBufferPointer(input))
        return 0
    case 2:
        if let response = try? DeferralResponse.parse(UnsafeRawBufferPointer(input)) {
            precondition(response.action != .none || response.subAction == nil)
        }
        return 0
    case 1:
        let count = min(input.count, fixed.count)
        for index in 0..<count { fixed[index] = input[index] }
        fixChecksums(count)
        classify(Array(fixed[0..<count]))
    default:
        classify(Array(input))
    }
    return 0
}

private func fixChecksums(_ count: Int) {
    guard count >= CompiledRulesFormat.headerSize else { return }
    fixed.withUnsafeMutableBytes { file in
        let sections = Int(UInt32(littleEndian: file.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
        let tableEnd =
            CompiledRulesFormat.headerSize + min(sections, CompiledRulesFormat.maximumSections)
            * CompiledRulesFormat.sectionEntrySize
        guard tableEnd <= count else { return }
        for index in 0..<min(sections, CompiledRulesFormat.maximumSections) {
            let entry = CompiledRulesFormat.headerSize + index * CompiledRulesFormat.sectionEntrySize
            let offset = Int(UInt32(littleEndian: file.loadUnaligned(fromByteOffset: entry + 4, as: UInt32.self)))
            let length = Int(UInt32(littleEndian: file.loadUnaligned(fromByteOffset: entry + 8, as: UInt32.self)))
            guard offset <= count, length <= count - offset else { continue }
            let crc = crc32Update(0, UnsafeRawBufferPointer(rebasing: file[offset..<(offset + length)]))
            file.storeBytes(of: crc.littleEndian, toByteOffset: entry + 12, as: UInt32.self)
        }
        file.storeBytes(of: UInt32(count).littleEndian, toByteOffset: 20, as: UInt32.self)
        var crc = crc32Update(0, UnsafeRawBufferPointer(rebasing: file[0..<24]))
        crc = crc32Update(crc, UnsafeRawBufferPointer(rebasing: file[CompiledRulesFormat.headerSize..<tableEnd]))
        file.storeBytes(of: crc.littleEndian, toByteOffset: 24, as: UInt32.self)
    }
}

private func classify(_ bytes: [UInt8]) {
    for budget in [0, 1 << 20] {
        guard let rules = try? CompiledRules(bytes: bytes, name: "fuzz", denseTableBudget: budget) else { return }
        let classifier = MessageClassifier(rules: rules, regexCacheSize: 2)
        for (sender, body) in [
            ("+15550100", "you have won http://bit.ly/x code 123456"), ("BANK", "Ｗin\u{200B} big\u{202E} STOP"),
            ("x", ""), ("\u{0421}LAIM", "\u{0441}laim \u{1D41C}\u{1D425}a\u{0456}m c\u{0327}\u{115F}\u{05B4}"),
        ] {
            let decision = classifier.classify(sender: sender, body: body)
            if let rule = decision.rule {
                precondition(rule < rules.ruleCount && rules.rule(rule).action == decision.action)
            } else {
                precondition(decision.action == .none)
            }
        }
    }
}

/// The deferral request's shape, as DeferralProtocol's `DeferralQuery` (a separate module, which
/// this single-module build cannot import).
private struct Query: Decodable {
    struct App: Decodable { var version: String }
    struct Inner: Decodable {
        struct Message: Decodable { var text: String }
        var sender: String
        var message: Message
    }
    var _version: Int
    var app: App
    var query: Inner
}

/// A request body through the server's two steps. What StrictJSON accepts, the response reader
/// (the same JSONReader with the same limits) must read as JSON too.
private func readRequest(_ bytes: UnsafeRawBufferPointer) {
    do {
        try StrictJSON.check(bytes, subject: "The request body")
    } catch {
        precondition(error.message.hasPrefix("The request body is not valid JSON: "), error.message)
        return
    }
    _ = try? JSONDecoder().decode(Query.self, from: Data(bytes))
    if bytes.count <= DeferralResponse.maximumBytes, bytes.first(where: { $0 > 0x20 }) == UInt8(ascii: "{") {
        do {
            _ = try DeferralResponse.parse(bytes)
        } catch {
            // The response reader wants "action" and "subAction" to be strings; any other refusal
            // as JSON would be the two scanners disagreeing.
            precondition(
                !error.message.contains("is not valid JSON") || error.message.contains("is not a string"),
                "StrictJSON accepted what the response reader refuses: \(error.message)"
            )
        }
    }
}
