import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// One epoll instance, its timers and its deferred work, confined to the thread that runs
/// it. Everything that touches a loop's connections, curl handles or timers runs here;
/// other threads reach it only through its `EventLoopHandle`.
///
/// Its stored properties, and those of the loop-bound objects of the data plane
/// (connections, transfers, exchanges), are `@exclusivity(unchecked)`: each object is
/// used on its loop's thread only, and Swift's run-time exclusivity checks cost about 76
/// instructions per access, a few thousand per proxied request (Benchmarks/RESULTS.md).
/// The compile-time checks stay.
public final class EventLoop {
    let epollFD: Int32
    @exclusivity(unchecked) private var slots: [Slot] = []
    @exclusivity(unchecked) private var freeSlots: [UInt32] = []
    @exclusivity(unchecked) private var timers = TimerHeap()
    @exclusivity(unchecked) private var deferred: [() -> Void] = []
    @exclusivity(unchecked) private var deferredObjects: [DeferredWork] = []
    /// The batches `runDeferred` is running.
    @exclusivity(unchecked) private var runningClosures: [() -> Void] = []
    @exclusivity(unchecked) private var runningObjects: [DeferredWork] = []
    @exclusivity(unchecked) private var running = false
    /// Objects that live as long as the loop (its server, its curl multi), found again by
    /// type from work sent to the loop.
    @exclusivity(unchecked) private var attachments: [ObjectIdentifier: AnyObject] = [:]
    /// The loop's notion of "now", refreshed once per wake-up so that per-request code
    /// does not read the clock again and again.
    public var now: LoopInstant { wokenAt }
    /// Behind `now`: another module reading a public stored property checks exclusivity at
    /// run time whatever its attribute says (about 60 instructions per read).
    @exclusivity(unchecked) private var wokenAt = LoopInstant.now()
    public let handle: EventLoopHandle
    /// The loop's position among its siblings, for logs and per-loop state.
    public let index: Int

    private struct Slot {
        var fd: Int32 = -1
        var generation: UInt32 = 0
        var handler: IOHandler?
    }

    public init(index: Int = 0) throws(SystemError) {
        self.index = index
        epollFD = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        let wakeFD: Int32
        do {
            wakeFD = try systemCall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
        } catch {
            close(epollFD)
            throw error
        }
        handle = EventLoopHandle(wakeFD: wakeFD)
        _ = try register(fd: wakeFD, events: .readable, handler: WakeHandler(loop: self))
    }

    deinit {
        close(epollFD)
    }

    // MARK: fds

    /// epoll_ctl(EPOLL_CTL_ADD). The loop keeps `handler` until `unregister`. `exclusive`
    /// (EPOLLEXCLUSIVE) is for an fd shared by several loops, such as a listening socket,
    /// so that one event wakes one loop rather than all.
    public func register(fd: Int32, events: IOEvents, handler: IOHandler, exclusive: Bool = false) throws(SystemError) -> IORegistration {
        let slot: UInt32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = UInt32(slots.count)
            slots.append(Slot())
        }
        slots[Int(slot)].generation &+= 1
        slots[Int(slot)].fd = fd
        slots[Int(slot)].handler = handler
        let registration = IORegistration(slot: slot, generation: slots[Int(slot)].generation)
        var event = epoll_event()
        // epoll_ctl(2): EPOLLEXCLUSIVE combines only with EPOLLIN/EPOLLOUT, not EPOLLRDHUP.
        event.events = exclusive ? (events.epollMask & ~EPOLLRDHUP.rawValue) | EPOLLEXCLUSIVE.rawValue : events.epollMask
        event.data.u64 = registration.token
        do {
            _ = try systemCall("epoll_ctl(ADD)") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
        } catch {
            release(slot)
            throw error
        }
        return registration
    }

    /// epoll_ctl(EPOLL_CTL_MOD). The kernel looks at the fd again as it changes it: an
    /// edge-triggered registration given its own events again is reported at the next wait
    /// if the fd is still ready.
    public func modify(_ registration: IORegistration, events: IOEvents) throws(SystemError) {
        guard let fd = liveFD(registration) else { return }
        var event = epoll_event()
        event.events = events.epollMask
        event.data.u64 = registration.token
        _ = try systemCall("epoll_ctl(MOD)") { epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) }
    }

    /// epoll_ctl(EPOLL_CTL_DEL), then forgets the handler. Call before closing the fd. An
    /// fd that curl already closed is not an error: the kernel dropped it for us.
    public func unregister(_ registration: IORegistration) {
        guard let fd = liveFD(registration) else { return }
        _ = try? systemCall("epoll_ctl(DEL)") { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
        release(registration.slot)
    }

    private func liveFD(_ registration: IORegistration) -> Int32? {
        let index = Int(registration.slot)
        guard index < slots.count, slots[index].generation == registration.generation,
              slots[index].handler != nil else { return nil }
        return slots[index].fd
    }

    private func release(_ slot: UInt32) {
        slots[Int(slot)].handler = nil
        slots[Int(slot)].fd = -1
        freeSlots.append(slot)
    }

    // MARK: timers and deferred work

    public func arm(_ timer: LoopTimer, after delay: Duration) {
        timers.arm(timer, at: now.advanced(by: delay))
    }

    public func arm(_ timer: LoopTimer, at deadline: LoopInstant) {
        timers.arm(timer, at: deadline)
    }

    public func disarm(_ timer: LoopTimer) {
        timers.disarm(timer)
    }

    /// Runs `work` on this loop after the current batch of events, outside any callback
    /// that is on the stack now (libcurl forbids re-entering the multi from its callbacks).
    public func runAfterEvents(_ work: @escaping () -> Void) {
        deferred.append(work)
    }

    /// The same for an object, kept alive until its work has run. For work scheduled
    /// several times per request: unlike a closure literal, it allocates nothing.
    public func runAfterEvents(_ work: DeferredWork) {
        deferredObjects.append(work)
    }

    // MARK: attachments

    public func attach<T: AnyObject>(_ object: T) {
        attachments[ObjectIdentifier(T.self)] = object
    }

    public func attachment<T: AnyObject>(_ type: T.Type) -> T? {
        attachments[ObjectIdentifier(type)] as? T
    }

    // MARK: running

    /// Runs until `stop()`; returns on the loop's own thread. Throws when epoll_wait(2)
    /// fails for a reason other than a signal (EBADF, EFAULT, EINVAL: the loop cannot go
    /// on, and retrying would spin): the loop has stopped, and its owner must end the
    /// process or replace it, since its connections and timers will never run again.
    public func run() throws(SystemError) {
        running = true
        let capacity = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        while running {
            runDeferred()
            // EINTR is retried inside `systemCall`, with the timeout worked out again.
            let count = try systemCall("epoll_wait") {
                epoll_wait(epollFD, events, Int32(capacity), waitTimeoutMilliseconds())
            }
            wokenAt = LoopInstant.now()
            for i in 0..<Int(count) {
                dispatch(events[i])
            }
            runDeferred()
            runExpiredTimers()
        }
        runDeferred()
    }

    /// Ends `run()` after the current iteration. Call on the loop (via the handle from
    /// elsewhere).
    public func stop() {
        running = false
    }

    private func dispatch(_ event: epoll_event) {
        let token = event.data.u64
        let slot = Int(token & 0xFFFF_FFFF)
        let generation = UInt32(token >> 32)
        guard slot < slots.count, slots[slot].generation == generation,
              let handler = slots[slot].handler else { return }
        handler.handleIO(IOEvents(epollMask: event.events))
    }

    private func runDeferred() {
        // Each batch is swapped with an emptied spare rather than copied: emptying an array
        // still shared with the batch being run allocated a new one on every turn.
        while !deferred.isEmpty || !deferredObjects.isEmpty {
            if !deferredObjects.isEmpty {
                swap(&deferredObjects, &runningObjects)
                for work in runningObjects { work.runDeferredWork() }
                runningObjects.removeAll(keepingCapacity: true)
            }
            if !deferred.isEmpty {
                swap(&deferred, &runningClosures)
                for work in runningClosures { work() }
                runningClosures.removeAll(keepingCapacity: true)
            }
        }
    }

    private func runExpiredTimers() {
        while let timer = timers.popExpired(now: now) {
            timer.timerFired()
        }
    }

    private func waitTimeoutMilliseconds() -> Int32 {
        guard let earliest = timers.earliest else { return -1 }
        let current = LoopInstant.now()
        guard earliest.deadline > current else { return 0 }
        // Round up so that the timer has expired when epoll_wait returns.
        let ms = (earliest.deadline.nanoseconds - current.nanoseconds + 999_999) / 1_000_000
        return Int32(min(ms, UInt64(Int32.max)))
    }

    fileprivate func drainCrossThreadWork() {
        for work in handle.takeWork() { work(self) }
    }
}

/// Reads the eventfd that other threads write to wake the loop, then runs their work.
private final class WakeHandler: IOHandler {
    unowned let loop: EventLoop
    init(loop: EventLoop) { self.loop = loop }

    func handleIO(_ events: IOEvents) {
        var value: UInt64 = 0
        _ = read(loop.handle.wakeFD, &value, 8)
        loop.drainCrossThreadWork()
    }
}
