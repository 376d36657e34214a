import LatchkeyLoop
import LatchkeyServer
import LatchkeyTestSupport
import LatchkeyTLS
import Logging
import Testing
@testable import Latchkey

@Suite struct TLSFailureLogTests {
    @Test func aFailureIsAWarningNamingListenerPeerReasonAndDetail() {
        let capture = LogCapture()
        let log = TLSFailureLog(logger: Logger(label: "test") { _ in capture })
        let failure = TLSHandshakeFailure(.certificateRefused, detail: "tlsv1 alert unknown ca")
        let now = LoopInstant(nanoseconds: 5_000_000_000)
        log.record(failure, listener: "lan", peer: .ipv4(host: "192.168.1.7", port: 50_123), now: now)
        log.record(failure, listener: "lan", peer: .ipv4(host: "192.168.1.7", port: 50_124), now: now.advanced(by: .seconds(1)))
        #expect(capture.messages.count == 1)
        let line = capture.messages.first ?? ""
        #expect(line.hasPrefix("warning tls handshake failed"))
        for part in [#""listener": lan"#, #""peer": 192.168.1.7"#, #""reason": certificate_refused"#, #""detail": tlsv1 alert unknown ca"#] {
            #expect(line.contains(part), "\(line)")
        }
    }

    @Test func aClientThatLeftMidHandshakeIsAnInfoLineNotAWarning() {
        let capture = LogCapture()
        let log = TLSFailureLog(logger: Logger(label: "test") { _ in capture })
        let failure = TLSHandshakeFailure(.closed, detail: "the client closed the connection without sending anything")
        log.record(failure, listener: "lan", peer: .ipv4(host: "10.0.0.9", port: 4_000), now: LoopInstant(nanoseconds: 1))
        #expect(capture.messages.first?.hasPrefix("info tls handshake failed") == true, "\(capture.messages)")
    }
}
