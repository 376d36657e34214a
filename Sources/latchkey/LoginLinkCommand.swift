import ArgumentParser
import Foundation
import Latchkey
import LatchkeyConfig

/// `latchkey login-link ROUTE --config FILE`: prints a one-time URL that gives a browser
/// the proxy's session cookie on a listener with `inbound.session`.
struct LoginLinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login-link",
        abstract: "Print a one-time link that lets a browser use a listener with inbound.session.",
        discussion: """
            The link is signed with the listener's session key (read from its key file, which \
            must be private), works once and for inbound.session.link_lifetime (default 5 \
            minutes); it needs no running server to be made. Opening it in a browser sets the \
            latchkey_session cookie and goes to the route. Prints the link to standard output.
            """
    )

    @Argument(help: "The route the browser goes to: a route name in the configuration.")
    var route: String

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String

    @Option(name: .long, help: ArgumentHelp("The listener, when several with inbound.session serve the route.", valueName: "name"))
    var listener: String?

    @Option(name: .long, help: ArgumentHelp("The host (and port) browsers reach the listener by; default: its first allowed_hosts entry, else its listen address.", valueName: "host[:port]"))
    var host: String?

    func validate() throws {
        // The link is http://HOST/...: anything that would end the authority is refused.
        if let host, host.isEmpty || host.contains(where: { "/?#@\\".contains($0) || $0.isWhitespace }) {
            throw ValidationError("--host must be a host name or address, with an optional :port.")
        }
    }

    func run() throws {
        do {
            let loaded = try ConfigLoader.load(path: config)
            print(try loaded.loginLink(route: route, listener: listener, host: host, now: Date()))
        } catch let error as ConfigErrors {
            throw CommandFailure(error.description)
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}
