#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyHTTP
import LatchkeyServer

extension ProxyHandler {
    /// `GET /.latchkey/login?token=…` on a listener with `inbound.session`: a valid,
    /// unexpired, unused link gets the session cookie and a 303 to its route; anything else
    /// an error page (the person opened the link in a browser).
    func redeemLoginLink(_ exchange: ServerExchange, gate: SessionGate, in context: ProxyContext) {
        let head = exchange.head
        guard head.method == "GET" || head.method == "HEAD" else {
            return conclude(exchange, .refused(ErrorDocument(status: 405, error: "method_not_allowed",
                                                             message: "\(SessionGate.loginPath) takes GET or HEAD")), in: context)
        }
        let query = head.target.firstIndex(of: "?").map { head.target[head.target.index(after: $0)...] } ?? ""
        let tokens = FormEncoding.decode(query).filter { $0.0 == SessionGate.tokenParameter }.map(\.1)
        let redemption: SessionGate.Redemption = if tokens.count == 1 {
            gate.redeem(tokens[0], now: Date())
        } else {
            .refused("a login link has exactly one token= parameter")
        }
        switch redemption {
        case .session(let setCookie, let routeName):
            var fields = HTTPFields()
            fields.append(name: .location, value: context.routes.route(named: routeName)?.pathPrefix ?? "/")
            fields.append(name: .setCookie, value: setCookie)
            fields.append(name: "Cache-Control", value: "no-store")
            // The link's URL holds the token: no page should learn it from a Referer.
            fields.append(name: "Referrer-Policy", value: "no-referrer")
            logger.info("a browser redeemed a login link and has a session")
            conclude(exchange, .answered(status: 303, fields: fields, outcome: "session_started"), in: context)
        case .refused(let reason):
            conclude(exchange, .refused(ErrorDocument(status: 401, error: "unauthorized", message: reason), form: .page,
                                        outcome: "unauthorized"), in: context)
        }
    }
}
