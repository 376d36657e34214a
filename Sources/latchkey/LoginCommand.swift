import ArgumentParser
import Foundation
import Latchkey
import LatchkeyAuth
import LatchkeyConfig
import LatchkeyLoop
import LatchkeyUpstream

/// `latchkey login IDENTITY --config FILE`: gets an identity its first token with a
/// person's help (authorization code with PKCE in a browser, or the device grant), or runs
/// a recipe, asking for the values of its prompts.
struct LoginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log an identity in: in a browser (authorization_code), with a code entered on another device (device_code), "
            + "or by running its recipe.",
        discussion: """
            authorization_code: prints the IdP's login URL (and opens a browser where one can be \
            opened: $BROWSER, or xdg-open in a graphical session), then waits for the browser to \
            come back to http://127.0.0.1:PORT/PATH and redeems the code with its PKCE verifier. \
            device_code: prints a URL and a code to enter on any device, and waits for the \
            approval. Identities whose grant needs no person (password, client_credentials, \
            custom, jwt_bearer, token_exchange) make one token request, which checks their \
            credentials; a refresh_token identity redeems its configured refresh token. A \
            recipe identity runs its steps; a step that uses {prompts.NAME} first asks for \
            the value on the terminal (without echo; standard input without a terminal). The \
            token goes into the configuration's token store, where a running `latchkey serve` \
            takes it up without a restart; a login also ends a `latchkey logout`. Messages go \
            to standard error, the result to standard output; any failure exits 1.
            """
    )

    @Argument(help: "The identity to log in: a name under identities: in the configuration.")
    var identity: String

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "file"))
    var config: String

    @Flag(name: .long, help: "Print the login URL only; do not try to open a browser.")
    var noBrowser = false

    @Option(name: .long, help: ArgumentHelp("How long to wait for the browser to come back (authorization_code).", valueName: "seconds"))
    var timeout = 300

    func validate() throws {
        if timeout < 1 { throw ValidationError("--timeout must be at least 1 second.") }
    }

    func run() throws {
        ProcessSignals.prepare()
        initializeCurlGlobally()

        let loaded = try Config.forCommand(config)
        let identityConfig = try loaded.identity(named: identity, in: config)
        _ = loaded.logging.bootstrap()
        let client: AuthHTTPClient
        let login: IdentityLogin
        do {
            client = try AuthHTTPClient()
            login = try IdentityLogin(identity: identityConfig, client: client, sourceName: config)
        } catch let error as ConfigErrors {
            throw CommandFailure(error.description)
        } catch {
            throw CommandFailure("cannot start the login: \(error)")
        }
        defer { client.shutdown() }
        if case .none(let reason) = login.method { throw CommandFailure(reason) }
        // Opened first: a store others can read or a wrong key fails now, not after the
        // person has logged in.
        let tokenStore: any TokenStore
        do {
            tokenStore = try makeTokenStore(config: loaded)
        } catch {
            throw CommandFailure("\(error)")
        }

        let prompter = LoginPrompter(identity: identity, opensBrowser: !noBrowser, timeout: .seconds(timeout),
                                     environment: ProcessInfo.processInfo.environment)
        let timeout = Duration.seconds(timeout)
        let name = identity
        let token: TokenSet
        do {
            token = try runInterruptibly {
                let token = try await login.run(timeout: timeout, prompt: prompter.show, readPrompt: prompter.read)
                // Into the store `serve` reads: a running one takes it up without a restart.
                do {
                    try await tokenStore.save(token, identity: name)
                } catch {
                    throw CommandFailure("identity \(name) logged in, but its token cannot be stored: \(error)")
                }
                return token
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure("cannot log in identity \(identity): \(error)")
        }
        if tokenStore is MemoryTokenStore {
            say("latchkey: the configuration keeps tokens in memory (store: type: memory), so no other process sees this login")
        }
        print(summary(of: token, login: login))
    }

    private func summary(of token: TokenSet, login: IdentityLogin) -> String {
        let lifetime = token.expiresAt.map { "valid until " + $0.formatted(.iso8601) } ?? "with no stated expiry"
        let renewal = token.refreshToken == nil ? "no refresh token" : "a refresh token"
        if case .refreshToken = login.identity.grant {
            return "identity \(identity) redeemed its configured refresh_token: access token \(lifetime), \(renewal)"
        }
        if case .recipe(let recipe) = login.identity.grant {
            // Names only: the values are secret unless configured otherwise.
            let captures = recipe.heldCaptureNames(in: token)
            return "logged in identity \(identity): its recipe ran \(recipe.steps.count) step\(recipe.steps.count == 1 ? "" : "s") "
                + "and holds \(captures.joined(separator: ", ")), \(token.expiresAt == nil ? "used until an upstream refuses it" : lifetime)"
        }
        if login.method == .tokenRequest {
            return "identity \(identity) uses the \(login.identity.grant.name) grant and logs in by itself: "
                + "its credentials work (access token \(lifetime))"
        }
        return "logged in identity \(identity): access token \(lifetime), \(renewal)"
    }
}
