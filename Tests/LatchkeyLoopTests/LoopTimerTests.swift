@testable import LatchkeyLoop
import Synchronization
import Testing

@Suite struct LoopTimerTests {
    /// An object that is its own timer, as a connection is.
    private final class Owner: LoopTimer {
        private let fired: (Owner) -> Void
        var firings = 0

        init(fired: @escaping (Owner) -> Void) {
            self.fired = fired
        }

        override func timerFired() {
            firings += 1
            fired(self)
        }
    }

    /// What the loop's thread saw, read once the loop has stopped.
    private struct Seen: Sendable {
        var firings: [Int] = []
        var armedWhenFired: Bool?
        var deadlineAfterRearm: LoopInstant?
        var expectedDeadline: LoopInstant?
    }

    private final class Recorder: Sendable {
        let seen = Mutex(Seen())
        func withLock(_ body: (inout Seen) -> Void) { seen.withLock { body(&$0) } }
    }

    /// Runs `body` on a loop thread of its own until the loop stops; returns what it saw.
    private func run(_ body: @escaping @Sendable (EventLoop, Recorder) -> Void) throws -> Seen {
        let recorder = Recorder()
        let thread = try EventLoopThread(index: 0) { loop in body(loop, recorder) }
        thread.join()
        return recorder.seen.withLock { $0 }
    }

    @Test func theLoopCallsTheOverrideOnceItsDeadlinePassedDisarmedByThen() throws {
        let seen = try run { loop, seen in
            let owner = Owner { owner in
                seen.withLock {
                    $0.firings.append(owner.firings)
                    $0.armedWhenFired = owner.isArmed
                }
                // Long enough for a second firing to show.
                loop.arm(ClosureTimer {
                    seen.withLock { $0.firings.append(owner.firings) }
                    loop.stop()
                }, after: .milliseconds(5))
            }
            loop.arm(owner, after: .milliseconds(1))
        }
        #expect(seen.firings == [1, 1])
        #expect(seen.armedWhenFired == false)
    }

    @Test func rearmingMovesTheDeadline() throws {
        let seen = try run { loop, seen in
            let owner = Owner { owner in
                seen.withLock { $0.firings.append(owner.firings) }
                loop.stop()
            }
            loop.arm(owner, after: .milliseconds(1))
            loop.arm(owner, after: .milliseconds(8))
            let deadline = owner.armedDeadline
            // Before the new deadline: the owner has not fired.
            loop.arm(ClosureTimer {
                seen.withLock { $0.firings.append(owner.firings) }
            }, after: .milliseconds(3))
            seen.withLock {
                $0.deadlineAfterRearm = deadline
                $0.expectedDeadline = loop.now.advanced(by: .milliseconds(8))
            }
        }
        #expect(seen.deadlineAfterRearm == seen.expectedDeadline)
        #expect(seen.firings == [0, 1])
    }

    @Test func aClosureTimerRunsItsClosure() throws {
        let seen = try run { loop, seen in
            loop.arm(ClosureTimer {
                seen.withLock { $0.firings.append(1) }
                loop.stop()
            }, after: .milliseconds(1))
        }
        #expect(seen.firings == [1])
    }
}
