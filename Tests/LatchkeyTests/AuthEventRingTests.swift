import Foundation
import LatchkeyAuth
import Synchronization
import Testing
@testable import Latchkey

@Suite struct AuthEventRingTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func recorded(_ second: Int, _ identity: String = "web", _ kind: AuthEvent.Kind = .refreshed, _ detail: String? = nil) -> RecordedAuthEvent {
        RecordedAuthEvent(at: start.addingTimeInterval(TimeInterval(second)), event: AuthEvent(identity: identity, kind: kind, detail: detail))
    }

    @Test func holdsTheNewestUpToItsCapacityNewestFirst() {
        var ring = AuthEventRing(capacity: 3)
        #expect(ring.newestFirst.isEmpty)
        ring.append(recorded(0))
        ring.append(recorded(1))
        #expect(ring.newestFirst == [recorded(1), recorded(0)])
        ring.append(recorded(2))
        #expect(ring.newestFirst == [recorded(2), recorded(1), recorded(0)])
        for second in 3..<8 { ring.append(recorded(second)) }
        #expect(ring.newestFirst == [recorded(7), recorded(6), recorded(5)])
    }

    @Test func keepsEachIdentitysLastFailureAfterItScrollsOut() {
        var ring = AuthEventRing(capacity: 2)
        ring.append(recorded(0, "web", .failed, "first"))
        ring.append(recorded(1, "web", .failed, "second"))
        ring.append(recorded(2, "api", .failed, "down"))
        for second in 3..<6 { ring.append(recorded(second, "web", .refreshed)) }
        #expect(!ring.newestFirst.contains { $0.event.kind == .failed })
        #expect(ring.lastFailures == ["web": recorded(1, "web", .failed, "second"), "api": recorded(2, "api", .failed, "down")])
    }

    @Test func theRecorderStampsEachEventWithItsClock() {
        let clock = Mutex(start)
        let recorder = AuthEventRecorder(capacity: 2, clock: { clock.withLock { $0 } })
        recorder.record(AuthEvent(identity: "web", kind: .acquired))
        clock.withLock { $0 = start.addingTimeInterval(60) }
        recorder.record(AuthEvent(identity: "web", kind: .failed, detail: "connection refused"))
        #expect(recorder.events.newestFirst == [recorded(60, "web", .failed, "connection refused"), recorded(0, "web", .acquired)])
        #expect(recorder.events.lastFailures["web"]?.at == start.addingTimeInterval(60))
    }
}
