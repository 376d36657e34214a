import CCurlShims
import LatchkeyLoop
#if canImport(Glibc)
import Glibc
#endif

/// What the multi handle's callbacks touch: curl's sockets as epoll registrations on the
/// loop, and curl's single timeout as a `LoopTimer`. The callbacks only record interest and
/// deadlines; the loop calls back into curl (`UpstreamClient.socketAction`) afterwards.
///
/// This object, not the client, is the callbacks' context so that it outlives
/// `curl_multi_cleanup` in the client's `deinit` (cleanup closes pooled connections through
/// `closeSocketCallback`).
///
/// Registrations are lazy. curl reports CURL_POLL_REMOVE for a connection's socket when a
/// transfer ends and re-adds it when the next transfer reuses the connection; keeping the
/// epoll registration across that gap saves two `epoll_ctl` calls per reused request. This
/// is safe only for sockets whose close we hear about: the ones opened by
/// `openSocketCallback` are closed through `closeSocketCallback`, which unregisters before
/// closing. Any other socket curl shows us is unregistered eagerly on CURL_POLL_REMOVE.
///
/// The sockets are kept by descriptor in a dictionary, each entry from the socket's opening
/// (or curl's first word about it) to its close. Not in an array indexed by descriptor:
/// curl's sockets take the lowest free numbers, above every client connection open at the
/// time, so such an array grew with the client connections (56 bytes each, 100 per
/// connection with the array's growth, at 10,000 idle ones) for a few dozen upstream
/// sockets.
///
/// Loop-bound: its stored properties are `@exclusivity(unchecked)`, as `EventLoop` says why.
final class MultiEvents: DeferredWork {
    let loop: EventLoop
    /// Set by the client once it exists, and back to nil first thing in its `deinit`.
    /// Not `weak`: a weak reference gives the client a side table, and every retain of it
    /// (each exchange's `unowned` reference, several times per request) takes the slow
    /// path through that table.
    unowned(unsafe) var client: UpstreamClient?
    @exclusivity(unchecked) private(set) var timer: LoopTimer!
    @exclusivity(unchecked) private var sockets: [Int32: SocketEntry] = [:]
    /// epoll_ctl calls made for curl's sockets (ADD, MOD, DEL), for tests and metrics.
    @exclusivity(unchecked) private(set) var epollOperations = 0

    private struct SocketEntry {
        var registration: IORegistration?
        var handler: CurlSocketHandler?
        /// A connect-only connection's socket, handed over: its readiness goes here, and
        /// curl's interest in it is ignored until curl closes it.
        var owner: IOHandler?
        /// What epoll watches now.
        var registered: IOEvents = []
        /// What curl asked for last; empty after CURL_POLL_REMOVE.
        var wanted: IOEvents = []
        /// Opened by `openSocketCallback`: curl closes it through `closeSocketCallback`.
        var ours = false

        /// Nothing left to remember: no registration, and no close to hear about.
        var isEmpty: Bool { registration == nil && !ours && owner == nil }
    }

    /// Sockets known now, for tests.
    var socketCount: Int { sockets.count }

    init(loop: EventLoop) {
        self.loop = loop
        timer = ClosureTimer { [unowned self] in self.client?.socketAction(CURL_SOCKET_TIMEOUT, events: 0) }
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: recorded by curl's callbacks

    /// CURLMOPT_SOCKETFUNCTION. Returns -1 if epoll refused the socket (curl then fails the
    /// transfers on it).
    func curlWantsSocket(_ fd: Int32, what: Int32) -> Int32 {
        guard fd >= 0 else { return 0 }
        if what == CURL_POLL_REMOVE {
            guard var entry = sockets[fd], entry.owner == nil else { return 0 }
            entry.wanted = []
            if entry.registration != nil {
                if !entry.ours {
                    dropRegistration(&entry)
                } else if entry.registered != .readable {
                    // Writable interest on an idle socket would fire at once; readable only
                    // wakes us if the peer closes, and `socketReady` drops it then.
                    _ = setInterest(fd, &entry, .readable)
                }
            }
            return store(entry, for: fd)
        }
        var entry = sockets[fd] ?? SocketEntry()
        guard entry.owner == nil else { return 0 }
        var wanted: IOEvents = []
        if what & CURL_POLL_IN != 0 { wanted.insert(.readable) }
        if what & CURL_POLL_OUT != 0 { wanted.insert(.writable) }
        entry.wanted = wanted
        let ok = setInterest(fd, &entry, wanted)
        _ = store(entry, for: fd)
        return ok ? 0 : -1
    }

    /// CURLMOPT_TIMERFUNCTION: -1 disarms, otherwise curl wants `curl_multi_socket_action(
    /// CURL_SOCKET_TIMEOUT)` after `milliseconds`. Armed against the fresh clock, not the
    /// loop's cached `now`, so that a 0 ms timeout set while timers run waits for the next
    /// loop iteration instead of spinning inside this one.
    ///
    /// A 0 ms timeout (curl's "call me again now", e.g. right after a transfer is added)
    /// runs once per loop iteration after the current events instead: waiting for the next
    /// iteration would cost an extra epoll_wait per request.
    func curlWantsTimeout(milliseconds: Int) {
        if milliseconds < 0 {
            loop.disarm(timer)
        } else if milliseconds == 0 && immediateRunIteration != loop.now {
            immediateRunIteration = loop.now
            loop.disarm(timer)
            loop.runAfterEvents(self)
        } else {
            loop.arm(timer, at: LoopInstant.now().advanced(by: .milliseconds(milliseconds)))
        }
    }

    /// The loop iteration (its `now`) in which a 0 ms timeout last ran without the timer.
    @exclusivity(unchecked) private var immediateRunIteration: LoopInstant?

    /// The 0 ms timeout, run after the current events.
    func runDeferredWork() {
        client?.socketAction(CURL_SOCKET_TIMEOUT, events: 0)
    }

    /// CURLOPT_OPENSOCKETFUNCTION: socket(2) with SOCK_CLOEXEC, remembered as ours.
    func openSocket(family: Int32, type: Int32, protocol proto: Int32) -> Int32 {
        let fd = socket(family, type | Int32(SOCK_CLOEXEC.rawValue), proto)
        guard fd >= 0 else { return fd }
        // A leftover registration for this number belongs to a socket closed behind our
        // back; the kernel already dropped it from epoll.
        if var leftover = sockets[fd] { dropRegistration(&leftover) }
        var entry = SocketEntry()
        entry.ours = true
        sockets[fd] = entry
        return fd
    }

    /// CURLOPT_CLOSESOCKETFUNCTION: unregister first, then close(2); the socket is forgotten.
    func closeSocket(_ fd: Int32) -> Int32 {
        if fd >= 0, var entry = sockets.removeValue(forKey: fd) { dropRegistration(&entry) }
        return close(fd)
    }

    /// A connect-only connection's socket is watched for `events` on `owner`'s behalf from
    /// now on; `[]` unregisters it, since epoll reports a hang-up even without interest.
    /// The registration stays here, so that curl's close of the socket drops it as for any
    /// other.
    func handOver(_ fd: Int32, events: IOEvents, to owner: IOHandler) throws(SystemError) {
        guard fd >= 0 else { throw SystemError(call: "epoll_ctl", errno: EBADF) }
        var entry = sockets[fd] ?? SocketEntry()
        if entry.owner !== owner {
            dropRegistration(&entry)
            entry.owner = owner
            entry.wanted = []
        }
        var ok = true
        if events.isEmpty {
            dropRegistration(&entry)
        } else {
            ok = setInterest(fd, &entry, events)
        }
        sockets[fd] = entry
        guard ok else { throw SystemError(call: "epoll_ctl", errno: EBADF) }
    }

    // MARK: driven by the loop

    /// epoll reported `events` for curl's socket `fd`.
    fileprivate func socketReady(_ fd: Int32, _ events: IOEvents) {
        guard var entry = sockets[fd] else { return }
        let wanted = entry.wanted
        if wanted.isEmpty {
            // An idle pooled connection woke up: the peer closed it (or sent something it
            // should not have). Stop watching; curl's liveness check drops it on reuse.
            dropRegistration(&entry)
            _ = store(entry, for: fd)
            return
        }
        let failed = events.contains(.hangup) || events.contains(.error)
        var mask: Int32 = 0
        if wanted.contains(.readable), events.contains(.readable) || failed { mask |= CURL_CSELECT_IN }
        if wanted.contains(.writable), events.contains(.writable) || failed { mask |= CURL_CSELECT_OUT }
        guard mask != 0 else { return }
        client?.socketAction(fd, events: mask)
    }

    // MARK: epoll bookkeeping

    /// Keeps `entry` for `fd`, or forgets the socket when there is nothing left to keep.
    /// Returns 0, for curl's socket callback.
    private func store(_ entry: SocketEntry, for fd: Int32) -> Int32 {
        if entry.isEmpty {
            sockets[fd] = nil
        } else {
            sockets[fd] = entry
        }
        return 0
    }

    /// Makes epoll watch `events` for socket `fd`, with as few epoll_ctl calls as possible.
    private func setInterest(_ fd: Int32, _ entry: inout SocketEntry, _ events: IOEvents) -> Bool {
        if let registration = entry.registration {
            if entry.registered == events { return true }
            epollOperations += 1
            do {
                try loop.modify(registration, events: events)
                entry.registered = events
                return true
            } catch {
                // The fd was closed and reused behind our back: start over.
                dropRegistration(&entry)
            }
        }
        let handler: IOHandler
        if let owner = entry.owner {
            handler = owner
        } else if let existing = entry.handler {
            handler = existing
        } else {
            let made = CurlSocketHandler(events: self, fd: fd)
            entry.handler = made
            handler = made
        }
        epollOperations += 1
        do {
            entry.registration = try loop.register(fd: fd, events: events, handler: handler)
            entry.registered = events
            return true
        } catch {
            return false
        }
    }

    private func dropRegistration(_ entry: inout SocketEntry) {
        guard let registration = entry.registration else { return }
        epollOperations += 1
        loop.unregister(registration)
        entry.registration = nil
        entry.registered = []
    }
}

/// The loop's handler for one of curl's sockets (one object per fd number, reused).
final class CurlSocketHandler: IOHandler {
    unowned let events: MultiEvents
    let fd: Int32

    init(events: MultiEvents, fd: Int32) {
        self.events = events
        self.fd = fd
    }

    func handleIO(_ ioEvents: IOEvents) {
        events.socketReady(fd, ioEvents)
    }
}

// MARK: C callbacks: capture-free, context through Unmanaged (see STYLE.md)

let multiSocketCallback: curl_socket_callback = { _, fd, what, userp, _ in
    Unmanaged<MultiEvents>.fromOpaque(userp!).takeUnretainedValue().curlWantsSocket(fd, what: what)
}

let multiTimerCallback: curl_multi_timer_callback = { _, milliseconds, userp in
    Unmanaged<MultiEvents>.fromOpaque(userp!).takeUnretainedValue().curlWantsTimeout(milliseconds: milliseconds)
    return 0
}

let openSocketCallback: curl_opensocket_callback = { clientp, _, address in
    guard let address else { return CURL_SOCKET_BAD }
    return Unmanaged<CurlEasy>.fromOpaque(clientp!).takeUnretainedValue().openSocket(address)
}

let closeSocketCallback: curl_closesocket_callback = { clientp, fd in
    Unmanaged<MultiEvents>.fromOpaque(clientp!).takeUnretainedValue().closeSocket(fd)
}
