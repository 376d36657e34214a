import Foundation
import LatchkeyAuth
import LatchkeyTestSupport
import LatchkeyConfig
import Testing
@testable import Latchkey

/// A misconfigured identity asks again once one of its secrets or key files changes.
@Suite struct IdentityCredentialWatchTests {
    /// A token endpoint that refuses the client, every time.
    struct RefusingSource: TokenSource {
        let canGrant = true
        let renewable = true
        func acquire(_ kind: AcquisitionKind, refreshToken: String?, now: Date) async throws(AcquisitionFailure) -> TokenSet {
            throw AcquisitionFailure(.misconfigured(configKey: "identities.svc.client_secret"), "invalid_client")
        }
    }

    struct NoEvents: AuthEventSink {
        func record(_ event: AuthEvent) {}
    }

    func misconfigured(_ name: String) async -> Identity {
        let identity = Identity(name: name, source: RefusingSource(), store: MemoryTokenStore(), events: NoEvents())
        _ = await withCheckedContinuation { continuation in identity.demand { continuation.resume(returning: $0) } }
        return identity
    }

    func isMisconfigured(_ identity: Identity) -> Bool {
        if case .misconfigured = identity.snapshot.phase { true } else { false }
    }

    @Test func aChangedSecretOrKeyFileEndsTheMisconfigurationOfItsIdentityOnly() async throws {
        let directory = try ConfigTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("svc.pem")
        try Data("key 1".utf8).write(to: key)
        let svc = IdentityConfig(name: "svc", grant: .jwtBearer(.init(key: .pemFile(key.path), issuer: "svc")),
                                 tokenURL: "https://idp.example/token", clientAuth: .clientSecretPost, clientSecret: .inline("s"))
        let other = IdentityConfig(name: "other", grant: .clientCredentials, tokenURL: "https://idp.example/token",
                                   clientAuth: .clientSecretPost, clientSecret: .inline("o"))
        let (identity, bystander) = (await misconfigured("svc"), await misconfigured("other"))
        let watch = IdentityCredentialWatch(configs: [svc, other], identities: ["svc": identity, "other": bystander])

        watch.check(reloaded: [])
        watch.check(reloaded: [IdentityConfig.secretName(identity: "other", "client_secret")])
        #expect(isMisconfigured(identity))
        #expect(!isMisconfigured(bystander))

        try Data("key 2, rotated".utf8).write(to: key)
        watch.check(reloaded: [])
        #expect(!isMisconfigured(identity))
    }
}
