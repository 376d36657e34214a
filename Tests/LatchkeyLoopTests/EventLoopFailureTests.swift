import Foundation
@testable import LatchkeyLoop
import Synchronization
import Testing

@Suite struct EventLoopFailureTests {
    /// epoll_wait failing for a reason other than a signal used to be taken as "no events",
    /// so the loop spun on the failing call forever. Now the loop stops and its owner hears
    /// why.
    @Test func failedEpollWaitStopsTheLoopAndReachesItsOwner() throws {
        let reported = Mutex<SystemError?>(nil)
        let thread = try EventLoopThread(index: 0, failed: { error in reported.withLock { $0 = error } }) { loop in
            // Put an fd that is not an epoll instance where the loop's is: epoll_wait(2)
            // then fails with EINVAL.
            let notEpoll = open("/dev/null", O_RDONLY | O_CLOEXEC)
            #expect(dup2(notEpoll, loop.epollFD) == loop.epollFD)
            close(notEpoll)
        }
        thread.join()
        let error = reported.withLock { $0 }
        #expect(error?.call == "epoll_wait")
        #expect(error?.errno == EINVAL)
    }
}
