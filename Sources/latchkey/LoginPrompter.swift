import Foundation
import Latchkey
import LatchkeyAuth

/// What `latchkey login` tells the person at the terminal, on standard error: where to
/// log in and what it waits for. Opens the browser for the authorization code grant unless
/// told not to.
struct LoginPrompter: Sendable {
    let identity: String
    let opensBrowser: Bool
    let timeout: Duration
    let environment: [String: String]

    func show(_ prompt: IdentityLogin.Prompt) {
        switch prompt {
        case .openBrowser(let url, let redirectURI):
            var opened = false
            if opensBrowser, let command = BrowserLauncher.command(for: url, environment: environment) {
                do {
                    try BrowserLauncher.start(command)
                    opened = true
                } catch {
                    say("latchkey: \(error); open the URL yourself")
                }
            }
            say(opened ? "A browser is opening to log in identity \(identity). If it does not, open this URL:"
                       : "To log in identity \(identity), open this URL in a browser and approve the access:")
            say("\n    \(url)\n")
            say("Waiting up to \(timeout.components.seconds) s for the browser to come back to \(redirectURI) ...")
        case .enterCode(let authorization):
            say("To log in identity \(identity), visit this URL on any device:")
            say("\n    \(Self.printable(authorization.verificationURI))\n")
            say("and enter the code:")
            say("\n    \(Self.printable(authorization.userCode))\n")
            if let complete = authorization.verificationURIComplete {
                say("(or open \(Self.printable(complete)), which has the code filled in)")
            }
            say("Waiting for the approval (the code expires in \(authorization.expiresIn.components.seconds) s) ...")
        case .ignored(let notice):
            say("latchkey: \(notice)")
        }
    }

    /// The IdP's words with control characters (terminal escapes, line breaks) made spaces.
    private static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }
}
