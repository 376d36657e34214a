#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyHTTP

/// How the client proves who it is to the token, device, revocation and introspection
/// endpoints (RFC 6749 §2.3, OIDC Core §9).
public enum ClientAuthentication: Sendable {
    /// `client_secret_basic`: HTTP Basic with the id and secret each form-encoded first
    /// (RFC 6749 §2.3.1).
    case clientSecretBasic(id: String, secret: String)
    /// `client_secret_post`: `client_id` and `client_secret` in the form.
    case clientSecretPost(id: String, secret: String)
    /// `private_key_jwt` (RFC 7523 §2.2): a fresh signed assertion per request, since
    /// each carries its own `jti` and short expiry.
    case privateKeyJWT(id: String, assertion: @Sendable () throws -> String)
    /// A public client: only `client_id` in the form.
    case none(id: String)

    /// Adds the client's credentials to a form request: a header or form fields.
    func apply(to form: inout [(String, String)], fields: inout HTTPFields) throws(TokenEndpointError) {
        switch self {
        case .clientSecretBasic(let id, let secret):
            let pair = FormEncoding.encode(id) + ":" + FormEncoding.encode(secret)
            fields.append(name: .authorization, value: "Basic " + Data(pair.utf8).base64EncodedString())
        case .clientSecretPost(let id, let secret):
            form.append(("client_id", id))
            form.append(("client_secret", secret))
        case .privateKeyJWT(let id, let makeAssertion):
            let assertion: String
            do {
                assertion = try makeAssertion()
            } catch {
                throw .clientAssertionFailed("\(error)")
            }
            form.append(("client_id", id))
            form.append(("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"))
            form.append(("client_assertion", assertion))
        case .none(let id):
            form.append(("client_id", id))
        }
    }
}
