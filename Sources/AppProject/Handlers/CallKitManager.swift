import BlocklistCore
import CallKit

/// CallKit's manager as BlocklistCore's reload chain calls it: the app reloads its Call Directory
/// extensions with `CallDirectoryReloadChain(identifiers:).run(using: CallKitManager())`.
struct CallKitManager: CallDirectoryManaging {
    func reloadExtension(withIdentifier identifier: String) async throws(CallDirectoryManagerError) {
        do {
            try await CXCallDirectoryManager.sharedInstance.reloadExtension(withIdentifier: identifier)
        } catch {
            throw Self.managerError(error)
        }
    }

    func enabledStatus(ofExtension identifier: String) async throws(CallDirectoryManagerError)
        -> CallDirectoryEnabledStatus
    {
        let answer = await withCheckedContinuation { continuation in
            CXCallDirectoryManager.sharedInstance.getEnabledStatusForExtension(withIdentifier: identifier) {
                status,
                error in
                continuation.resume(returning: (status.rawValue, error.map(Self.managerError)))
            }
        }
        if let error = answer.1 { throw error }
        return CallDirectoryEnabledStatus(rawValue: answer.0) ?? .unknown
    }

    /// CallKit's error code, or `unknown` with the error's words for any other error.
    static func managerError(_ error: any Error) -> CallDirectoryManagerError {
        if let error = error as? CXErrorCodeCallDirectoryManagerError {
            return CallDirectoryManagerError(rawCode: error.code.rawValue, detail: "\(error)")
        }
        return CallDirectoryManagerError(.unknown, detail: "\(error)")
    }
}
