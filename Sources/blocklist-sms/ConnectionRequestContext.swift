import Hummingbird
import NIOCore

/// Hummingbird's basic request context, with the connection's event loop: a streamed response
/// waits on it between chunks (``StaticFile``), so that the chunks it has read are in the
/// connection's own buffer, which holds back the next while the client is slow.
struct ConnectionRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let eventLoop: any EventLoop

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        eventLoop = source.channel.eventLoop
    }
}
