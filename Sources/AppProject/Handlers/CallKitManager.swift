import BlocklistCore
import CallKit
import Foundation
import UpdateCore

/// CallKit's manager as BlocklistCore's reload chain calls it (the app and the Notification
/// Service Extension share this file).
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

extension URLSession {
    /// A file of a publication, for UpdateCore: its bytes on 200; nil on 404 or 410, and on 403
    /// or a web page for an `optional` file (a static host hides a missing file behind them);
    /// otherwise an error naming the URL and the status. At most `limit` bytes.
    static func fetch(_ url: String, limit: Int, optional: Bool = false) async throws -> [UInt8]? {
        guard let location = URL(string: url) else { throw SettingsError("\(url) is not a URL.") }
        let (data, response) = try await URLSession.shared.data(for: URLRequest(url: location, timeoutInterval: 20))
        return try answer(url, data, response, limit: limit, optional: optional)
    }

    /// `fetch`, waiting for the answer: for UpdateCore's catch-up, which reads files one after
    /// another on a thread of its own (never the main thread).
    static func fetchWaiting(_ url: String, limit: Int, optional: Bool) throws -> [UInt8]? {
        guard let location = URL(string: url) else { throw SettingsError("\(url) is not a URL.") }
        let result = Answer()
        URLSession.shared.dataTask(with: URLRequest(url: location, timeoutInterval: 20)) { data, response, error in
            result.set(Result { try answer(url, data ?? Data(), response, error, limit: limit, optional: optional) })
        }.resume()
        return try result.wait().get()
    }

    private static func answer(
        _ url: String,
        _ data: Data,
        _ response: URLResponse?,
        _ error: (any Error)? = nil,
        limit: Int,
        optional: Bool
    ) throws -> [UInt8]? {
        if let error { throw error }
        let http = response as? HTTPURLResponse
        return try HostAnswer(
            url: url,
            status: http?.statusCode ?? 0,
            contentType: http?.value(forHTTPHeaderField: "Content-Type"),
            body: [UInt8](data),
            limit: limit,
            optional: optional
        ).bytes()
    }

    /// One answer, handed from URLSession's queue to the thread that waits for it.
    private final class Answer: @unchecked Sendable {
        private let ready = DispatchSemaphore(value: 0)
        private var result: Result<[UInt8]?, any Error> = .success(nil)
        func set(_ result: Result<[UInt8]?, any Error>) {
            self.result = result
            ready.signal()
        }
        func wait() -> Result<[UInt8]?, any Error> {
            ready.wait()
            return result
        }
    }
}
