import LatchkeyLoop
@testable import LatchkeyServer
import Testing

/// The epoll interest of a connection whose TLS read or write waits for the other
/// direction: never the blocked operation's own direction, which would be reported ready
/// on every turn.
struct CrossedTLSWaitTests {
    @Test func nothingBlockedKeepsWhatTheConnectionWants() {
        let none: CrossedTLSWait = []
        #expect(none.interest([.readable, .writable]) == [.readable, .writable])
        #expect(none.interest(.readable) == .readable)
    }

    @Test func aReadThatWantsToWriteWaitsForWritableOnly() {
        let wait: CrossedTLSWait = .readWantsWritable
        #expect(wait.interest(.readable) == .writable)
        #expect(wait.interest([.readable, .writable]) == .writable)
    }

    @Test func aWriteThatWantsToReadWaitsForReadableOnly() {
        let wait: CrossedTLSWait = .writeWantsReadable
        #expect(wait.interest(.writable) == .readable)
        #expect(wait.interest([]) == .readable)
    }

    @Test func bothBlockedWaitForBoth() {
        let wait: CrossedTLSWait = [.readWantsWritable, .writeWantsReadable]
        #expect(wait.interest([.readable, .writable]) == [.readable, .writable])
    }
}
