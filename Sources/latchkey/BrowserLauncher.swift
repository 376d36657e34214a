import Foundation
#if canImport(Glibc)
import Glibc
#endif

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

    /// posix_spawnp(3) of `command`, found on PATH, with /dev/null for its standard streams,
    /// an empty signal mask and default dispositions (the login blocks the termination
    /// signals and ignores SIGPIPE; a browser must not inherit that). Latchkey's own
    /// descriptors are close-on-exec. Throws the spawn's errno.
    static func start(_ command: [String]) throws(BrowserLaunchError) {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }

        var arguments = command.map { strdup($0) }
        defer { arguments.forEach { free($0) } }
        arguments.append(nil)
        var pid = pid_t()
        let status = posix_spawnp(&pid, command[0], &actions, &attributes, arguments, environ)
        guard status == 0 else { throw BrowserLaunchError(program: command[0], errno: status) }
    }
}

struct BrowserLaunchError: Error, CustomStringConvertible {
    let program: String
    let errno: Int32

    var description: String { "cannot start \(program): \(String(cString: strerror(errno)))" }
}
