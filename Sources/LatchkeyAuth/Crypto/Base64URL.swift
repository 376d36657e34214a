#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// base64url without padding (RFC 4648 §5), as JWTs and PKCE use it.
public enum Base64URL {
    public static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        let standard = Data(bytes).base64EncodedString()
        return String(String.UnicodeScalarView(standard.unicodeScalars.lazy.filter { $0 != "=" }.map {
            switch $0 {
            case "+": "-"
            case "/": "_"
            default: $0
            }
        }))
    }

    /// nil for anything that is not base64url (padding is tolerated).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = String(String.UnicodeScalarView(text.unicodeScalars.lazy.filter { $0 != "=" }.map {
            switch $0 {
            case "-": "+"
            case "_": "/"
            default: $0
            }
        }))
        guard standard.utf8.count % 4 != 1 else { return nil }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
