/// Parsers for the scalar notations the config accepts: durations and byte sizes.
/// Public so that command-line flags can use the same notation.
public enum ConfigScalars {
    public static let durationExpectation = "a duration such as 500ms, 5s, 2m, 1h, 1m30s, 30d or integer seconds"
    public static let byteSizeExpectation = "a size such as 8192, 64KiB, 10MiB, 1GB"

    /// "500ms", "5s", "2m", "1h", "1m30s", "1.5s", "250us", "30d" (days of 24 hours, for
    /// a recipe's lifetime), or bare integer seconds "30".
    public static func duration(_ text: String) -> Duration? {
        let trimmed = text.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty else { return nil }
        if let seconds = Int64(trimmed), seconds >= 0 {
            let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            return overflow ? nil : .nanoseconds(nanoseconds)
        }
        var bytes = Substring(trimmed).utf8[...]
        var total: Int64 = 0
        while !bytes.isEmpty {
            guard let (whole, fraction, fractionDigits) = number(&bytes) else { return nil }
            let unit = bytes.prefix { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 == 0xC2 || $0 == 0xB5 }
            bytes = bytes.dropFirst(unit.count)
            let multiplier: Int64
            switch String(decoding: unit, as: UTF8.self) {
            case "ns": multiplier = 1
            case "us", "µs": multiplier = 1_000
            case "ms": multiplier = 1_000_000
            case "s": multiplier = 1_000_000_000
            case "m": multiplier = 60_000_000_000
            case "h": multiplier = 3_600_000_000_000
            case "d": multiplier = 86_400_000_000_000
            default: return nil
            }
            let (wholePart, overflowWhole) = whole.multipliedReportingOverflow(by: multiplier)
            guard !overflowWhole else { return nil }
            var fractionPart: Int64 = 0
            if fractionDigits > 0 {
                var scale = 1.0
                for _ in 0..<fractionDigits { scale *= 10 }
                fractionPart = Int64((Double(fraction) / scale * Double(multiplier)).rounded())
            }
            let (sum, overflowSum) = total.addingReportingOverflow(wholePart)
            guard !overflowSum else { return nil }
            let (sum2, overflowSum2) = sum.addingReportingOverflow(fractionPart)
            guard !overflowSum2 else { return nil }
            total = sum2
        }
        return .nanoseconds(total)
    }

    /// "8192", "64KiB", "10MiB", "1GiB" (powers of 1024), "64KB", "10MB", "1GB" (powers of
    /// 1000), "100B".
    public static func byteSize(_ text: String) -> UInt64? {
        let trimmed = text.trimmingASCIIWhitespace()
        let digits = trimmed.utf8.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard !digits.isEmpty, let value = UInt64(String(decoding: digits, as: UTF8.self)) else { return nil }
        let unit = String(decoding: trimmed.utf8.dropFirst(digits.count), as: UTF8.self)
            .trimmingASCIIWhitespace().lowercased()
        let multiplier: UInt64
        switch unit {
        case "", "b": multiplier = 1
        case "kib", "k": multiplier = 1 << 10
        case "mib", "m": multiplier = 1 << 20
        case "gib", "g": multiplier = 1 << 30
        case "kb": multiplier = 1_000
        case "mb": multiplier = 1_000_000
        case "gb": multiplier = 1_000_000_000
        default: return nil
        }
        let (result, overflow) = value.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : result
    }

    /// Digits, optionally with a fraction: (whole, fraction digits as an integer, count).
    private static func number(_ bytes: inout Substring.UTF8View.SubSequence) -> (Int64, Int64, Int)? {
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let wholeDigits = bytes.prefix(while: isDigit)
        guard !wholeDigits.isEmpty, wholeDigits.count <= 18 else { return nil }
        bytes = bytes.dropFirst(wholeDigits.count)
        let whole = Int64(String(decoding: wholeDigits, as: UTF8.self)) ?? 0
        guard bytes.first == UInt8(ascii: ".") else { return (whole, 0, 0) }
        bytes = bytes.dropFirst()
        let fractionDigits = bytes.prefix(while: isDigit).prefix(9)
        guard !fractionDigits.isEmpty else { return nil }
        bytes = bytes.dropFirst(fractionDigits.count)
        // Digits beyond nanosecond precision are ignored.
        bytes = bytes.drop(while: isDigit)
        return (whole, Int64(String(decoding: fractionDigits, as: UTF8.self)) ?? 0, fractionDigits.count)
    }
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let bytes = utf8.drop(while: isSpace)
        let end = bytes.reversed().prefix(while: isSpace).count
        return String(decoding: bytes.dropLast(end), as: UTF8.self)
    }
}
