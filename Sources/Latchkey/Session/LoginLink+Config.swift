#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyAuth
import LatchkeyConfig

extension Config {
    /// The one-time login link for `route`, as `latchkey login-link` prints it: on the
    /// route's listener with `inbound.session` (`listener` picks one when several are),
    /// addressed to `host`, else to the listener's first allowed host, else to its listen
    /// address; https on a TLS listener. Reads the session key, which must be private.
    public func loginLink(route routeName: String, listener listenerName: String?, host: String?, now: Date) throws(RuntimeError) -> String {
        guard let route = routes.first(where: { $0.name == routeName }) else {
            throw RuntimeError("no route \(routeName) (routes: \(routes.map(\.name).joined(separator: ", ")))")
        }
        let candidates = listeners.filter { listener in
            guard case .session = listener.inbound else { return false }
            return (route.listeners.isEmpty || route.listeners.contains(listener.name))
                && (listenerName == nil || listenerName == listener.name)
        }
        guard let listener = candidates.first, case .session(let settings) = listener.inbound else {
            throw RuntimeError(listenerName.map { "listener \($0) does not serve route \(routeName) with inbound.session" }
                ?? "route \(routeName) is served by no listener with inbound.session; login links are for those")
        }
        guard candidates.count == 1 else {
            throw RuntimeError("route \(routeName) is served by several listeners with inbound.session (\(candidates.map(\.name).joined(separator: ", "))); pick one with --listener")
        }
        guard case .tcp(let listenHost, let port) = listener.address, port != 0 else {
            throw RuntimeError("listener \(listener.name) has no fixed TCP port a browser could open (\(listener.address))")
        }
        let named = host ?? listener.allowedHosts.first { !$0.contains("*") }.map { $0.contains(":") ? $0 : "\($0):\(port)" }
        let authority: String
        if let named {
            authority = named
        } else if listenHost == "0.0.0.0" || listenHost == "::" {
            throw RuntimeError("listener \(listener.name) listens on every address: name the host browsers reach it by with --host or allowed_hosts")
        } else {
            authority = listener.address.description
        }
        do {
            let token = try LoginLink.token(route: route.name, signer: try settings.signer(), now: now, lifetime: settings.linkLifetime)
            return "\(listener.tls == nil ? "http" : "https")://\(authority)\(SessionGate.loginPath)?token=\(token)"
        } catch {
            throw RuntimeError("cannot make a login link for listener \(listener.name): \(error.detail)")
        }
    }
}
