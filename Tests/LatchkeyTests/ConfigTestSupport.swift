import Foundation
@testable import Latchkey

/// Helpers shared by the Config* test files.
enum ConfigTestSupport {
    /// The repository's Configs/ directory, found from this file's path.
    static var configsDirectory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // LatchkeyTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository
            .appendingPathComponent("Configs")
    }

    /// Loads YAML that is expected to be invalid and returns its problems.
    static func problems(
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

    static func load(
        _ yaml: String, checkExternal: Bool = false, environment: [String: String] = [:], baseDirectory: String? = nil
    ) throws(ConfigErrors) -> Config {
        try ConfigLoader.load(
            yaml: yaml, sourceName: "test.yaml", baseDirectory: baseDirectory,
            options: .init(checkExternal: checkExternal, environment: environment)
        )
    }

    /// A fresh private directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let minimalRoutes = """
        routes:
          - name: api
            upstream: https://api.example.com
        """
}
