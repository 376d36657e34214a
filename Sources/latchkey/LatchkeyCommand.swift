import ArgumentParser

/// The root command: `latchkey <verb>`.
struct LatchkeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "A local HTTP proxy that attaches credentials to requests.",
        subcommands: [ServeCommand.self, CheckCommand.self, LoginCommand.self, LoginLinkCommand.self, LogoutCommand.self, StatusCommand.self,
                       TokenCommand.self, UseCommand.self]
    )
}
