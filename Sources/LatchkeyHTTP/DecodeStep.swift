/// What one call of a push-based decoder did: how many bytes from the front of its input it
/// used (drop them, keep the rest) and what it found there.
public struct DecodeStep<Event: Sendable & Equatable>: Sendable, Equatable {
    public var consumed: Int
    public var event: Event

    public init(consumed: Int, event: Event) {
        self.consumed = consumed
        self.event = event
    }
}
