/// Where an app and its extensions keep their files in the App Group, under one directory
/// (`<App Group container>/blocklist`): the one definition of the layout, which every product
/// and the handlers use.
///
/// - `shards/NAME`: the installed shards, one per Call Directory extension (UpdateCore's
///   `InstalledShards`);
/// - `installed.json`: the installed generation and each shard's content digest;
/// - `loaded/NAME`: each shard as CallKit stored it last (``ShardLoader``'s loaded copies);
/// - `failures.log`: what the extensions could not do (``ExtensionFailures``);
/// - `rules.blsms`: the compiled SMS rules;
/// - `roots/N.root.json`: the roots the app followed after the one it ships;
/// - `.lock`: the lock writers of the installed set hold (UpdateCore's `InstalledShards.withLock`).
public enum AppGroupLayout {
    /// The installed shard `name`.
    public static func installedShard(_ name: String, in directory: String) -> String {
        directory + "/shards/" + name
    }

    /// The record of the installed set.
    public static func installedRecord(in directory: String) -> String { directory + "/installed.json" }

    /// The copy of the shard `name` that CallKit stored last.
    public static func loadedCopy(_ name: String, in directory: String) -> String { directory + "/loaded/" + name }

    /// The failures the extensions recorded.
    public static func failures(in directory: String) -> String { directory + "/failures.log" }

    /// The compiled SMS rules.
    public static func rules(in directory: String) -> String { directory + "/rules.blsms" }

    /// Root version `version`, which the app followed from its publication (UpdateCore's
    /// `InstalledShards.trustedRoot`).
    public static func root(_ version: Int64, in directory: String) -> String {
        directory + "/roots/\(version).root.json"
    }

    /// The lock the writers of the installed set take.
    public static func lock(in directory: String) -> String { directory + "/.lock" }

    /// Installs the compiled SMS rules at `source` (the set an app ships) as `rules.blsms`, when
    /// they differ from the installed ones: written beside it and renamed over it, so the Message
    /// Filter extension reads the old rules or the new, never a part. Rules shipped with a newer
    /// version of the app reach those who had the older.
    ///
    /// - Returns: whether the rules changed.
    /// - Throws: `BlocklistError` naming the file that could not be read or written.
    @discardableResult
    public static func installRules(copying source: String, in directory: String) throws(BlocklistError) -> Bool {
        let destination = rules(in: directory)
        let new = try FileDescriptor.readWholeFile(source)
        if FileDescriptor.nameExists(destination), (try? FileDescriptor.readWholeFile(destination)) == new {
            return false
        }
        let aside = directory + "/.rules.blsms.new"
        try FileDescriptor.makeDirectory(directory)
        FileDescriptor.removeCreated(aside)
        try FileDescriptor.writeNewFile(aside, new, sync: true)
        try FileDescriptor.rename(aside, over: destination)
        return true
    }
}
