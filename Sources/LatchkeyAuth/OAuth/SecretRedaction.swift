#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The secrets an OAuth request carries, cut out of what the server says back before it
/// becomes an error message: a server may quote the refresh token or code it rejects.
/// Every form value counts as secret unless its field is known to be public, plus the
/// credentials of the `Authorization` field. A recipe's failures use it too, with the
/// values the recipe holds (`init(values:)`).
struct SecretRedaction {
    private let secrets: [String]

    init(_ request: AuthHTTPRequest) {
        var secrets: [String] = []
        if request.fields["Content-Type"] == OAuthFormPost.contentType {
            for (name, value) in FormEncoding.decode(String(decoding: request.body, as: UTF8.self))
            where !Self.publicFields.contains(name) {
                secrets.append(value)
            }
        }
        if let authorization = request.fields[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if let credentials = parts.last {
                secrets.append(String(credentials))
                // Basic: form-encoded id and secret behind the base64 (RFC 6749 §2.3.1).
                if parts.first?.lowercased() == "basic", let decoded = Data(base64Encoded: String(credentials)),
                   case let pair = String(decoding: decoded, as: UTF8.self), let colon = pair.firstIndex(of: ":") {
                    secrets.append(FormEncoding.decodeComponent(pair[pair.index(after: colon)...]))
                }
            }
        }
        self.init(values: secrets)
    }

    /// Removes `values`: the secrets a recipe's step renders and the captures it holds.
    init(values: [String]) {
        // Longest first, so that a secret containing another is removed whole.
        secrets = Set(values).filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }

    /// Whether `text` holds any of the secrets.
    func reveals(_ text: String) -> Bool {
        secrets.contains { text.contains($0) }
    }

    /// `text` with every secret replaced by `[redacted]`.
    func apply(_ text: String) -> String {
        secrets.reduce(text) { $0.replacing($1, with: "[redacted]") }
    }

    /// Fields whose values say what is asked for, not who asks.
    private static let publicFields: Set<String> = [
        "grant_type", "client_id", "client_assertion_type", "scope", "audience", "resource",
        "redirect_uri", "subject_token_type", "actor_token_type", "requested_token_type", "token_type_hint",
    ]
}

extension TokenEndpointError {
    /// The same error with the request's secrets removed from the server's words.
    func redacting(_ redaction: SecretRedaction) -> TokenEndpointError {
        guard case .oauth(var error) = self else { return self }
        error.error = redaction.apply(error.error)
        error.errorDescription = error.errorDescription.map(redaction.apply)
        error.errorURI = error.errorURI.map(redaction.apply)
        return .oauth(error)
    }
}
