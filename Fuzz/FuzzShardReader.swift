import BlocklistCore
internal import ByteCodecs

// A libFuzzer target for the shard reader and verifier: any input must be read to its end or
// refused with a BlocklistError, never crash, hang or yield numbers out of order. Built with
// Scripts/fuzz.sh shard-reader, which links it with BlocklistCore built under
// -sanitize=fuzzer,address.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file the reader opens: the core reads paths, so each input is written here first.
nonisolated(unsafe) private var inputPath: String = {
    "/dev/shm/blocklist-fuzz-\(getpid()).blk"
}()

nonisolated(unsafe) private let numbers = UnsafeMutableBufferPointer<Int64>.allocate(capacity: 1024)

private func write(_ data: UnsafePointer<UInt8>, _ size: Int) {
    let fd = open(inputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "cannot open \(inputPath)")
    var done = 0
    while done < size {
        let n = Glibc.write(fd, data + done, size - done)
        precondition(n > 0, "cannot write \(inputPath)")
        done += n
    }
    close(fd)
}

/// Scratch for the shard the modes below build.
nonisolated(unsafe) private let built = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 + 8192, alignment: 8)
nonisolated(unsafe) private let deflater = try! Deflater(level: 1, windowBits: 15, memLevel: 8, context: "fuzz")

/// The first byte picks a mode, so that the fuzzer gets past the checksums to the parsers:
/// 0: the rest is the file as it is.
/// 1: the rest is a file whose payload length, payload CRC and header CRC are then made right
///    (reaches zlib with any compressed bytes).
/// 2: the rest is 28 bytes of header fields (runs, entries, first, last) and an uncompressed
///    payload, which is compressed and framed with correct lengths and CRCs (reaches the varint
///    and run decoder with any runs).
/// 3: the rest is a version 2 file (128-byte header) whose payload length, payload CRC and
///    header CRC are then made right (reaches the Rice decoder, the label table and the
///    identification runs).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzShardReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else {
        write(data, 0)
        return check()
    }
    let input = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    switch data[0] % 4 {
    case 3 where input.count >= 128:
        let file = UnsafeMutableRawBufferPointer(start: built.baseAddress, count: min(input.count, built.count))
        file.copyMemory(from: UnsafeRawBufferPointer(rebasing: input[0..<file.count]))
        file.storeBytes(of: UInt16(2).littleEndian, toByteOffset: 8, as: UInt16.self)
        file.storeBytes(of: UInt16(128).littleEndian, toByteOffset: 10, as: UInt16.self)
        let payload = UnsafeRawBufferPointer(rebasing: file[128...])
        file.storeBytes(of: Int64(payload.count).littleEndian, toByteOffset: 48, as: Int64.self)
        file.storeBytes(of: crc32Update(0, payload).littleEndian, toByteOffset: 56, as: UInt32.self)
        file.storeBytes(
            of: crc32Update(0, UnsafeRawBufferPointer(rebasing: file[0..<124])).littleEndian,
            toByteOffset: 124,
            as: UInt32.self
        )
        write(UnsafePointer(file.baseAddress!.assumingMemoryBound(to: UInt8.self)), file.count)
    case 1 where input.count >= 64:
        let file = UnsafeMutableRawBufferPointer(start: built.baseAddress, count: min(input.count, built.count))
        file.copyMemory(from: UnsafeRawBufferPointer(rebasing: input[0..<file.count]))
        let payload = UnsafeRawBufferPointer(rebasing: file[64...])
        file.storeBytes(of: Int64(payload.count).littleEndian, toByteOffset: 48, as: Int64.self)
        file.storeBytes(of: crc32Update(0, payload).littleEndian, toByteOffset: 56, as: UInt32.self)
        file.storeBytes(
            of: crc32Update(0, UnsafeRawBufferPointer(rebasing: file[0..<60])).littleEndian,
            toByteOffset: 60,
            as: UInt32.self
        )
        write(UnsafePointer(file.baseAddress!.assumingMemoryBound(to: UInt8.self)), file.count)
    case 2 where input.count >= 28:
        let payload = UnsafeRawBufferPointer(rebasing: input[28..<min(input.count, 28 + 2048)])
        var length = 0
        try! deflater.reset(context: "fuzz")
        try! deflater.compress(payload, into: UnsafeMutableRawBufferPointer(rebasing: built[64...]), finish: true) {
            chunk in
            length += chunk.count
        }
        let compressed = UnsafeRawBufferPointer(rebasing: built[64..<(64 + length)])
        var header = ShardHeader(
            shardIndex: 1,
            runCount: input.loadUnaligned(fromByteOffset: 0, as: UInt32.self),
            entryCount: input.loadUnaligned(fromByteOffset: 4, as: Int64.self),
            first: input.loadUnaligned(fromByteOffset: 12, as: Int64.self),
            last: input.loadUnaligned(fromByteOffset: 20, as: Int64.self),
            payloadLength: Int64(length),
            payloadCRC: crc32Update(0, compressed)
        )
        header.encode(into: built)
        write(UnsafePointer(built.baseAddress!.assumingMemoryBound(to: UInt8.self)), 64 + length)
    default:
        write(UnsafePointer(input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? data), input.count)
    }
    return check()
}

private func check() -> Int32 {
    // The reader: every number it yields ascends, and it stops at the header's count.
    // Consumers check the capacity first (ShardLoader, the extension host), as here.
    if let reader = try? ShardReader(path: inputPath), (try? reader.checkCapacity(1_999_999)) != nil {
        var previous = Int64.min
        var yielded: Int64 = 0
        do {
            while true {
                let filled = try reader.read(into: numbers)
                if filled == 0 { break }
                for number in numbers[0..<filled] {
                    precondition(number > previous, "the reader yielded \(number) after \(previous)")
                    previous = number
                }
                yielded += Int64(filled)
                precondition(yielded <= reader.header.entryCount, "the reader yielded more than the header's count")
            }
            precondition(yielded == reader.header.entryCount, "the reader ended early without an error")
            // Version 2: the label table, then identification runs, ascending, each label in it.
            let labels = try reader.readLabels()
            var last = Int64.min
            var identified: Int64 = 0
            while let (run, label) = try reader.nextIdentificationRun() {
                precondition(run.start > last && run.last >= run.start, "identification run \(run) after \(last)")
                precondition(label >= 0 && label < labels.count, "label \(label) outside a table of \(labels.count)")
                last = run.last
                identified += run.count
                precondition(
                    identified <= reader.header.identificationCount,
                    "more identification entries than the header's count"
                )
            }
        } catch {
            precondition(!error.message.isEmpty)
        }
    }
    // The verifier, which also checks the runs one by one.
    do {
        let summary = try ShardVerifier.verify(inputPath, capacity: 1_999_999)
        precondition(summary.header.entryCount <= 1_999_999)
    } catch {
        precondition(!error.message.isEmpty)
    }
    return 0
}
