import Foundation
@testable import Latchkey
import Testing

struct LoopBoundTests {
    final class Marker {}

    @Test func valueIsReachableOnTheThreadThatBoundIt() {
        let marker = Marker()
        #expect(LoopBound(marker).value === marker)
    }

    #if DEBUG
    @Test func valueUsedOffItsLoopStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            let bound = LoopBound(Marker())
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = bound.value
                done.signal()
            }.start()
            done.wait()
        }
    }
    #endif
}
