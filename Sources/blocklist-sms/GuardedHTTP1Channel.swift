import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// How long a connection may take over each part of its life, as Go's `net/http` server
/// counts them.
///
/// - `header`: from the connection's accept, or from the first byte of a later request, until
///   that request's head is complete.
/// - `body`: from a request's head until its body's last byte, however slowly it trickles.
/// - `idle`: from a response's last byte until the next request's first byte (keep-alive).
///
/// Answering has no limit: a request whose body has arrived is answered however long its peer
/// takes to read, unless the server needs its slot and every other connection is answering too
/// (`ConnectionSlots`).
struct ConnectionTimeouts: Sendable {
    var header: TimeAmount
    var body: TimeAmount
    var idle: TimeAmount
}

/// Hummingbird's HTTP/1.1 child channel with the time limits of ``ConnectionTimeouts`` and a
/// graceful shutdown that drops requests still being sent.
///
/// Hummingbird's own `idleTimeout` restarts at every byte, so a client that sends one byte a
/// second holds a connection forever, and its graceful shutdown waits for every request whose
/// head has arrived, so one body that never comes keeps the server from stopping. Two small
/// handlers share one deadline per connection: one before the HTTP decoder sees a request's first
/// bytes, one after it sees the request's head and end and the response's end.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let inner: HTTP1Channel
    let timeouts: ConnectionTimeouts
    let slots: ConnectionSlots

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let deadline = ConnectionDeadline(timeouts: timeouts, slots: slots, slot: slots.register(channel))
        do {
            try channel.pipeline.syncOperations.addHandler(RequestStartHandler(deadline))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let bound = NIOLoopBound(deadline, eventLoop: channel.eventLoop)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // Before Hummingbird's connection state handler, so that the quiesce event of a
            // graceful shutdown reaches this one first.
            let state = try channel.pipeline.syncOperations.handler(type: HTTPConnectionStateHandler.self)
            try channel.pipeline.syncOperations.addHandler(RequestPhaseHandler(bound.value), position: .before(state))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// One connection's phase and the one timer that closes it, shared by its two handlers; used on
/// the connection's event loop only.
final class ConnectionDeadline {
    enum Phase {
        /// Waiting for the next request's first byte.
        case idle
        /// A request has begun; its head is not complete.
        case head
        /// A request's head has arrived; its body has not ended.
        case body
        /// Requests have arrived whole; waiting for their answers, without a limit.
        case answering
    }

    let timeouts: ConnectionTimeouts
    /// The server's slots, and the connection's place in them, told whether it may be closed
    /// for room.
    let slots: ConnectionSlots
    let slot: ConnectionSlots.Slot
    private(set) var phase = Phase.head {
        didSet { slot.evictable.store(isIncomplete, ordering: .relaxed) }
    }
    var pendingResponses = 0 {
        didSet { slot.evictable.store(isIncomplete, ordering: .relaxed) }
    }

    /// Whether no request of the connection waits for its answer: it is idle, or its one request
    /// is still being sent. Such a connection is closed at a graceful shutdown, and for room
    /// when every slot is taken.
    var isIncomplete: Bool {
        switch phase {
        case .idle: true
        case .head: pendingResponses == 0
        case .body: pendingResponses <= 1
        case .answering: false
        }
    }
    /// When the connection is closed, unless a later phase moves it; none while answering.
    private var deadline: NIODeadline?
    /// The one timer: it fires at or after `deadline`, and moves itself on when the deadline moved.
    /// Rescheduling it at every phase would cost three timers per request.
    private var timer: Scheduled<Void>?
    private var timerAt = NIODeadline.distantFuture

    init(timeouts: ConnectionTimeouts, slots: ConnectionSlots, slot: ConnectionSlots.Slot) {
        self.timeouts = timeouts
        self.slots = slots
        self.slot = slot
    }

    func enter(_ phase: Phase, on channel: any Channel) {
        self.phase = phase
        let limit: TimeAmount? =
            switch phase {
            case .idle: timeouts.idle
            case .head: timeouts.header
            case .body: timeouts.body
            case .answering: nil
            }
        deadline = limit.map { .now() + $0 }
        guard let deadline else { return }
        if timer == nil {
            schedule(at: deadline, on: channel)
        } else if deadline < timerAt {
            // A shorter limit than the one the timer waits for (header after idle).
            timer?.cancel()
            schedule(at: deadline, on: channel)
        }
    }

    private func schedule(at when: NIODeadline, on channel: any Channel) {
        let loop = channel.eventLoop
        let this = NIOLoopBound(self, eventLoop: loop)
        timerAt = when
        timer = loop.scheduleTask(deadline: when) {
            let deadline = this.value
            deadline.timer = nil
            guard let due = deadline.deadline else { return }
            if due <= .now() {
                channel.close(promise: nil)
            } else {
                deadline.schedule(at: due, on: channel)
            }
        }
    }

    func stop() {
        deadline = nil
        timer?.cancel()
        timer = nil
    }
}

/// Sees a request's first bytes before the HTTP decoder does: from there the header timeout runs.
final class RequestStartHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let deadline: ConnectionDeadline

    init(_ deadline: ConnectionDeadline) { self.deadline = deadline }

    // The header timeout runs from the connection's accept.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { deadline.enter(.head, on: context.channel) }
    }

    func channelActive(context: ChannelHandlerContext) {
        deadline.enter(.head, on: context.channel)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { deadline.stop() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if deadline.phase == .idle { deadline.enter(.head, on: context.channel) }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline.stop()
        context.fireChannelInactive()
    }
}

/// Sees each request's head and end and each response's end, and the quiesce event of a
/// graceful shutdown, which closes a connection whose request is still being sent.
final class RequestPhaseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let deadline: ConnectionDeadline

    init(_ deadline: ConnectionDeadline) { self.deadline = deadline }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline.pendingResponses += 1
            deadline.enter(.body, on: context.channel)
        case .body:
            break
        case .end:
            // A request refused before its body ended (413) was answered already.
            deadline.enter(deadline.pendingResponses > 0 ? .answering : .idle, on: context.channel)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // Hummingbird answers a request it cannot parse 400 with no head read: never below 0.
            deadline.pendingResponses = max(0, deadline.pendingResponses - 1)
            if deadline.pendingResponses == 0, deadline.phase == .answering {
                deadline.enter(.idle, on: context.channel)
            }
        }
        context.write(data, promise: promise)
    }

    /// A channel that stops being writable holds more of an answer than its peer has read: the
    /// connection is marked stalled until it drains (`ConnectionSlots`).
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let stalled = !context.channel.isWritable
        deadline.slot.stalled.store(stalled, ordering: .relaxed)
        if stalled { deadline.slots.answerStalled() }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // An idle connection is Hummingbird's to close.
        if event is ChannelShouldQuiesceEvent, deadline.phase != .idle, deadline.isIncomplete {
            // Shutting down: a request still being sent is dropped rather than waited for (with
            // no earlier request on the connection still to answer).
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
