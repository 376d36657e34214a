import LatchkeyAuth
import LatchkeyServer

/// `GET /.latchkey/handoff?to=/path`: an app that opens its web view on a known page
/// starts the handoff itself. `to` is where the browser goes afterwards, so it must be a
/// path on this proxy, never another site (no open redirect).
enum HandoffDestination {
    static let path = "/.latchkey/handoff"

    enum Parsed: Equatable {
        case page(String)
        case refused(ErrorDocument)
    }

    /// The page `to` names, as a request target of this proxy, or the error to answer.
    static func page(query: Substring?) -> Parsed {
        let values = FormEncoding.decode(query ?? "").filter { $0.0 == "to" }.map(\.1)
        guard values.count == 1, let to = values.first else {
            return .refused(refusal("\(path) needs exactly one to= parameter naming the page, e.g. \(path)?to=/projects"))
        }
        // "//host" and "/\host" are other sites to a browser (WHATWG URL treats "\" as "/").
        guard to.hasPrefix("/"), !to.hasPrefix("//"), !to.contains("\\"),
              !to.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F || $0 == UInt8(ascii: "#") }),
              RequestTarget(to) != nil else {
            return .refused(refusal("to= must be a path on this proxy, such as /projects, without dot-segments"))
        }
        return .page(to)
    }

    static func refusal(_ message: String) -> ErrorDocument {
        ErrorDocument(status: 400, error: "bad_request", message: message)
    }
}
