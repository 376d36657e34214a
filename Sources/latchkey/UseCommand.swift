import ArgumentParser
import Latchkey
import LatchkeyAuth
import LatchkeyConfig

/// `latchkey use ROUTE IDENTITY --config FILE`: which identity a route injects when a
/// request names none.
struct UseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Choose the identity a route injects when a request does not name one.",
        discussion: """
            IDENTITY must be the route's own (the identity its inject entry names) or one of \
            its selectable_identities; naming the route's own goes back to it. The choice is \
            kept in the token store's directory (.route-identities.json), survives restarts, \
            and a running `latchkey serve` takes it up within about a second. A request may \
            still pick another allowed identity with the Latchkey-Identity header. \
            `latchkey status` shows every route's identity.
            """
    )

    @Argument(help: "The route: a name under routes: in the configuration.")
    var route: String

    @Argument(help: "The identity the route injects from now on.")
    var identity: String

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String

    func run() throws {
        let loaded = try Config.forCommand(config, checkingSecrets: false)
        let routeConfig = try loaded.route(named: route, in: config)
        guard let configured = routeConfig.identity else {
            throw CommandFailure("route \(route) injects no identity; only routes that inject one have an identity to choose")
        }
        let allowed = routeConfig.allowedIdentities
        guard allowed.contains(identity) else {
            throw CommandFailure("route \(route) does not allow identity \(identity) (allowed: \(allowed.joined(separator: ", "))); "
                + "add it to the route's selectable_identities first")
        }
        do {
            guard let file = try openRouteIdentityFile(config: loaded) else {
                throw CommandFailure("the configuration keeps nothing on disk (store: type: memory), so no choice can be kept; "
                    + "use store: type: file, or pick the identity per request with the Latchkey-Identity header")
            }
            try file.set(identity == configured ? nil : identity, forRoute: route)
        } catch let error as TokenStoreError {
            throw CommandFailure("cannot keep the choice: \(error)")
        }
        print("route \(route) uses identity \(identity)" + (identity == configured ? " (its configured one)" : "")
            + " from now on; a running serve takes it up within a second")
    }
}
