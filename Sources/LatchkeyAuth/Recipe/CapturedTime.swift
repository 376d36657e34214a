#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A time an answer gives (`expires_at`): RFC 3339 (`2016-08-26T17:04:39Z`, with a
/// fraction or an offset), TheMovieDB's `2016-08-26 17:04:39 UTC`, or Unix seconds.
enum CapturedTime {
    static func parse(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(text), seconds.isFinite, text.first?.isNumber == true { return Date(timeIntervalSince1970: seconds) }
        let bytes = Array(text.utf8)
        // `YYYY-MM-DD`, then `T`, `t` or a space (RFC 3339 §5.6's note), then `HH:MM:SS`.
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(bytes[10]),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(bytes[0..<4]), let month = number(bytes[5..<7]), let day = number(bytes[8..<10]),
              let hour = number(bytes[11..<13]), let minute = number(bytes[14..<16]), let second = number(bytes[17..<19]),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var rest = bytes[19...]
        var fraction = 0.0
        if rest.first == UInt8(ascii: ".") {
            let digits = rest.dropFirst().prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard !digits.isEmpty, let value = Double("0." + String(decoding: digits, as: UTF8.self)) else { return nil }
            fraction = value
            rest = rest[digits.endIndex...]
        }
        guard let offset = offset(String(decoding: rest, as: UTF8.self)) else { return nil }
        let days = HTTPDate.daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
    }

    /// The zone's offset from UTC in seconds: `Z`, `+HH:MM`, `-HH:MM`, or ` UTC`/` GMT`.
    private static func offset(_ zone: String) -> Int? {
        switch zone {
        case "Z", "z", " UTC", " GMT": return 0
        default:
            let bytes = Array(zone.utf8)
            guard bytes.count == 6, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"), bytes[3] == UInt8(ascii: ":"),
                  let hours = number(bytes[1..<3]), let minutes = number(bytes[4..<6]), hours < 24, minutes < 60
            else { return nil }
            return (bytes[0] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
        }
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(String(decoding: digits, as: UTF8.self))
    }
}
