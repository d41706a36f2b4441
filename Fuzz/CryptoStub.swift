// A stand-in for swift-crypto in the UpdateCore fuzzer (Scripts/fuzz.sh update): the same API,
// with SHA-256 real (ListImport's PortableSHA256, compiled in) and the rest made easy to get past, so that
// libFuzzer reaches the parsers behind signatures and sealing. A signature is valid when its 64
// bytes are all zero; a sealed box opens when its 16-byte tag is all zero, and its ciphertext is
// the plaintext. Never linked into anything but the fuzzer.

internal import ByteCodecs

public struct SHA256Digest: Sequence, Sendable {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
}

public struct SHA256: Sendable {
    private var inner = PortableSHA256()
    public init() {}
    public mutating func update(data: [UInt8]) { data.withUnsafeBytes { inner.update($0) } }
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { inner.update(bufferPointer) }
    public func finalize() -> SHA256Digest {
        var copy = inner
        return SHA256Digest(bytes: Hex.decode(Array(copy.finish().utf8))!)
    }
    public static func hash(data: [UInt8]) -> SHA256Digest {
        var sha = SHA256()
        sha.update(data: data)
        return sha.finalize()
    }
}

public struct StubError: Error {}

public enum Curve25519 {
    public enum Signing {
        public struct PublicKey: Sendable {
            public let rawRepresentation: [UInt8]
            public init(rawRepresentation: [UInt8]) throws {
                guard rawRepresentation.count == 32 else { throw StubError() }
                self.rawRepresentation = rawRepresentation
            }
            public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
                signature.count == 64 && signature.allSatisfy { $0 == 0 }
            }
        }
        public struct PrivateKey: Sendable {
            public let rawRepresentation = [UInt8](repeating: 7, count: 32)
            public init() {}
            public var publicKey: PublicKey { try! PublicKey(rawRepresentation: [UInt8](repeating: 9, count: 32)) }
            public func signature(for data: [UInt8]) throws -> [UInt8] { [UInt8](repeating: 0, count: 64) }
        }
    }
}

public struct SymmetricKey: Sendable {
    public let bitCount: Int
    public init(data: [UInt8]) { bitCount = data.count * 8 }
}

public enum ChaChaPoly {
    public struct SealedBox {
        public let combined: [UInt8]
        let plaintext: [UInt8]
        public init(combined: [UInt8]) throws {
            guard combined.count >= 28, combined.suffix(16).allSatisfy({ $0 == 0 }) else { throw StubError() }
            self.combined = combined
            plaintext = Array(combined[12..<(combined.count - 16)])
        }
    }
    public static func open(_ box: SealedBox, using key: SymmetricKey) throws -> [UInt8] { box.plaintext }
    public static func seal(_ plain: [UInt8], using key: SymmetricKey) throws -> SealedBox {
        try SealedBox(combined: [UInt8](repeating: 0, count: 12) + plain + [UInt8](repeating: 0, count: 16))
    }
}
