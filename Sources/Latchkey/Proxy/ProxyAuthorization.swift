#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyHTTP
import LatchkeyServer

/// `inbound.proxy_auth` on a forward listener: every request must carry
/// `Proxy-Authorization: Basic base64(user:password)` (RFC 9110 §11.7.2, RFC 7617) with the
/// configured password. Any user name is accepted (`latchkey` by convention): the password
/// is the secret, and HTTP_PROXY URLs need some user name to carry it
/// (`http://latchkey:PASSWORD@127.0.0.1:PORT`).
struct ProxyAuthorization: Sendable {
    /// The `CredentialStore` name holding the expected password.
    let credential: String

    init(listener: String) {
        credential = Config.proxyAuthSecretName(listener: listener)
    }

    enum Verdict: Sendable, Equatable {
        case authorized
        /// No Proxy-Authorization: a client that has not been challenged yet.
        case missing
        /// Not Basic, not the base64 of `user:password`, given twice, or the wrong password.
        case refused
    }

    /// RFC 9110 §11.7.1 and §15.5.8: a 407 carries the challenge the client must answer.
    static let challenge = HTTPField(name: "Proxy-Authenticate", value: "Basic realm=\"latchkey\"")

    /// The request's `fields` against the password held in `credentials` (none held: refused).
    func judge(_ fields: HTTPFields, credentials: CredentialSnapshot) -> Verdict {
        Self.judge(fields.values(named: .proxyAuthorization), password: credentials[credential])
    }

    /// `values`: every Proxy-Authorization field of the request. One, and only one, must
    /// hold the password; the password is compared in constant time.
    static func judge(_ values: [String], password expected: String?) -> Verdict {
        guard let value = values.first else { return .missing }
        guard values.count == 1, let expected, let presented = password(in: value) else { return .refused }
        return constantTimeEquals(presented, expected) ? .authorized : .refused
    }

    /// The password of a `Basic` credentials value: the scheme (any case, RFC 9110 §11.1),
    /// one or more spaces, then padded base64 (RFC 4648 §4) of `user:password`, split at the
    /// first colon (RFC 7617 §2: a user-id holds none). Nil for anything else, or for a
    /// password that is not UTF-8.
    static func password(in value: String) -> String? {
        let trimmed = value.trimmingSpaces()
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "basic" else { return nil }
        let encoded = trimmed[space...].drop { $0 == " " }
        guard !encoded.isEmpty, let decoded = Data(base64Encoded: String(encoded)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return String(validating: decoded[decoded.index(after: colon)...], as: UTF8.self)
    }

    /// The 407 for a request that is not `.authorized`, with its challenge field. The
    /// message never repeats what the client sent.
    static func refusal(_ verdict: Verdict) -> (document: ErrorDocument, fields: HTTPFields) {
        let message = switch verdict {
        case .missing, .authorized:
            "this proxy requires Proxy-Authorization: Basic with its password and any user name "
                + "(e.g. HTTPS_PROXY=http://latchkey:PASSWORD@HOST:PORT)"
        case .refused:
            "the Proxy-Authorization credentials are not this proxy's password"
        }
        var fields = HTTPFields()
        fields.append(challenge)
        return (ErrorDocument(status: 407, error: "proxy_authentication_required", message: message), fields)
    }
}
