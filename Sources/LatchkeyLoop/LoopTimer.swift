/// A re-armable one-shot timer run by one loop: `EventLoop.arm` puts it in the loop's heap
/// and the loop calls `timerFired()` once its deadline has passed, disarmed by then. Arming
/// an armed timer moves it: a connection re-arms one timer per request instead of
/// allocating. While armed, the loop holds it.
///
/// Subclass it and override `timerFired()`. An object made per connection or per request
/// is its own timer (`ServerConnection`, `UpgradeExchange`, `HTTP1Transfer`, which keeps two
/// deadlines on it): the deadline and the heap position are two fields of the object, where
/// a timer object beside it and the context of a closure calling back cost 96 bytes of heap
/// and two allocations. Anything else (several timers in one object, objects made rarely)
/// uses a `ClosureTimer`.
///
/// Loop-bound: its fields are `@exclusivity(unchecked)`, as `EventLoop` says why; each
/// re-arming checked two accesses at runtime.
open class LoopTimer {
    @exclusivity(unchecked) final var deadline = LoopInstant(nanoseconds: 0)
    /// Position in the loop's heap, or -1 when not armed. 32 bits: a subclass's first
    /// field of 4 bytes or less goes in the other 4 (`ServerConnection`'s socket).
    @exclusivity(unchecked) final var heapIndex: Int32 = -1

    public init() {}

    /// The deadline has passed. Runs on the loop, between its events.
    open func timerFired() {}

    public final var isArmed: Bool { heapIndex >= 0 }

    /// Where the timer is armed, or nil: an owner re-arming at an unchanged deadline can
    /// skip the heap without keeping a copy of its own.
    public final var armedDeadline: LoopInstant? { isArmed ? deadline : nil }
}

/// A timer that runs a closure: for objects with more than one timer, or made too rarely
/// for the closure's context to matter.
public final class ClosureTimer: LoopTimer {
    private let action: () -> Void

    public init(_ action: @escaping () -> Void) {
        self.action = action
    }

    override public func timerFired() {
        action()
    }
}

/// A binary min-heap of timers by deadline, with each timer knowing its index so that
/// disarming and re-arming are O(log n) and leave nothing stale behind.
struct TimerHeap {
    private(set) var timers: [LoopTimer] = []

    var earliest: LoopTimer? { timers.first }

    mutating func arm(_ timer: LoopTimer, at deadline: LoopInstant) {
        timer.deadline = deadline
        if timer.heapIndex >= 0 {
            siftUp(Int(timer.heapIndex))
            siftDown(Int(timer.heapIndex))
        } else {
            timer.heapIndex = Int32(timers.count)
            timers.append(timer)
            siftUp(timers.count - 1)
        }
    }

    mutating func disarm(_ timer: LoopTimer) {
        let index = Int(timer.heapIndex)
        guard index >= 0 else { return }
        let last = timers.count - 1
        if index != last {
            swapAt(index, last)
        }
        timers.removeLast()
        timer.heapIndex = -1
        if index < timers.count {
            siftUp(index)
            siftDown(index)
        }
    }

    /// Removes and returns the earliest timer if its deadline is at or before `now`.
    mutating func popExpired(now: LoopInstant) -> LoopTimer? {
        guard let first = timers.first, first.deadline <= now else { return nil }
        disarm(first)
        return first
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        timers.swapAt(a, b)
        timers[a].heapIndex = Int32(truncatingIfNeeded: a)
        timers[b].heapIndex = Int32(truncatingIfNeeded: b)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard timers[child].deadline < timers[parent].deadline else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < timers.count else { return }
            var smallest = left
            let right = left + 1
            if right < timers.count, timers[right].deadline < timers[left].deadline { smallest = right }
            guard timers[smallest].deadline < timers[parent].deadline else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }
}
