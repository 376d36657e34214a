#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyHTTP
import LatchkeyConfig

/// `GET /.latchkey/`: the status page for people (see `StatusPage`). It names identities
/// and routes, so the handler answers it after the listener's Host and inbound checks,
/// like `/.latchkey/identities`, whose report it renders.
struct StatusPageEndpoint: Sendable {
    static let path = "/.latchkey/"
    /// What a person types; sent on to `path`. Every path of the proxy's own starts so.
    static let pathWithoutSlash = ownPathPrefix.description
    /// The same as bytes, which every request's target is compared with.
    static let ownPathPrefix: StaticString = "/.latchkey"

    let identities: IdentitiesEndpoint
    let routes: [RouteConfig]
    let events: AuthEventRecorder
    /// When the serve started.
    let startedAt: Date

    static func serves(path: Substring) -> Bool {
        AdminResponse.isPath(path, Self.path) || AdminResponse.isPath(path, Self.pathWithoutSlash)
    }

    func page(now: Date) -> StatusPage {
        StatusPage(report: identities.report(now: now), routes: routes, events: events.events, startedAt: startedAt, now: now)
    }

    /// The page for GET and HEAD, a redirect from the path without its slash, 405 for any
    /// other method.
    func response(method: String, path: Substring, now: Date = Date()) -> AdminResponse {
        if path == Self.pathWithoutSlash, method == "GET" || method == "HEAD" {
            var fields = HTTPFields()
            fields.append(name: .location, value: Self.path)
            // RFC 9110 §15.4.9: permanent, and the method is kept.
            return AdminResponse(status: 308, fields: fields, body: [])
        }
        var response = AdminResponse.readOnly(method: method, endpoint: "the status page", contentType: "text/html; charset=utf-8") {
            Array(page(now: now).html.utf8)
        }
        for field in StatusPage.securityFields { response.fields.append(name: field.name, value: field.value) }
        return response
    }
}
