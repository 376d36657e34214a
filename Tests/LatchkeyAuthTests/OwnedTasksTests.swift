import Synchronization
import Testing
@testable import LatchkeyAuth

@Suite struct OwnedTasksTests {
    /// Polls (letting tasks run) until `condition` holds; an issue after about 5 s.
    func eventually(_ condition: () -> Bool) async {
        for _ in 0..<5000 where !condition() { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }

    @Test func aFinishedTaskIsNoLongerHeld() async {
        let tasks = OwnedTasks()
        let ran = Mutex(false)
        #expect(tasks.run { ran.withLock { $0 = true } })
        await eventually { ran.withLock { $0 } && tasks.count == 0 }
    }

    @Test func cancelAllCancelsTheRunningTasksAndRefusesNewOnes() async {
        let tasks = OwnedTasks()
        let (cancelled, note) = AsyncStream<Void>.makeStream()
        tasks.run {
            // Ends only when cancelled.
            try? await Task.sleep(for: .seconds(3600))
            note.yield()
        }
        #expect(tasks.count == 1)
        tasks.cancelAll()
        #expect(tasks.count == 0)
        for await _ in cancelled { break }
        #expect(!tasks.run { Issue.record("started after cancelAll") })
    }
}
