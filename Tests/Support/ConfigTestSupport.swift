import Foundation
import LatchkeyConfig

/// Helpers shared by the tests that load configurations.
public enum ConfigTestSupport {
    /// The repository's Configs/ directory, found from this file's path.
    public static var configsDirectory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Support
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository
            .appendingPathComponent("Configs")
    }

    /// Loads YAML that is expected to be invalid and returns its problems.
    public static func problems(
        _ yaml: String, checkExternal: Bool = false, environment: [String: String] = [:], baseDirectory: String? = nil
    ) -> [ConfigProblem] {
        do {
            _ = try ConfigLoader.load(
                yaml: yaml, sourceName: "test.yaml", baseDirectory: baseDirectory,
                options: .init(checkExternal: checkExternal, environment: environment)
            )
            return []
        } catch {
            return error.problems
        }
    }

    public static func load(
        _ yaml: String, checkExternal: Bool = false, environment: [String: String] = [:], baseDirectory: String? = nil
    ) throws(ConfigErrors) -> Config {
        try ConfigLoader.load(
            yaml: yaml, sourceName: "test.yaml", baseDirectory: baseDirectory,
            options: .init(checkExternal: checkExternal, environment: environment)
        )
    }

    /// A fresh private directory, removed by the caller (`TemporaryDirectory` removes its own).
    public static func temporaryDirectory() throws -> URL {
        try TemporaryDirectory.create(prefix: "latchkey-config")
    }

    public static let minimalRoutes = """
        routes:
          - name: api
            upstream: https://api.example.com
        """

    /// An `identities:` section with `entries` and one route that injects
    /// `injected`, loaded by identity name.
    public static func identities(_ entries: String, injected: String) throws -> [String: IdentityConfig] {
        let config = try load(identityDocument(entries, injected: injected))
        return Dictionary(uniqueKeysWithValues: config.identities.map { ($0.name, $0) })
    }

    /// The problems of the same document.
    public static func identityProblems(_ entries: String, injected: String) -> [ConfigProblem] {
        problems(identityDocument(entries, injected: injected))
    }

    private static func identityDocument(_ entries: String, injected: String) -> String {
        """
        identities:
        \(entries)
        routes:
          - name: api
            upstream: https://api.example.com
            inject: [{ header: Authorization, identity: \(injected) }]
        """
    }
}
