#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth

/// An auth event with the time it was recorded (events carry none of their own).
struct RecordedAuthEvent: Sendable, Equatable {
    var at: Date
    var event: AuthEvent
}

/// The recent auth events of a running serve, for the status page: the newest `capacity`
/// of them, and for each identity its last failure, kept apart so that it does not scroll
/// out with the rest. A value: the recorder appends under its lock and hands out copies.
struct AuthEventRing: Sendable, Equatable {
    let capacity: Int
    /// Oldest first until full; then `next` is where the oldest is, and is overwritten.
    private var slots: [RecordedAuthEvent] = []
    private var next = 0
    /// By identity name: its last `failed` event, however long ago.
    private(set) var lastFailures: [String: RecordedAuthEvent] = [:]

    init(capacity: Int) {
        precondition(capacity > 0, "an event ring holds at least one event")
        self.capacity = capacity
        slots.reserveCapacity(capacity)
    }

    mutating func append(_ recorded: RecordedAuthEvent) {
        if slots.count < capacity {
            slots.append(recorded)
        } else {
            slots[next] = recorded
        }
        next = (next + 1) % capacity
        if recorded.event.kind == .failed { lastFailures[recorded.event.identity] = recorded }
    }

    /// The events held, newest first. Until the ring is full `next` is its count, so the
    /// first slice is empty.
    var newestFirst: [RecordedAuthEvent] {
        Array((slots[next...] + slots[..<next]).reversed())
    }
}
