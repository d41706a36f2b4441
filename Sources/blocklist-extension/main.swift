import BlocklistCore
internal import LibC

// The simulator's stand-in for a Call Directory app extension (.appex): the system process spawns
// it for one request, as iOS launches the extension. It streams one shard into a context whose
// calls go to the system over standard output. No Foundation, no argument parser: it must stay small.
//
// Usage: blocklist-extension SHARD [--incremental] [--strategy full|delta] [--previous SHARD]
//                            [--crash-after N]

struct Options {
    var shard = ""
    var incremental = false
    var delta = false
    var previous: String?
    var crashAfter: Int64?
}

func fail(_ message: String) -> Never {
    var text = "blocklist-extension: " + message + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

func parse(_ arguments: ArraySlice<String>) -> Options {
    var options = Options()
    var rest = arguments
    while let argument = rest.popFirst() {
        switch argument {
        case "--version":
            print(blocklistVersion)
            exit(0)
        case "--incremental": options.incremental = true
        case "--strategy":
            switch rest.popFirst() {
            case "full": options.delta = false
            case "delta": options.delta = true
            default: fail("--strategy takes full or delta")
            }
        case "--previous":
            guard let path = rest.popFirst() else { fail("--previous needs a shard path") }
            options.previous = path
        case "--crash-after":
            guard let text = rest.popFirst(), let count = Int64(text), count >= 0 else {
                fail("--crash-after needs a count")
            }
            options.crashAfter = count
        default:
            guard options.shard.isEmpty, !argument.hasPrefix("-") else { fail("unexpected argument \(argument)") }
            options.shard = argument
        }
    }
    if options.shard.isEmpty { fail("give the shard to load") }
    return options
}

let options = parse(CommandLine.arguments.dropFirst())
let context = PipeContext(fd: 1, isIncremental: options.incremental, crashAfter: options.crashAfter)

do throws(BlocklistError) {
    try ShardLoader.load(
        shardAt: options.shard,
        previousShardAt: options.incremental && options.delta ? options.previous : nil,
        into: context
    )
} catch {
    context.cancelRequest(reason: error.message)
}
// Like an app extension, linger after completing until the system lets go (closes standard
// input), so that it can read this process's final memory figures. Only when stdin is a pipe.
var info = stat()
if fstat(0, &info) == 0, (info.st_mode & S_IFMT) == S_IFIFO {
    var byte: UInt8 = 0
    while read(0, &byte, 1) > 0 {}
}
exit(context.broken ? 1 : 0)
