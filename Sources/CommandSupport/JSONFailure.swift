import JSONStream

/// What a command given `--json` prints on standard output when it fails, so that a program
/// reading its output always gets one JSON object: `{"error": {"code", "exitStatus", "message"}}`,
/// keys sorted as the commands' JSONEncoder output sorts them. The sentence still goes to
/// standard error. A command that printed its own JSON report before failing (`verify` of a
/// damaged set) exits with `ExitCode` and gets no second object.
package enum JSONFailure {
    /// The object for a failure: `code` names its kind ("invalid input", "usage", …).
    package static func text(code: String, message: String, exitStatus: Int32) -> String {
        """
        {
          "error" : {
            "code" : \(JSONText.string(code)),
            "exitStatus" : \(exitStatus),
            "message" : \(JSONText.string(message))
          }
        }
        """
    }

    /// The kind of `error`, for `code`: the `code` the package's error types carry ("invalid
    /// input", "corrupt rules", …), else "usage" for a refused command line (status 64), else
    /// "error".
    package static func code(for error: any Error, status: Int32) -> String {
        if let code = Mirror(reflecting: error).children.first(where: { $0.label == "code" })?.value {
            return String(describing: code)
        }
        return status == 64 ? "usage" : "error"
    }

    /// Ends a command that threw `error`: the object, if `arguments` ask for JSON and the command
    /// did not report the failure itself (`reported`: it threw an `ExitCode`), then
    /// `fullMessage` and `status` as `StandardOutput.exit` ends any command.
    package static func exit(
        _ error: any Error,
        status: Int32,
        message: String,
        fullMessage: String,
        arguments: some Sequence<String>,
        reported: Bool
    ) -> Never {
        if status != 0, !reported, requested(arguments) {
            print(text(code: code(for: error, status: status), message: message, exitStatus: status))
        }
        StandardOutput.exit(status, message: fullMessage)
    }

    /// Whether `arguments` (without the program's name) ask for JSON: `--json` before any `--`.
    package static func requested(_ arguments: some Sequence<String>) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "--json" { return true }
        }
        return false
    }
}
