// A libFuzzer target for HTTPFetch's response parser: any bytes, fed in any pieces, must be read
// to a complete message or refused with an HTTPFetchError whose sentence ends in a period; never
// crash or hang, never hand over more body than the limit, and never depend on how the bytes were
// split. Built with Scripts/fuzz.sh http, which links it with HTTPFetch built under
// -sanitize=fuzzer,address.

import HTTPFetch

/// What the parser made of one input, to compare across splits.
private struct Outcome: Equatable {
    var complete: Bool
    var status: Int?
    var headers: [String]
    var body: [UInt8]
    var error: HTTPFetchError?
}

/// The first byte picks the limits (body: 0, 1, 16, 1,000 or 1 MiB; head: 64 bytes or 16 KiB)
/// and whether the request was HEAD; the second seeds the splits; the rest is the response.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 2 else { return 0 }
    let control = data[0]
    let bodyLimit: Int64 = [0, 1, 16, 1000, 1 << 20][Int(control % 5)]
    let headLimit = control & 0x40 != 0 ? 64 : 16 * 1024
    let head = control & 0x80 != 0
    let input = UnsafeRawBufferPointer(start: data + 2, count: size - 2)

    func run(_ pieces: [Range<Int>]) -> Outcome {
        var parser = HTTPResponseParser(
            maximumHeaderBytes: headLimit,
            maximumBodyBytes: bodyLimit,
            requestWasHEAD: head
        )
        var body: [UInt8] = []
        var complete = false
        do throws(HTTPFetchError) {
            for piece in pieces where !complete {
                complete = try parser.feed(UnsafeRawBufferPointer(rebasing: input[piece])) { chunk in
                    body += chunk
                    precondition(Int64(body.count) <= bodyLimit, "the body passed the limit")
                }
            }
            precondition(complete == parser.isComplete)
            if !complete { try parser.finish() }
            precondition(parser.isComplete)
            let head = parser.head!
            precondition(head.status >= 200 && head.status <= 599, "final status \(head.status)")
            precondition(parser.bodyByteCount == Int64(body.count))
            return Outcome(
                complete: complete,
                status: head.status,
                headers: head.headers.map { $0.name + ":" + $0.value },
                body: body,
                error: nil
            )
        } catch {
            precondition(error.description.hasPrefix("The response ") && error.description.hasSuffix("."))
            precondition(error.code == .protocolViolation || error.code == .tooLarge, "\(error.code)")
            // A failed parser says the same again.
            var again = parser
            do throws(HTTPFetchError) { try again.finish() } catch let second { precondition(second == error) }
            return Outcome(complete: complete, status: nil, headers: [], body: body, error: error)
        }
    }

    let whole = run([0..<input.count])
    // Random cuts, seeded by the second byte.
    var state = UInt64(data[1]) &* 0x9E37_79B9_7F4A_7C15 | 1
    var cuts: [Int] = []
    if input.count > 1 {
        for _ in 0..<(1 + Int(data[1] % 8)) {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            cuts.append(Int(state % UInt64(input.count)))
        }
    }
    cuts = [0] + cuts.sorted() + [input.count]
    let split = run((1..<cuts.count).map { cuts[$0 - 1]..<cuts[$0] })
    precondition(split == whole, "splitting changed the outcome: \(whole) then \(split)")
    if input.count <= 512 {
        let bytewise = run((0..<input.count).map { $0..<($0 + 1) })
        precondition(bytewise == whole, "feeding byte by byte changed the outcome: \(whole) then \(bytewise)")
    }
    return 0
}
