import Foundation
import Testing
@testable import LatchkeyAuth

@Suite struct RetryAfterTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110 §5.6.7's example.
    private let example = Date(timeIntervalSince1970: 784_111_777)

    @Test func delaySeconds() {
        #expect(RetryAfter.parse("120", now: example) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: example) == .zero)
        #expect(RetryAfter.parse(nil, now: example) == nil)
        #expect(RetryAfter.parse("", now: example) == nil)
        #expect(RetryAfter.parse("-5", now: example) == nil)
        #expect(RetryAfter.parse("1.5", now: example) == nil)
        #expect(RetryAfter.parse("soon", now: example) == nil)
    }

    @Test func httpDateInEachForm() {
        let earlier = example.addingTimeInterval(-90)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: earlier) == .seconds(90))
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: earlier) == .seconds(90))
        #expect(RetryAfter.parse("Sun Nov  6 08:49:37 1994", now: earlier) == .seconds(90))
        // A date already past asks for no wait.
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: example.addingTimeInterval(60)) == .zero)
    }

    @Test func datesAcrossTheCalendar() {
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT", now: example) == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT", now: example) == Date(timeIntervalSince1970: 951_825_600))
        #expect(HTTPDate.parse("Fri, 31 Dec 2100 23:59:59 GMT", now: example) == Date(timeIntervalSince1970: 4_133_980_799))
    }

    /// RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is in the past.
    @Test func twoDigitYearsAreReadAroundNow() {
        let in2023 = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(HTTPDate.parse("Monday, 01-Jan-73 00:00:00 GMT", now: in2023) == HTTPDate.parse("Mon, 01 Jan 2073 00:00:00 GMT", now: in2023))
        #expect(HTTPDate.parse("Sunday, 01-Jan-74 00:00:00 GMT", now: in2023) == HTTPDate.parse("Tue, 01 Jan 1974 00:00:00 GMT", now: in2023))
    }

    @Test func malformedDates() {
        for text in ["Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
                     "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49 GMT", "06 Nov 1994", "Sun, 06 Nov 199 08:49:37 GMT"] {
            #expect(HTTPDate.parse(text, now: example) == nil, "\(text)")
        }
    }
}
