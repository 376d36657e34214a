import ArgumentParser
import Foundation
import Latchkey
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLoop
import LatchkeyUpstream
import Logging

/// `latchkey token IDENTITY --config FILE [--field NAME]`: a valid access token (or one
/// capture of a recipe's result) on standard output, for scripts.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token of an identity, for scripts.",
        discussion: """
            Prints the token and a newline on standard output, nothing else: the stored token \
            while it stays good for longer than the identity's clock_skew and refresh_ahead, \
            else a renewed one (with the refresh token, or the identity's own grant), saved \
            into the token store before it is printed, so that a running `latchkey serve` \
            takes it up rather than spend the refresh token it replaced. A static identity \
            prints its configured token. A recipe identity prints its token capture (the last \
            capture its steps make), or with --field NAME the capture NAME; renewing it runs \
            the recipe again. Exits 1, with the reason on standard error, when the \
            identity needs `latchkey login` or no token can be had. The token is a secret: \
            pass it on through a pipe or the environment, not as an argument others can see \
            in the process list (e.g. `latchkey token api --config FILE | sed 's/^/Authorization: \
            Bearer /' | curl -H @- URL`).
            """
    )

    @Argument(help: "The identity: a name under identities: in the configuration.")
    var identity: String

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String

    @Option(name: .long, help: ArgumentHelp("A recipe identity: print this capture instead of its token capture.", valueName: "name"))
    var field: String?

    func run() throws {
        ProcessSignals.prepare()
        initializeCurlGlobally()
        let loaded = try Config.forCommand(config, checkingSecrets: false)
        let identityConfig = try loaded.identity(named: identity, in: config)
        if let field { try Self.checkCapture(field, of: identityConfig) }
        loaded.logging.bootstrapQuietly()
        let client: AuthHTTPClient
        let tokenStore: any TokenStore
        let request: IdentityAccessToken
        do {
            client = try AuthHTTPClient()
            tokenStore = try makeTokenStore(config: loaded)
            request = try IdentityAccessToken(identity: identityConfig, client: client, store: tokenStore,
                                              logger: Logger(label: "latchkey.auth"), sourceName: config)
        } catch {
            throw CommandFailure("\(error)")
        }
        defer { client.shutdown() }
        let result = try runInterruptibly { await request.current() }
        switch result {
        case .success(let token):
            if let field {
                guard let capture = token.captures[field] else {
                    throw CommandFailure("the result of identity \(identity) holds no capture \(field), as the recipe made it before; "
                        + "run `latchkey login \(identity) --config \(config)` to make it again")
                }
                print(capture)
            } else {
                print(token.accessToken)
            }
            if tokenStore is MemoryTokenStore, identityConfig.keepsTokens {
                say("latchkey: the configuration keeps tokens in memory (store: type: memory), so a running serve does not share this token")
            }
        case .failure(.loginRequired(let reason)):
            throw CommandFailure("identity \(identity) needs a login (\(reason)): run `latchkey login \(identity) --config \(config)`")
        case .failure(.failing(let reason, _)):
            throw CommandFailure("no token for identity \(identity): \(reason)")
        case .failure(.misconfigured(let problem)):
            throw CommandFailure("identity \(identity) is misconfigured: \(problem)")
        }
    }
}

extension TokenCommand {
    /// `--field` names a capture of a recipe identity.
    static func checkCapture(_ name: String, of identity: IdentityConfig) throws {
        guard case .recipe(let recipe) = identity.grant else {
            throw CommandFailure("identity \(identity.name) uses the \(identity.grant.name) grant: --field names a capture of a recipe "
                + "identity (grant: recipe)")
        }
        let names = recipe.captures.map(\.name)
        guard names.contains(name) else {
            throw CommandFailure("identity \(identity.name) has no capture \(name)" + Config.listing("its captures", names))
        }
    }
}
