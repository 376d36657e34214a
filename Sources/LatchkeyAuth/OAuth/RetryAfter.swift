#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
enum RetryAfter {
    /// The wait the value asks for, from `now`; zero for a date already past, nil for a
    /// missing or malformed value.
    static func parse(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Int64(value).map { .seconds($0) } ?? .seconds(Int64.max)
        }
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        return .milliseconds(Int64(max(0, date.timeIntervalSince(now)) * 1000))
    }
}

/// HTTP-date (RFC 9110 §5.6.7) in its three forms, which recipients must all accept:
/// `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT` and
/// `Sun Nov  6 08:49:37 1994`.
enum HTTPDate {
    /// `now` places a two-digit year.
    static func parse(_ text: String, now: Date) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" })
        let day, month, year, time: Substring
        switch parts.count {
        case 6 where parts[5] == "GMT":
            (day, month, year, time) = (parts[1], parts[2], parts[3], parts[4])
        case 5:
            (month, day, time, year) = (parts[1], parts[2], parts[3], parts[4])
        default:
            return nil
        }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false).compactMap { Int($0) }
        guard let monthNumber = months.firstIndex(of: month).map({ $0 + 1 }),
              let dayNumber = Int(day), (1...31).contains(dayNumber),
              var yearNumber = Int(year), year.count == 2 || year.count == 4,
              clock.count == 3, (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        if year.count == 2 {
            // RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is in the past.
            let currentYear = 1970 + Int(now.timeIntervalSince1970 / 31_556_952)
            yearNumber += currentYear - currentYear % 100
            if yearNumber > currentYear + 50 { yearNumber -= 100 }
        }
        let days = daysSinceEpoch(year: yearNumber, month: monthNumber, day: dayNumber)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]))
    }

    private static let months: [Substring] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`); also for the times a recipe captures.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
