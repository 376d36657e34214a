@testable import LatchkeyServer
import Testing

struct ConnectionCountTests {
    @Test func admitsUpToTheLimitAndAgainAfterARelease() {
        let count = ConnectionCount()
        #expect(count.admit(limit: 2))
        #expect(count.admit(limit: 2))
        #expect(!count.admit(limit: 2))
        #expect(count.current == 2)
        count.release()
        #expect(count.admit(limit: 2))
        // A lower limit after a reload refuses until enough have closed.
        #expect(!count.admit(limit: 1))
    }
}
