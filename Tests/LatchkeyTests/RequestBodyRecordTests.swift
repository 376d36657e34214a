import Testing
@testable import Latchkey

@Suite struct RequestBodyRecordTests {
    private func append(_ record: inout RequestBodyRecord, _ text: String, sent: Bool) {
        Array(text.utf8).withUnsafeBytes { record.append($0, sent: sent) }
    }

    @Test func keepsEverythingWithinTheLimitForAReplay() {
        var record = RequestBodyRecord(replayLimit: 8, declaredLength: nil)
        append(&record, "abc", sent: true)
        append(&record, "defgh", sent: true)
        #expect(record.complete)
        #expect(record.forNewTransfer() == Array("abcdefgh".utf8))
        // Still kept after a transfer took it: a replay sends it all again.
        #expect(record.forNewTransfer() == Array("abcdefgh".utf8))
    }

    @Test func overTheLimitItStopsKeepingWhatWasSent() {
        var record = RequestBodyRecord(replayLimit: 4, declaredLength: nil)
        append(&record, "abc", sent: true)
        append(&record, "de", sent: true)
        #expect(!record.complete)
        #expect(record.bytes.isEmpty)
    }

    @Test func unsentBytesAreHeldWhateverTheLimitUntilTaken() {
        var record = RequestBodyRecord(replayLimit: nil, declaredLength: nil)
        append(&record, "held while waiting for a token", sent: false)
        #expect(!record.complete)
        #expect(record.forNewTransfer() == Array("held while waiting for a token".utf8))
        #expect(record.bytes.isEmpty)
    }

    @Test func aDeclaredLengthOverTheLimitIsNeverKept() {
        var record = RequestBodyRecord(replayLimit: 4, declaredLength: 5)
        append(&record, "ab", sent: true)
        #expect(!record.complete)
        #expect(record.bytes.isEmpty)
    }
}
