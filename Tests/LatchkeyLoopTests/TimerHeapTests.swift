import Testing
@testable import LatchkeyLoop

@Suite struct TimerHeapTests {
    private func drain(_ heap: inout TimerHeap) -> [UInt64] {
        var order: [UInt64] = []
        while let timer = heap.popExpired(now: LoopInstant(nanoseconds: .max)) {
            order.append(timer.deadline.nanoseconds)
        }
        return order
    }

    @Test func popsInDeadlineOrder() {
        var heap = TimerHeap()
        let deadlines: [UInt64] = [50, 10, 40, 30, 20, 60, 5]
        for d in deadlines { heap.arm(ClosureTimer {}, at: LoopInstant(nanoseconds: d)) }
        #expect(drain(&heap) == deadlines.sorted())
    }

    @Test func disarmRemovesOnlyThatTimer() {
        var heap = TimerHeap()
        let timers = (0..<20).map { _ in ClosureTimer {} }
        for (i, t) in timers.enumerated() { heap.arm(t, at: LoopInstant(nanoseconds: UInt64(100 - i))) }
        for t in timers.enumerated() where t.offset % 3 == 0 { heap.disarm(t.element) }
        let expected = timers.enumerated().filter { $0.offset % 3 != 0 }.map { UInt64(100 - $0.offset) }.sorted()
        #expect(drain(&heap) == expected)
        #expect(timers.allSatisfy { !$0.isArmed })
    }

    @Test func rearmMovesTheTimer() {
        var heap = TimerHeap()
        let a = ClosureTimer {}, b = ClosureTimer {}
        heap.arm(a, at: LoopInstant(nanoseconds: 10))
        heap.arm(b, at: LoopInstant(nanoseconds: 20))
        heap.arm(a, at: LoopInstant(nanoseconds: 30))
        #expect(heap.popExpired(now: LoopInstant(nanoseconds: 25)) === b)
        #expect(heap.popExpired(now: LoopInstant(nanoseconds: 25)) == nil)
        #expect(heap.popExpired(now: LoopInstant(nanoseconds: 30)) === a)
    }
}
