import ArgumentParser
import Latchkey

/// The root command: `latchkey <verb>`.
struct LatchkeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "A local HTTP proxy that attaches credentials to requests.",
        version: "latchkey \(LatchkeyVersion.current)",
        subcommands: [ServeCommand.self, CheckCommand.self, LoginCommand.self, LoginLinkCommand.self, LogoutCommand.self, StatusCommand.self,
                       TokenCommand.self, UseCommand.self, CACommand.self, ExecCommand.self]
    )
}
