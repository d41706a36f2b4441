import BlocklistCore
internal import LibC
import MessageFilterCore
import MessageFilterHosting

// The simulator's stand-in for a Message Filter app extension (ILMessageFilterExtension): it
// loads compiled rules once, then answers frames on standard input (MessageFilterWire) until the
// input ends. It classifies offline and asks for deferral when no rule decides; when the
// simulator hands back the server's response it reads it into the final action. Like the real
// extension it has no network: this program never creates a socket (a test checks it with
// strace), and it writes nothing but its answers.
//
// Usage: blocklist-message-filter COMPILED-RULES [--no-defer]

func fail(_ message: String) -> Never {
    var text = "blocklist-message-filter: " + message + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

var arguments = CommandLine.arguments.dropFirst()
var deferring = true
var path: String?
while let argument = arguments.popFirst() {
    switch argument {
    case "--no-defer": deferring = false
    case "--version":
        print(blocklistVersion)
        exit(0)
    case "-h", "--help":
        print("Usage: blocklist-message-filter COMPILED-RULES [--no-defer]")
        exit(0)
    default:
        if path != nil || argument.hasPrefix("-") {
            fail("unexpected argument \(argument); usage: blocklist-message-filter COMPILED-RULES [--no-defer]")
        }
        path = argument
    }
}
guard let path else { fail("no compiled rules given; usage: blocklist-message-filter COMPILED-RULES [--no-defer]") }

let rules: CompiledRules
do {
    // Dense tables only for small automata: memory counts more than speed here.
    rules = try CompiledRules(contentsOf: path, denseTableBudget: 64 << 10)
} catch {
    fail(error.message)
}
// As an extension keeps them: four regexes shipped as programs at most, each with a lazy DFA of
// at most 96 KiB, whatever the number of regex rules.
let classifier = MessageClassifier(
    rules: rules,
    regexCacheSize: MessageClassifier.extensionRegexCacheSize,
    lazyDFABudget: MessageClassifier.extensionLazyDFABudget
)
let channel = FrameChannel(input: 0, output: 1)

// Fixed buffers, allocated once: the largest sender, body and response accepted.
let senderBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: MessageClassifier.maximumSenderBytes, alignment: 8)
let bodyBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: MessageClassifier.maximumBodyBytes, alignment: 8)
let head = UnsafeMutableRawBufferPointer.allocate(byteCount: 9, alignment: 8)

@MainActor func answer(_ value: MessageFilterWire.Answer) {
    do {
        try channel.write(value.encoded())
    } catch {
        fail(error.message)
    }
}

@MainActor func serve() throws(MessageFilterError) {
    while try channel.read(into: UnsafeMutableRawBufferPointer(rebasing: head[0..<1])) {
        guard try channel.read(into: UnsafeMutableRawBufferPointer(rebasing: head[1..<9])) else {
            throw MessageFilterError(.io, "The input ended in the middle of a frame.")
        }
        let first = Int(UInt32(littleEndian: head.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
        let second = Int(UInt32(littleEndian: head.loadUnaligned(fromByteOffset: 5, as: UInt32.self)))
        switch head[0] {
        case MessageFilterWire.query:
            guard first <= senderBuffer.count, second <= bodyBuffer.count else {
                try channel.skip(first + second, scratch: bodyBuffer)
                answer(
                    .init(
                        action: .none,
                        reason:
                            "the message is larger than a filter accepts (sender \(first) bytes, body \(second) bytes)"
                    )
                )
                continue
            }
            let sender = UnsafeMutableRawBufferPointer(rebasing: senderBuffer[0..<first])
            let body = UnsafeMutableRawBufferPointer(rebasing: bodyBuffer[0..<second])
            guard try channel.read(into: sender) || first == 0, try channel.read(into: body) || second == 0 else {
                throw MessageFilterError(.io, "The input ended in the middle of a query.")
            }
            let senderBytes = UnsafeBufferPointer(
                start: sender.baseAddress?.assumingMemoryBound(to: UInt8.self),
                count: first
            )
            let bodyBytes = UnsafeBufferPointer(
                start: body.baseAddress?.assumingMemoryBound(to: UInt8.self),
                count: second
            )
            do {
                try MessageClassifier.validate(sender: senderBytes, body: bodyBytes)
            } catch {
                answer(.init(action: .none, reason: error.message))
                continue
            }
            let decision = classifier.classify(validatedSender: senderBytes, body: bodyBytes)
            answer(
                .init(
                    action: decision.action,
                    deferToServer: deferring && decision.action == .none,
                    rule: decision.rule,
                    subAction: decision.subAction
                )
            )
        case MessageFilterWire.networkResponse:
            let status = Int32(bitPattern: UInt32(first))
            guard second <= bodyBuffer.count else {
                try channel.skip(second, scratch: bodyBuffer)
                answer(
                    .init(
                        action: .none,
                        reason: "the server's response has \(second) bytes; at most \(bodyBuffer.count) are read"
                    )
                )
                continue
            }
            let body = UnsafeMutableRawBufferPointer(rebasing: bodyBuffer[0..<second])
            guard try channel.read(into: body) || second == 0 else {
                throw MessageFilterError(.io, "The input ended in the middle of a response.")
            }
            if status < 0 {
                answer(.init(action: .none, reason: String(decoding: body, as: UTF8.self)))
            } else if status != 200 {
                answer(.init(action: .none, reason: "the server answered HTTP \(status)"))
            } else {
                do {
                    let response = try DeferralResponse.parse(UnsafeRawBufferPointer(body))
                    answer(.init(action: response.action, subAction: response.subAction))
                } catch {
                    answer(.init(action: .none, reason: error.message))
                }
            }
        default:
            throw MessageFilterError(.io, "The input holds a frame of unknown type \(head[0]).")
        }
    }
}

do {
    try serve()
} catch {
    fail(error.message)
}
exit(0)
