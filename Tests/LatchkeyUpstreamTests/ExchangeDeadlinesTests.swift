import LatchkeyLoop
import Testing
@testable import LatchkeyUpstream

@Suite struct ExchangeDeadlinesTests {
    private func at(_ seconds: UInt64) -> LoopInstant { LoopInstant(nanoseconds: seconds * 1_000_000_000) }

    @Test func theTimerGoesToTheEarlierDeadline() {
        var deadlines = ExchangeDeadlines()
        #expect(deadlines.next == nil)
        deadlines.idle = at(60)
        #expect(deadlines.next == at(60))
        deadlines.firstByte = at(30)
        #expect(deadlines.next == at(30))
        deadlines.firstByte = at(90)
        #expect(deadlines.next == at(60))
        deadlines.idle = nil
        #expect(deadlines.next == at(90))
    }

    @Test func onlyThePassedDeadlinesAreTakenAndForgotten() {
        var deadlines = ExchangeDeadlines(firstByte: at(30), idle: at(60))
        let early = deadlines.takePassed(now: at(10))
        #expect(early == (firstByte: false, idle: false))
        let first = deadlines.takePassed(now: at(30))
        #expect(first == (firstByte: true, idle: false))
        #expect(deadlines == ExchangeDeadlines(firstByte: nil, idle: at(60)))
        let both = ExchangeDeadlines(firstByte: at(30), idle: at(30))
        var copy = both
        #expect(copy.takePassed(now: at(31)) == (firstByte: true, idle: true))
        #expect(copy.next == nil)
    }

    /// The first byte came: the deadline goes, the timer stays where it was armed and finds
    /// nothing passed but what is due.
    @Test func aDroppedDeadlineFiresForNothing() {
        var deadlines = ExchangeDeadlines(firstByte: at(30), idle: at(60))
        let armedAt = deadlines.next
        deadlines.firstByte = nil
        #expect(armedAt == at(30))
        #expect(deadlines.takePassed(now: at(30)) == (firstByte: false, idle: false))
        #expect(deadlines.next == at(60))
    }
}
