import ArgumentParser
import Foundation
import Latchkey
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLoop
import LatchkeyUpstream

/// `latchkey logout IDENTITY | --all --config FILE`: removes identities' tokens from the
/// token store and revokes them at the IdP, or runs a recipe's logout step.
struct LogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Log identities out: remove their tokens from the token store and revoke them at the IdP (or run a recipe's logout step).",
        discussion: """
            The tokens leave the token store first, and the identity is marked logged out \
            there: a running `latchkey serve` answers its routes with 401 login_required \
            within about a second, and no serve logs it back in by itself (not even with a \
            password in the configuration) until `latchkey login IDENTITY`. Then the refresh \
            token and the access token are revoked (RFC 7009) at the identity's \
            revocation_url, or the revocation_endpoint its issuer's metadata names; without \
            either they stay valid at the IdP until they expire. A recipe identity runs its \
            logout step instead, if it has one, with the captures it removed (TMDB: DELETE \
            authentication/session). A failed revocation or logout step is reported and \
            exits 1, but the tokens are out of the store all the same. Static tokens live in \
            the configuration and are left alone.
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
            var outcomes: [(IdentityConfig, IdentityLogout.Outcome)] = []
            for logout in logouts {
                do {
                    outcomes.append((logout.identity, try await logout.run(store: tokenStore)))
                } catch {
                    throw CommandFailure("cannot log out identity \(logout.identity.name): \(error)")
                }
            }
            return outcomes
        }
        var failed = false
        for (identity, outcome) in outcomes {
            print(Self.summary(identity, outcome))
            if let failure = outcome.failure {
                failed = true
                say(Self.failureNote(identity, outcome, failure))
            }
        }
        if failed { throw ExitCode(1) }
    }

    static func summary(_ identity: IdentityConfig, _ outcome: IdentityLogout.Outcome) -> String {
        let name = identity.name
        guard outcome.hadToken else {
            return "identity \(name) had no token; it stays logged out until `latchkey login \(name)`"
        }
        if case .recipe(let recipe) = identity.grant {
            let text = "logged out identity \(name): its captures are out of the store"
            if let step = outcome.logoutStep { return text + "; ran its logout \(step)" }
            if recipe.logout == nil, outcome.failure == nil {
                return text + "; the recipe has no logout step, so the session stays valid at the server until it expires"
            }
            return text
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

    /// Why the server may still accept what was logged out of, on standard error.
    static func failureNote(_ identity: IdentityConfig, _ outcome: IdentityLogout.Outcome, _ failure: String) -> String {
        if case .recipe = identity.grant {
            return "latchkey: the logout step of identity \(identity.name) failed: \(failure); "
                + "the session may stay valid at the server until it expires"
        }
        return "latchkey: cannot revoke the tokens of identity \(identity.name)" + (outcome.endpoint.map { " at \($0)" } ?? "")
            + ": \(failure); they may stay valid at the IdP until they expire"
    }
}
