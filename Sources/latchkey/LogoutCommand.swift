import ArgumentParser
import Foundation
import Latchkey
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLoop
import LatchkeyUpstream

/// `latchkey logout IDENTITY | --all --config FILE`: revokes identities' tokens at the
/// IdP and removes them from the token store.
struct LogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Log identities out: revoke their tokens at the IdP and remove them from the token store.",
        discussion: """
            The tokens leave the token store first, and the identity is marked logged out \
            there: a running `latchkey serve` answers its routes with 401 login_required \
            within about a second, and no serve logs it back in by itself (not even with a \
            password in the configuration) until `latchkey login IDENTITY`. Then the refresh \
            token and the access token are revoked (RFC 7009) at the identity's \
            revocation_url, or the revocation_endpoint its issuer's metadata names; without \
            either they stay valid at the IdP until they expire. A failed revocation is \
            reported and exits 1, but the tokens are out of the store all the same. Static \
            tokens live in the configuration and are left alone.
            """
    )

    @Argument(help: "The identity to log out: a name under identities: in the configuration.")
    var identity: String?

    @Flag(name: .long, help: "Log out every identity whose tokens the store keeps.")
    var all = false

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String

    func validate() throws {
        if all == (identity != nil) { throw ValidationError("give an identity, or --all.") }
    }

    func run() throws {
        ProcessSignals.prepare()
        initializeCurlGlobally()
        let loaded = try Config.forCommand(config, checkingSecrets: false)
        var targets = loaded.identities.filter(\.keepsTokens)
        if let identity {
            let named = try loaded.identity(named: identity, in: config)
            guard named.keepsTokens else {
                throw CommandFailure("identity \(identity) uses a static token from its configuration; there is nothing to log out of "
                    + "(change or remove the token there)")
            }
            targets = [named]
        }
        loaded.logging.bootstrapQuietly()
        let client: AuthHTTPClient
        let tokenStore: any TokenStore
        do {
            client = try AuthHTTPClient()
            tokenStore = try makeTokenStore(config: loaded)
        } catch {
            throw CommandFailure("\(error)")
        }
        defer { client.shutdown() }
        if tokenStore is MemoryTokenStore, !targets.isEmpty {
            throw CommandFailure("the configuration keeps tokens in memory (store: type: memory): only the running serve holds them, "
                + "and stopping it forgets them")
        }
        if targets.isEmpty {
            print("no identity to log out: \(config) has no identity whose tokens the store keeps")
            return
        }
        let logouts = targets.map { IdentityLogout(identity: $0, client: client, sourceName: config) }
        let outcomes = try runInterruptibly {
            var outcomes: [(String, IdentityLogout.Outcome)] = []
            for logout in logouts {
                do {
                    outcomes.append((logout.identity.name, try await logout.run(store: tokenStore)))
                } catch {
                    throw CommandFailure("cannot log out identity \(logout.identity.name): \(error)")
                }
            }
            return outcomes
        }
        var failed = false
        for (name, outcome) in outcomes {
            print(Self.summary(name, outcome))
            if let failure = outcome.failure {
                failed = true
                say("latchkey: cannot revoke the tokens of identity \(name)" + (outcome.endpoint.map { " at \($0)" } ?? "")
                    + ": \(failure); they may stay valid at the IdP until they expire")
            }
        }
        if failed { throw ExitCode(1) }
    }

    static func summary(_ name: String, _ outcome: IdentityLogout.Outcome) -> String {
        guard outcome.hadToken else {
            return "identity \(name) had no token; it stays logged out until `latchkey login \(name)`"
        }
        var text = "logged out identity \(name): its tokens are out of the store"
        guard let endpoint = outcome.endpoint else {
            if outcome.failure != nil { return text }
            return text + "; not revoked, as no revocation endpoint is known (set revocation_url, or issuer to discover it), "
                + "so they stay valid at the IdP until they expire"
        }
        if !outcome.revoked.isEmpty { text += "; revoked its \(outcome.revoked.joined(separator: " and ")) at \(endpoint)" }
        if !outcome.unsupported.isEmpty { text += " (the IdP does not revoke its \(outcome.unsupported.joined(separator: " or ")))" }
        return text
    }
}
