import ArgumentParser
import Foundation
import LatchkeyAuth
import LatchkeyConfig

/// `latchkey ca path|bundle|rotate [--config FILE]`: the local certificate authority that
/// signs the certificates of `local_ca` listeners.
struct CACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Show, bundle or replace the local certificate authority.",
        discussion: """
            Latchkey's own CA lives in the token store's directory, under ca/ (ca.pem, the \
            certificate clients trust; ca.key, its private key), made on first use and renewed \
            30 days before it ends. A configuration with ca: cert_file and key_file uses that CA \
            instead, as it is.
            """,
        subcommands: [Path.self, Bundle.self, Rotate.self]
    )

    /// `--config FILE`, optional: without one, the default store directory.
    struct ConfigOption: ParsableArguments {
        @Option(name: .long, help: ArgumentHelp("The configuration file (default: none, the default store directory).", valueName: "file"))
        var config: String?

        func load() throws -> Config {
            guard let config else { return Config(listeners: [], routes: []) }
            return try Config.forCommand(config, checkingSecrets: false)
        }

        /// The CA the configuration uses, made when it is Latchkey's own and there is none.
        func open() throws -> LocalCA {
            let loaded = try load()
            do {
                return try LocalCA.open(config: loaded, environment: ProcessInfo.processInfo.environment, now: Date())
            } catch {
                throw CommandFailure(error.description)
            }
        }
    }

    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the path of the CA certificate clients must trust, making the CA if there is none."
        )

        @OptionGroup var options: ConfigOption

        func run() throws {
            print(try options.open().certificatePath)
        }
    }

    struct Bundle: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write bundle.pem (the system's trusted roots and the CA) and print its path.",
            discussion: """
                For clients that take a single CA file (CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE, \
                SSL_CERT_FILE): they then trust both public sites and Latchkey's listeners. The \
                system's roots are read from SSL_CERT_FILE, else /etc/ssl/certs/ca-certificates.crt.
                """
        )

        @OptionGroup var options: ConfigOption

        func run() throws {
            let loaded = try options.load()
            let environment = ProcessInfo.processInfo.environment
            do throws(LocalCAError) {
                let ca = try LocalCA.open(config: loaded, environment: environment, now: Date())
                // The user's CA has no store of its own; its bundle goes to the store directory's.
                let store = if let own = ca.store { own } else { try LocalCA.store(config: loaded, environment: environment) }
                print(try store.writeBundle(authority: ca.authority.certificate, environment: environment))
            } catch {
                throw CommandFailure(error.description)
            }
        }
    }

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace Latchkey's own CA with a new one (new key) now and print its path.",
            discussion: """
                Clients must then trust the new certificate: the old one no longer verifies the \
                listeners' certificates. A running `latchkey serve` takes the new CA up by itself. \
                Refused when the configuration names its own CA (ca:): replace those files instead.
                """
        )

        @OptionGroup var options: ConfigOption

        func run() throws {
            let loaded = try options.load()
            if let own = loaded.ca {
                throw CommandFailure("the configuration uses its own CA (ca.cert_file \(own.certFile), ca.key_file \(own.keyFile)), "
                    + "which Latchkey never replaces; to rotate it, replace those two files with a new CA certificate and key")
            }
            let store: LocalCAStore
            do {
                store = try LocalCA.store(config: loaded, environment: ProcessInfo.processInfo.environment)
                _ = try store.rotate(now: Date())
            } catch {
                throw CommandFailure(error.description)
            }
            print(store.certificatePath)
            say("made a new local CA: clients must now trust the new certificate \(store.certificatePath) "
                + "(the old one no longer verifies Latchkey's listeners); run `latchkey ca bundle` again if clients use bundle.pem")
        }
    }
}
