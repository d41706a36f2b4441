/// Where an app and its extensions keep their files in the App Group, under one directory
/// (`<App Group container>/blocklist`): the one definition of the layout, which every product
/// and the handlers use.
///
/// - `shards/NAME`: the installed shards, one per Call Directory extension (UpdateCore's
///   `InstalledShards`);
/// - `installed.json`: the installed generation and each shard's content digest;
/// - `loaded/NAME`: each shard as CallKit stored it last (``ShardLoader``'s loaded copies);
/// - `failures.log`: what the extensions could not do (``ExtensionFailures``);
/// - `rules.blsms`: the compiled SMS rules.
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
}
