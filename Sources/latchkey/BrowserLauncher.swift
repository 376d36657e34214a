import Foundation
#if canImport(Glibc)
import Glibc
#endif
import LatchkeyLoop
import LatchkeySystem

/// Opens a URL in the user's browser and never waits for it: the first command of
/// `$BROWSER` (a `:`-separated list, as xdg-utils and Python read it; `%s` in it stands for
/// the URL, which is appended otherwise), else `xdg-open` in a graphical session
/// (`$DISPLAY` or `$WAYLAND_DISPLAY`). The URL is an argument of the browser: it holds the
/// state and the PKCE challenge, neither of them a secret (the verifier never leaves).
enum BrowserLauncher {
    /// The command to run, or nil when no browser can be opened here.
    static func command(for url: String, environment: [String: String]) -> [String]? {
        if let browser = environment["BROWSER"]?.split(separator: ":").first {
            let words = browser.split(separator: " ").map(String.init)
            guard !words.isEmpty else { return nil }
            return words.contains { $0.contains("%s") } ? words.map { $0.replacingOccurrences(of: "%s", with: url) } : words + [url]
        }
        let graphical = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].contains { !($0 ?? "").isEmpty }
        return graphical ? ["xdg-open", url] : nil
    }

    /// Starts `command` detached (`DetachedProcess`), with the signals the login blocks or
    /// ignores back at their defaults. Throws the spawn's errno.
    static func start(_ command: [String]) throws(BrowserLaunchError) {
        do {
            try DetachedProcess.spawn(command, defaultSignals: [SIGPIPE, SIGINT, SIGTERM, SIGHUP])
        } catch {
            throw BrowserLaunchError(program: command[0], error: error)
        }
    }
}

struct BrowserLaunchError: Error, CustomStringConvertible {
    let program: String
    let error: SystemError

    var description: String { "cannot start \(program): \(error.reason)" }
}
