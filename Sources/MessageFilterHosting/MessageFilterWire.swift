internal import LibC
import MessageFilterCore

/// The frames between the Messages simulator and the message filter extension's host process,
/// over the host's standard input and output. All integers are little-endian.
///
/// To the extension:
/// - query: `Q`, sender length (u32), body length (u32), sender, body (UTF-8);
/// - the server's response to a deferred query: `N`, HTTP status (i32; -1 when no response came),
///   length (u32), the response body (or, for -1, the reason in UTF-8).
///
/// From the extension, one answer per frame: `A`, action (u8), flags (u8; bit 0: defer this
/// query to the server), rule index (i32; -1 for none), sub-action length (u16), reason length
/// (u16), sub-action, reason.
package enum MessageFilterWire {
    package static let query: UInt8 = UInt8(ascii: "Q")
    package static let networkResponse: UInt8 = UInt8(ascii: "N")
    package static let answer: UInt8 = UInt8(ascii: "A")
    package static let deferFlag: UInt8 = 1

    /// One answer from the extension.
    package struct Answer: Sendable, Equatable {
        package var action: MessageAction
        package var deferToServer: Bool
        package var rule: Int?
        package var subAction: String?
        /// Why the answer is `none` when something failed, for the report.
        package var reason: String?

        package init(
            action: MessageAction,
            deferToServer: Bool = false,
            rule: Int? = nil,
            subAction: String? = nil,
            reason: String? = nil
        ) {
            self.action = action
            self.deferToServer = deferToServer
            self.rule = rule
            self.subAction = subAction
            self.reason = reason
        }

        package func encoded() -> [UInt8] {
            var bytes: [UInt8] = [
                MessageFilterWire.answer, action.rawValue, deferToServer ? MessageFilterWire.deferFlag : 0,
            ]
            bytes.appendLE(Int32(rule ?? -1))
            let sub = Array((subAction ?? "").utf8.prefix(1000))
            let why = Array((reason ?? "").utf8.prefix(4000))
            bytes.appendLE(UInt16(sub.count))
            bytes.appendLE(UInt16(why.count))
            return bytes + sub + why
        }
    }

    package static func encodeQuery(sender: [UInt8], body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [query]
        bytes.appendLE(UInt32(sender.count))
        bytes.appendLE(UInt32(body.count))
        return bytes + sender + body
    }

    package static func encodeNetworkResponse(status: Int32, body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [networkResponse]
        bytes.appendLE(status)
        bytes.appendLE(UInt32(body.count))
        return bytes + body
    }
}

extension Array where Element == UInt8 {
    package mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

/// Reads and writes whole frames on a file descriptor.
package struct FrameChannel {
    package let input: Int32
    package let output: Int32

    package init(input: Int32, output: Int32) {
        self.input = input
        self.output = output
    }

    /// Fills `buffer` exactly; false at a clean end of input before the first byte.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(MessageFilterError) -> Bool {
        var done = 0
        while done < buffer.count {
            let n = Glibc.read(input, buffer.baseAddress! + done, buffer.count - done)
            if n < 0, errno == EINTR { continue }
            if n < 0 { throw MessageFilterError(.io, "Reading a frame failed: \(String(cString: strerror(errno))).") }
            if n == 0 {
                if done == 0 { return false }
                throw MessageFilterError(
                    .io,
                    "The pipe closed in the middle of a frame (\(done) of \(buffer.count) bytes)."
                )
            }
            done += n
        }
        return true
    }

    /// Reads and discards `count` bytes.
    package func skip(_ count: Int, scratch: UnsafeMutableRawBufferPointer) throws(MessageFilterError) {
        var left = count
        while left > 0 {
            let chunk = Swift.min(left, scratch.count)
            guard try read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<chunk])) else {
                throw MessageFilterError(.io, "The pipe closed in the middle of a frame.")
            }
            left -= chunk
        }
    }

    package func write(_ bytes: UnsafeRawBufferPointer) throws(MessageFilterError) {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(output, bytes.baseAddress! + done, bytes.count - done)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { throw MessageFilterError(.io, "Writing a frame failed: \(String(cString: strerror(errno))).") }
            done += n
        }
    }

    package func write(_ bytes: [UInt8]) throws(MessageFilterError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(MessageFilterError) in try write(raw) } }.get()
    }

    /// Reads one answer frame.
    package func readAnswer() throws(MessageFilterError) -> MessageFilterWire.Answer {
        var head = [UInt8](repeating: 0, count: 11)
        let got = try head.withUnsafeMutableBytes { raw in
            Result { () throws(MessageFilterError) in try read(into: raw) }
        }.get()
        guard got else { throw MessageFilterError(.io, "The message filter extension exited without answering.") }
        guard head[0] == MessageFilterWire.answer, let action = MessageAction(rawValue: head[1]) else {
            throw MessageFilterError(.io, "The message filter extension sent a frame that is not an answer.")
        }
        let rule = Int32(littleEndian: head.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 3, as: Int32.self) })
        let subLength = Int(
            UInt16(littleEndian: head.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 7, as: UInt16.self) })
        )
        let reasonLength = Int(
            UInt16(littleEndian: head.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 9, as: UInt16.self) })
        )
        var tail = [UInt8](repeating: 0, count: subLength + reasonLength)
        if !tail.isEmpty {
            guard
                try tail.withUnsafeMutableBytes({ raw in
                    Result { () throws(MessageFilterError) in try read(into: raw) }
                }).get()
            else {
                throw MessageFilterError(.io, "The message filter extension's answer was cut short.")
            }
        }
        let sub = String(decoding: tail[0..<subLength], as: UTF8.self)
        let reason = String(decoding: tail[subLength...], as: UTF8.self)
        return MessageFilterWire.Answer(
            action: action,
            deferToServer: head[2] & MessageFilterWire.deferFlag != 0,
            rule: rule < 0 ? nil : Int(rule),
            subAction: sub.isEmpty ? nil : sub,
            reason: reason.isEmpty ? nil : reason
        )
    }
}
