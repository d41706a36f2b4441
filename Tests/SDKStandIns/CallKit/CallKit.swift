// A stand-in for CallKit's Call Directory API, with the iOS SDK's signatures (no iOS SDK is
// available here; see AppGroupContainers). The context records nothing itself: a test subclasses
// it, as the system's own context is a subclass it does not show.
@_exported import AppGroupContainers

/// A phone number as the Call Directory takes it.
public typealias CXCallDirectoryPhoneNumber = Int64

/// The principal class of a Call Directory extension.
open class CXCallDirectoryProvider: NSObject {
    public override init() {}

    /// Called by the system to load or update the extension's entries.
    open func beginRequest(with context: CXCallDirectoryExtensionContext) {}
}

/// What the system hands a Call Directory extension's request.
open class CXCallDirectoryExtensionContext: NSObject {
    public override init() {}

    /// True when the request may change what is stored, false when it adds the whole list.
    open var isIncremental: Bool { false }

    open func addBlockingEntry(withNextSequentialPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber) {}
    open func removeBlockingEntry(withPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber) {}
    open func removeAllBlockingEntries() {}
    open func addIdentificationEntry(
        withNextSequentialPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber,
        label: String
    ) {}
    open func removeIdentificationEntry(withPhoneNumber phoneNumber: CXCallDirectoryPhoneNumber) {}
    open func removeAllIdentificationEntries() {}
    open func completeRequest(completionHandler completion: ((Bool) -> Void)? = nil) {}
    open func cancelRequest(withError error: Error) {}
}
