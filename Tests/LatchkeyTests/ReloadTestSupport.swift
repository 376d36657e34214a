import LatchkeyConfig
import LatchkeyTestSupport
@testable import Latchkey

/// Configurations for the reload tests, written as the YAML an operator edits between two
/// SIGHUPs.
enum ReloadTestSupport {
    static let listeners = """
        listeners:
          - { name: main, listen: "127.0.0.1:8080" }
        """

    static func identity(_ name: String, scope: String = "read") -> String {
        """
          \(name):
            grant: client_credentials
            token_url: https://idp.example.com/token
            client_id: \(name)-client
            client_secret: { value: s3cret }
            scope: \(scope)
        """
    }

    static func route(_ name: String, identity: String? = nil, upstream: String = "https://api.example.com", jar: String = "client") -> String {
        let inject = identity.map { "[{ header: Authorization, identity: \($0) }]" } ?? "[{ header: X-Key, credential: key }]"
        return """
              - name: \(name)
                path: /\(name)
                upstream: \(upstream)
                inject: \(inject)
                jar: \(jar)
            """
    }

    /// A configuration of `identities` (YAML entries) and `routes` (YAML items), with one
    /// listener, the credential `key`, and `extra` top-level YAML.
    static func config(identities: [String] = [], routes: [String], extra: String = "") throws -> Config {
        try ConfigTestSupport.load("""
            \(listeners)
            credentials:
              key: { value: k }
            \(identities.isEmpty ? "" : "identities:\n" + identities.joined(separator: "\n"))
            routes:
            \(routes.joined(separator: "\n"))
            \(extra)
            """)
    }
}
