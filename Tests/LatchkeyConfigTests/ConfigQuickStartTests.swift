import Foundation
import LatchkeyTestSupport
import Testing
@testable import LatchkeyConfig

@Suite("Quick start")
struct ConfigQuickStartTests {
    @Test func headersBecomeInlineCredentials() throws {
        let config = try Config.quickStart(
            listen: nil, upstream: "https://api.example.com/v1",
            headers: ["Authorization: Bearer abc123", "X-Api-Key:key-value "], bearerTokenFile: nil
        )
        #expect(config.listeners == [ListenerConfig(name: "main", address: .tcp(host: "127.0.0.1", port: 8080))])
        #expect(config.credentials == ["header-1": .inline("Bearer abc123"), "header-2": .inline("key-value")])
        let route = try #require(config.routes.first)
        #expect(config.routes.count == 1)
        #expect(route.pathPrefix == "/")
        #expect(route.upstream.url == "https://api.example.com/v1")
        #expect(route.injections == [
            Injection(target: .header("Authorization"), source: .credential("header-1"), template: .token),
            Injection(target: .header("X-Api-Key"), source: .credential("header-2"), template: .token),
        ])
        // Inline secrets resolve, and the values are in the redaction list.
        let store = try CredentialStore(config: config)
        #expect(store.snapshot.redactionValues.contains("Bearer abc123"))
    }

    @Test func bearerTokenFileIsReadAsABearerHeader() throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token")
        try "tok\n".write(to: file, atomically: true, encoding: .utf8)
        let config = try Config.quickStart(listen: "unix:/tmp/lk.sock", upstream: "http://127.0.0.1:9000", headers: [], bearerTokenFile: file.path)
        #expect(config.listeners.first?.address == .unix(path: "/tmp/lk.sock"))
        #expect(config.credentials == ["bearer-token": .file(file.path)])
        let injection = try #require(config.routes.first?.injections.first)
        #expect(injection.target == .header("Authorization"))
        #expect(injection.template.render(token: "tok") == "Bearer tok")
        let store = try CredentialStore(config: config)
        #expect(store["bearer-token"] == "tok")
    }

    @Test func problemsAreListedPerFlagWithoutValues() {
        do {
            _ = try Config.quickStart(
                listen: "0.0.0.0:8080", upstream: "ftp://example.com",
                headers: ["Authorization Bearer hidden-secret", "Host: example.com", "X-A: hidden-secret\u{0A}x", "Authorization: hidden-one"],
                bearerTokenFile: "/nonexistent/token"
            )
            Issue.record("expected errors")
        } catch {
            #expect(error.problems.map(\.path) == ["--listen", "--upstream", "--header #1", "--header #2", "--header #3", "--bearer-token-file", "--bearer-token-file"] ||
                error.problems.map(\.path) == ["--listen", "--upstream", "--header #1", "--header #2", "--header #3", "--bearer-token-file"])
            #expect(error.problems.allSatisfy { $0.file == Config.commandLineSource })
            #expect(!error.description.contains("hidden"))
        }
    }

    @Test func bearerFileAndAuthorizationHeaderConflict() {
        #expect(throws: ConfigErrors.self) {
            try Config.quickStart(listen: nil, upstream: "https://a.example", headers: ["authorization: x"], bearerTokenFile: "/tmp/x")
        }
    }
}
