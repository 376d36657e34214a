import CLinux

/// Readiness interest and results for a registered fd, mapped to epoll's bits once here.
public struct IOEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let readable = IOEvents(rawValue: 1 << 0)
    public static let writable = IOEvents(rawValue: 1 << 1)
    /// Peer closed or the fd failed; always reported, never requested.
    public static let hangup = IOEvents(rawValue: 1 << 2)
    public static let error = IOEvents(rawValue: 1 << 3)
    /// Asked with `readable` or `writable`, never reported: epoll reports the fd when new
    /// bytes or new room arrive, not again at every wait while they stay (EPOLLET). Its
    /// handler must read until the socket is empty, or ask again (`EventLoop.modify`
    /// with the same events) for bytes it left there on purpose. For plain sockets whose
    /// handlers do so; a TLS session or libcurl may hold bytes that epoll cannot see.
    public static let edgeTriggered = IOEvents(rawValue: 1 << 4)

    var epollMask: UInt32 {
        var mask: UInt32 = 0
        if contains(.readable) { mask |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if contains(.writable) { mask |= EPOLLOUT.rawValue }
        if contains(.edgeTriggered) { mask |= EPOLLET.rawValue }
        return mask
    }

    init(epollMask mask: UInt32) {
        var events: IOEvents = []
        if mask & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 { events.insert(.readable) }
        if mask & EPOLLOUT.rawValue != 0 { events.insert(.writable) }
        if mask & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 { events.insert(.hangup) }
        if mask & EPOLLERR.rawValue != 0 { events.insert(.error) }
        self = events
    }
}

/// Something on a loop that wants to hear when its fd is ready. Called on the loop only.
public protocol IOHandler: AnyObject {
    func handleIO(_ events: IOEvents)
}

/// Work an object asks its loop to run after the current batch of events.
public protocol DeferredWork: AnyObject {
    func runDeferredWork()
}

/// A registered fd. `generation` makes a stale event for a closed and reused fd (curl
/// opens and closes sockets behind our back) recognisable and droppable.
public struct IORegistration: Hashable, Sendable {
    let slot: UInt32
    let generation: UInt32

    var token: UInt64 { UInt64(generation) << 32 | UInt64(slot) }
}
