import LatchkeyConfig
import Testing
@testable import LatchkeyAuth

/// Which RFC 6749 §5.2 errors mean the configuration is wrong, and the key each names.
@Suite struct IdentityConfigMisconfigurationTests {
    func identity(_ grant: IdentityConfig.Grant = .clientCredentials, clientID: String? = "app",
                  auth: IdentityConfig.ClientAuthMethod = .clientSecretBasic) -> IdentityConfig {
        IdentityConfig(name: "podio", grant: grant, tokenURL: "https://idp.example/token", clientID: clientID, clientAuth: auth)
    }

    @Test(arguments: [
        (.clientSecretBasic, "identities.podio.client_secret"), (.clientSecretPost, "identities.podio.client_secret"),
        (.privateKeyJWT, "identities.podio.client_key_file"), (.none, "identities.podio.client_id"),
    ] as [(IdentityConfig.ClientAuthMethod, String)])
    func anUnknownClientNamesWhatItAuthenticatesWith(_ auth: IdentityConfig.ClientAuthMethod, _ key: String) {
        #expect(identity(auth: auth).keyToFix(.invalidClient) == key)
    }

    @Test func theGrantTheScopeOrTheClient() {
        let custom = identity(.custom(grantType: "app", parameters: []))
        #expect(identity().keyToFix(.unsupportedGrantType) == "identities.podio.grant")
        #expect(custom.keyToFix(.unsupportedGrantType) == "identities.podio.grant_type")
        #expect(identity().keyToFix(.invalidScope) == "identities.podio.scope")
        #expect(identity().keyToFix(.unauthorizedClient) == "identities.podio.client_id")
        // A client known only by its assertion may not use the grant.
        let assertion = identity(.jwtBearer(.init(key: .pemFile("/k.pem"), issuer: "svc")), clientID: nil, auth: .none)
        #expect(assertion.keyToFix(.unauthorizedClient) == "identities.podio.grant")
    }

    @Test(arguments: [OAuthError.Code.invalidRequest, .invalidGrant, .serverError, .temporarilyUnavailable, .accessDenied])
    func otherErrorsAreNotAboutTheConfiguration(_ code: OAuthError.Code) {
        #expect(identity().keyToFix(code) == nil)
    }

    @Test func aFailedTokenRequestIsClassified() {
        let config = identity()
        func kind(_ error: String, status: Int) -> AcquisitionFailure.Kind {
            config.acquisitionFailure(.oauth(OAuthError(error: error, status: status))).kind
        }
        #expect(kind("invalid_client", status: 401) == .misconfigured(configKey: "identities.podio.client_secret"))
        #expect(kind("invalid_scope", status: 400) == .misconfigured(configKey: "identities.podio.scope"))
        #expect(kind("invalid_grant", status: 400) == .rejected)
        // A server that is overloaded says nothing about the configuration.
        #expect(kind("invalid_client", status: 503) == .transient)
        #expect(kind("invalid_request", status: 400) == .transient)
        #expect(config.acquisitionFailure(.unexpectedStatus(status: 502, mediaType: "text/html", retryAfter: nil)).kind == .transient)
        let failure = config.acquisitionFailure(.oauth(OAuthError(error: "invalid_client", errorDescription: "Client authentication failed", status: 401)))
        #expect(failure.message == "the authorization server refused the request with invalid_client (HTTP 401): Client authentication failed")
    }
}
