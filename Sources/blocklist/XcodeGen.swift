import AppProject
import ArgumentParser
import BlocklistCore
import CommandSupport

struct XcodeGen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "xcodegen",
        abstract: "Write an iOS app's Xcode project spec (XcodeGen) for a shard set.",
        discussion: """
            Writes a new directory: project.yml, with the host app, one Call Directory extension per shard, \
            a Message Filter extension and (with --trust) a Notification Service Extension, their Info.plists \
            and App Group entitlements; the handler sources that call blocklist's libraries; and the set's \
            shards, which the app installs at first launch. Run `xcodegen generate` in it to make the project.
            """
    )

    @Argument(
        help: ArgumentHelp("The set directory (blocklist generate's output).", valueName: "setdir"),
        completion: .directory
    )
    var set: String

    @Option(name: .long, help: ArgumentHelp("The app's bundle identifier, as com.example.blocklist.", valueName: "id"))
    var bundleId: String

    @Option(
        name: [.short, .long],
        help: ArgumentHelp("The directory to write; it must not exist.", valueName: "dir"),
        completion: .directory
    )
    var output: String

    @Option(help: ArgumentHelp("The project's and the app's name.", valueName: "name"))
    var name = "Blocklist"

    @Option(help: ArgumentHelp("The App Group (default: group. and the bundle identifier).", valueName: "group"))
    var appGroup: String?

    @Option(help: ArgumentHelp("The Apple developer team that signs the app.", valueName: "team"))
    var team: String?

    @Option(
        help: ArgumentHelp("The app's root.json; adds the Notification Service Extension.", valueName: "file"),
        completion: .file()
    )
    var trust: String?

    @Option(
        help: ArgumentHelp("The push key (push.key) the extension opens inline updates with.", valueName: "file"),
        completion: .file()
    )
    var pushKey: String?

    @Option(
        help: ArgumentHelp("Compiled SMS rules (blocklist sms compile) to ship in the app.", valueName: "file"),
        completion: .file()
    )
    var rules: String?

    @Option(help: ArgumentHelp("The Message Filter extension's deferral server URL.", valueName: "url"))
    var deferralUrl: String?

    @Option(
        help: ArgumentHelp(
            "The shipped set's generation in the publication (needed with --trust).",
            valueName: "n"
        )
    )
    var generation: UInt64?

    @Option(
        help: ArgumentHelp(
            "The publication's https URL, where the app catches up when pushes were missed.",
            valueName: "url"
        )
    )
    var publicationUrl: String?

    @Option(help: ArgumentHelp("Where Xcode fetches blocklist from.", valueName: "url"))
    var packageUrl = "https://github.com/blocklist/blocklist"

    /// The options as the library takes them.
    var options: AppProject.Options {
        var options = AppProject.Options(bundleIdentifier: bundleId)
        options.name = name
        options.appGroup = appGroup
        options.team = team
        options.root = trust
        options.pushKey = pushKey
        options.rules = rules
        options.deferralURL = deferralUrl
        options.generation = generation
        options.publicationURL = publicationUrl
        options.packageURL = packageUrl
        return options
    }

    /// A malformed value (a bundle identifier, a team, a URL) is a usage error, as a parser's is.
    func validate() throws {
        guard !output.isEmpty else {
            throw ValidationError("The output directory is empty; name a new directory with -o.")
        }
        do {
            try AppProject.check(options)
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() throws {
        let summary = try AppProject.write(set: set, options, to: output)
        print(
            "Wrote \(output.hasSuffix("/") ? String(output.dropLast()) : output)/project.yml: the app, \(Figures.grouped(Int64(summary.callDirectoryExtensions))) Call Directory \(summary.callDirectoryExtensions == 1 ? "extension" : "extensions"), the Message Filter extension\(trust == nil ? "" : " and the Notification Service Extension"); \(Figures.grouped(Int64(summary.files))) files."
        )
        print("Next: cd \(output) && xcodegen generate")
    }
}
