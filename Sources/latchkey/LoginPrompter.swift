import Foundation
import Latchkey
import LatchkeyAuth
import LatchkeyConfig
import LatchkeySystem
import Synchronization

/// What `latchkey login` tells the person at the terminal, on standard error: where to
/// log in and what it waits for, or what a recipe asks them to type. Opens the browser for
/// the authorization code grant unless told not to.
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

    /// Asks for the value of a recipe's prompt: its text on standard error, then a line
    /// read from the terminal without echo (from standard input when that is not a
    /// terminal: a pipe), on a thread of its own. Cancelling (Ctrl-C) ends the wait at once and turns the echo back on.
    func read(_ prompt: RecipePrompt) async throws -> String {
        FileHandle.standardError.write(Data("\(Self.printable(prompt.text)): ".utf8))
        let input = try TerminalInput()
        let reply = Mutex<CheckedContinuation<String, any Error>?>(nil)
        let answer = { @Sendable (result: Result<String, any Error>) in
            reply.withLock { waiting in
                waiting?.resume(with: result)
                waiting = nil
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                reply.withLock { $0 = continuation }
                // Cancelled before the continuation was there to end: end it now.
                if Task.isCancelled { return answer(.failure(CancellationError())) }
                Thread {
                    let line = Result<String, any Error> {
                        guard let line = try input.readLine() else { throw CommandFailure("the input ended before a value for {prompts.\(prompt.name)}") }
                        return line
                    }
                    // The terminal's line ends when its echo comes back; a pipe's was never shown.
                    if !input.isTerminal { say("") }
                    answer(line)
                }.start()
            }
        } onCancel: {
            input.restore()
            answer(.failure(CancellationError()))
        }
    }

    /// The IdP's words, or a prompt's text, with control characters (terminal escapes, line
    /// breaks) made spaces.
    private static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }
}
