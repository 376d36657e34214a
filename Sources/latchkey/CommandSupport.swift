import Foundation
import Latchkey
import LatchkeyConfig
import Logging

/// A failure already explained for the user: printed as is, exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Config {
    /// The configuration file of a command, its problems as the command's failure.
    /// `checkingSecrets: false` leaves secret files and TLS files unread here: the
    /// command reads those it needs itself, so that one missing secret does not stop it
    /// from dealing with another identity.
    static func forCommand(_ path: String, checkingSecrets: Bool = true) throws -> Config {
        do {
            return try ConfigLoader.load(path: path, options: .init(checkExternal: checkingSecrets))
        } catch {
            throw CommandFailure(error.description)
        }
    }

    /// The identity `name`, or a failure that names the configuration's identities.
    func identity(named name: String, in path: String) throws -> IdentityConfig {
        if let identity = identities.first(where: { $0.name == name }) { return identity }
        throw CommandFailure("\(path) has no identity \(name)" + Self.listing("its identities", identities.map(\.name)))
    }

    /// The route `name`, or a failure that names the routes there are.
    func route(named name: String, in path: String) throws -> RouteConfig {
        if let route = routes.first(where: { $0.name == name }) { return route }
        throw CommandFailure("\(path) has no route \(name)" + Self.listing("its routes", routes.map(\.name)))
    }

    /// ` (its routes: a, b)`; nothing for no names.
    static func listing(_ what: String, _ names: [String]) -> String {
        names.isEmpty ? "" : " (\(what): \(names.sorted().joined(separator: ", ")))"
    }
}

extension LoggingSettings {
    /// For the commands that print a result to be read (or captured by a script): only
    /// warnings and errors reach standard error, whatever the configured level.
    func bootstrapQuietly() {
        var settings = self
        if (Logger.Level(rawValue: level) ?? .info) < .warning { settings.level = Logger.Level.warning.rawValue }
        _ = settings.bootstrap()
    }
}

/// One line on standard error.
func say(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
